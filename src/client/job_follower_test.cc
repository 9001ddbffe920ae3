// The client's following of a job, against a scripted backend and a scripted AM on a fake clock
// (a unit test of the follower's rules; the end-to-end suites follow real AMs).

#include "client/job_follower.h"

#include <signal.h>

#include <deque>
#include <sstream>

#include "client/scripted_cluster.h"
#include "config/job_spec.h"
#include "config/key_catalog.h"
#include "gtest/gtest.h"

namespace tony::client {
namespace {

constexpr const char* kApp = ScriptedCluster::kAppId;

// What the scripted AMs were asked, across every session.
struct AmLog {
  std::vector<std::string> connected;  // addresses
  std::vector<int64_t> watched_after;  // after_version of each Watch
  std::vector<std::string> kill_reasons;
  int acknowledgements = 0;
  int closed = 0;  // sessions destroyed (their channels closed)
};

// Each Watch answers from `watch`, given the call's after_version.
using WatchScript = std::function<absl::StatusOr<rpc::JobStatus>(int64_t after_version)>;

class ScriptedAm final : public AmSession {
 public:
  ScriptedAm(AmLog* log, WatchScript watch) : log_(log), watch_(std::move(watch)) {}
  ~ScriptedAm() override { ++log_->closed; }
  ScriptedAm(const ScriptedAm&) = delete;
  ScriptedAm& operator=(const ScriptedAm&) = delete;
  absl::StatusOr<rpc::JobStatus> Watch(int64_t after_version, int64_t) override {
    log_->watched_after.push_back(after_version);
    return watch_(after_version);
  }
  absl::Status Kill(const std::string& reason) override {
    log_->kill_reasons.push_back(reason);
    return absl::OkStatus();
  }
  absl::Status Acknowledge() override {
    ++log_->acknowledgements;
    return absl::OkStatus();
  }
  void Cancel() override {}

 private:
  AmLog* const log_;
  WatchScript watch_;
};

cluster::AppReport Report(cluster::AppState state, const std::string& am_address = "",
                          int attempt = 1) {
  cluster::AppReport report;
  report.state = state;
  report.am_address = am_address;
  report.attempt = attempt;
  return report;
}

cluster::AppReport EndedReport(const std::string& final_state, const std::string& last_am_address) {
  cluster::AppReport report = Report(cluster::AppState::kFinished);
  report.final_state = final_state;
  report.diagnostics = "from the backend's record";
  report.last_am_address = last_am_address;
  return report;
}

rpc::JobStatus Status(rpc::JobState state, int64_t version, bool complete = false) {
  rpc::JobStatus status;
  status.set_app_id(kApp);
  status.set_state(state);
  status.set_version(version);
  status.set_complete(complete);
  rpc::TaskStatus* task = status.add_tasks();
  task->set_type("worker");
  task->set_index(0);
  task->set_state(complete ? rpc::TASK_SUCCEEDED : rpc::TASK_RUNNING);
  return status;
}

config::JobSpec Spec(int64_t stop_grace_ms = 1000, int64_t startup_timeout_ms = 0) {
  config::Configuration conf = config::KeyCatalog::BuiltIn().Defaults();
  conf.Set("tony.containers.command", "true", config::ValueSource::ConfFlag());
  absl::StatusOr<config::JobSpec> spec = config::BuildJobSpec(conf);
  EXPECT_TRUE(spec.ok()) << spec.status();
  spec->stop_grace_ms = stop_grace_ms;
  spec->am_startup_timeout_ms = startup_timeout_ms;
  return *spec;
}

class JobFollowerTest : public ::testing::Test {
 protected:
  // A follower whose AMs all answer from `watch`; sleeping advances the fake clock.
  JobFollower& Follower(const WatchScript& watch) {
    FollowerEnv env;
    env.clock = &clock_;
    env.sleep = [this](int64_t ms) {
      sleeps_.push_back(ms);
      clock_.Advance(ms);
    };
    env.connect = [this, watch](const std::string& address) -> std::unique_ptr<AmSession> {
      am_.connected.push_back(address);
      return std::make_unique<ScriptedAm>(&am_, watch);
    };
    follower_ = std::make_unique<JobFollower>(&cluster_, std::move(env), out_);
    return *follower_;
  }

  FakeClock clock_;
  std::vector<int64_t> sleeps_;
  ScriptedCluster cluster_;
  AmLog am_;
  std::ostringstream out_;
  std::unique_ptr<JobFollower> follower_;
};

TEST_F(JobFollowerTest, TheAmsAddressIsPolledLessAndLessOftenThenWatchedUntilAcknowledged) {
  for (int i = 0; i < 8; ++i) cluster_.reports.push_back(Report(cluster::AppState::kSubmitted));
  cluster_.reports.push_back(Report(cluster::AppState::kRunning, "am-host:7000"));
  JobFollower& follower = Follower([](int64_t after) -> absl::StatusOr<rpc::JobStatus> {
    return after < 2 ? Status(rpc::JOB_RUNNING, after + 1)
                     : Status(rpc::JOB_SUCCEEDED, 3, /*complete=*/true);
  });
  const rpc::JobStatus final_status = follower.Follow(kApp, Spec());

  EXPECT_EQ(final_status.state(), rpc::JOB_SUCCEEDED);
  EXPECT_TRUE(final_status.complete());
  EXPECT_EQ(sleeps_, (std::vector<int64_t>{20, 40, 80, 160, 320, 500, 500, 500}));
  EXPECT_EQ(am_.connected, std::vector<std::string>{"am-host:7000"});
  EXPECT_EQ(am_.watched_after, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(am_.acknowledgements, 1);
  // Its connection to the AM is closed at once, before the follower goes: an AM shutting down
  // waits for its clients' connections (up to 2 s), and `tony submit` waits for the AM to end.
  EXPECT_EQ(am_.closed, 1);
  // The progress line is printed once: it did not change between versions 1 and 2.
  const std::string out = out_.str();
  EXPECT_EQ(out.find("worker: 1 running"), out.rfind("worker: 1 running")) << out;
  EXPECT_NE(out.find("worker: 1 running"), std::string::npos) << out;
}

TEST_F(JobFollowerTest, AJobThatEndedBeforeItsAmWasSeenIsReadFromTheWaitingAmAndAcknowledged) {
  cluster_.reports.push_back(EndedReport("SUCCEEDED", "am-host:7000"));
  JobFollower& follower = Follower([](int64_t) -> absl::StatusOr<rpc::JobStatus> {
    rpc::JobStatus status = Status(rpc::JOB_SUCCEEDED, 9, /*complete=*/true);
    status.set_diagnostics("from the AM");
    return status;
  });
  const rpc::JobStatus final_status = follower.Follow(kApp, Spec());

  EXPECT_EQ(final_status.diagnostics(), "from the AM");
  EXPECT_EQ(am_.connected, std::vector<std::string>{"am-host:7000"});
  // Without this the AM would wait for tony.am.wait-client-signal-stop-timeout-sec.
  EXPECT_EQ(am_.acknowledgements, 1);
}

TEST_F(JobFollowerTest, AJobWhoseAmIsGoneIsReadFromTheBackendsRecordAfterOneTry) {
  cluster_.reports.push_back(EndedReport("FAILED", "am-host:7000"));
  JobFollower& follower = Follower([](int64_t) -> absl::StatusOr<rpc::JobStatus> {
    return absl::UnavailableError("connection refused");
  });
  const rpc::JobStatus final_status = follower.Follow(kApp, Spec());

  EXPECT_EQ(final_status.state(), rpc::JOB_FAILED);
  EXPECT_TRUE(final_status.complete());
  EXPECT_EQ(am_.connected.size(), 1u);
  EXPECT_EQ(am_.watched_after.size(), 1u);
}

TEST_F(JobFollowerTest, AnInterruptKillsThroughTheAmAndByForceWhenTheGraceHasPassed) {
  cluster_.reports.push_back(Report(cluster::AppState::kRunning, "am-host:7000"));
  JobFollower* follower = nullptr;
  int watches = 0;
  follower = &Follower([&](int64_t) -> absl::StatusOr<rpc::JobStatus> {
    // The AM holds each call for its max wait; it never ends the job.
    clock_.Advance(2000);
    if (++watches == 2) {
      follower->Interrupt(SIGINT);
      return absl::CancelledError("interrupted");
    }
    return Status(rpc::JOB_RUNNING, 1);
  });
  const int64_t start = clock_.NowMs();
  const rpc::JobStatus final_status = follower->Follow(kApp, Spec(/*stop_grace_ms=*/3000));

  EXPECT_EQ(final_status.state(), rpc::JOB_KILLED);
  EXPECT_TRUE(final_status.complete());
  EXPECT_EQ(final_status.diagnostics(),
            "killed by the user; the AM did not stop in time and was killed");
  EXPECT_EQ(am_.kill_reasons, std::vector<std::string>{"killed by the user (signal 2)"});
  EXPECT_EQ(cluster_.kills, std::vector<bool>{true}) << "only the last resort went to the backend";
  // Killed by force once the grace and 10 s had passed after the interrupt, not before.
  EXPECT_GT(clock_.NowMs() - start, 4000 + 3000 + 10000);
  EXPECT_LE(clock_.NowMs() - start, 4000 + 3000 + 10000 + 2000);
  EXPECT_NE(out_.str().find("tony: interrupted; stopping " + std::string(kApp)), std::string::npos);
  EXPECT_EQ(follower->interrupted(), SIGINT);
}

TEST_F(JobFollowerTest, AnInterruptBeforeTheAmListensGoesToTheBackend) {
  cluster_.reports.push_back(Report(cluster::AppState::kSubmitted));
  cluster_.reports.push_back(EndedReport("KILLED", ""));
  JobFollower& follower = Follower([](int64_t) -> absl::StatusOr<rpc::JobStatus> {
    ADD_FAILURE() << "no AM was reported";
    return absl::InternalError("unreachable");
  });
  follower.Interrupt(SIGTERM);
  const rpc::JobStatus final_status = follower.Follow(kApp, Spec());

  EXPECT_EQ(final_status.state(), rpc::JOB_KILLED);
  EXPECT_EQ(cluster_.kills, std::vector<bool>{false});
  EXPECT_TRUE(am_.connected.empty());
}

TEST_F(JobFollowerTest, ANewAmAttemptIsFollowedFromItsFirstVersion) {
  cluster_.reports.push_back(Report(cluster::AppState::kRunning, "am-host:7000", 1));
  // Asked after the first AM stopped answering: a second attempt, not yet listening.
  cluster_.reports.push_back(Report(cluster::AppState::kRunning, "", 2));
  cluster_.reports.push_back(Report(cluster::AppState::kRunning, "am-host:7001", 2));
  int watches = 0;
  JobFollower& follower = Follower([&](int64_t after) -> absl::StatusOr<rpc::JobStatus> {
    ++watches;
    if (watches == 1) return Status(rpc::JOB_RUNNING, 5);
    if (watches == 2) return absl::UnavailableError("the AM is gone");
    return Status(rpc::JOB_SUCCEEDED, after + 1, /*complete=*/true);
  });
  const rpc::JobStatus final_status = follower.Follow(kApp, Spec());

  EXPECT_EQ(final_status.state(), rpc::JOB_SUCCEEDED);
  EXPECT_EQ(am_.connected, (std::vector<std::string>{"am-host:7000", "am-host:7001"}));
  EXPECT_EQ(am_.watched_after, (std::vector<int64_t>{0, 5, 0}));
  const std::string out = out_.str();
  EXPECT_NE(out.find("tony: the AM at am-host:7000 ended without a final status (attempt 1)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("tony: AM attempt 2 runs the job again"), std::string::npos) << out;
  EXPECT_NE(out.find("tony: AM attempt 2 listens at am-host:7001"), std::string::npos) << out;
}

// An AM that outlived its attempt says the job failed; the cluster runs attempt 2, whose AM the
// client follows, and whose word is the job's.
TEST_F(JobFollowerTest, AStaleAmsFinalStatusIsNotTakenAndTheCurrentAttemptIsFollowed) {
  cluster_.reports.push_back(Report(cluster::AppState::kRunning, "am-host:7000", 1));
  cluster_.reports.push_back(Report(cluster::AppState::kRunning, "am-host:7001", 2));
  int watches = 0;
  JobFollower& follower = Follower([&](int64_t after) -> absl::StatusOr<rpc::JobStatus> {
    ++watches;
    if (watches == 1) return Status(rpc::JOB_FAILED, 9, /*complete=*/true);
    return Status(rpc::JOB_SUCCEEDED, after + 1, /*complete=*/true);
  });
  const rpc::JobStatus final_status = follower.Follow(kApp, Spec());
  EXPECT_EQ(final_status.state(), rpc::JOB_SUCCEEDED);
  EXPECT_EQ(am_.connected, (std::vector<std::string>{"am-host:7000", "am-host:7001"}));
  EXPECT_EQ(am_.acknowledgements, 1) << "only the current attempt's AM";
  EXPECT_NE(out_.str().find("tony: the AM at am-host:7000 (attempt 1) is no longer the "
                            "application's current attempt; attempt 2 decides"),
            std::string::npos)
      << out_.str();
}

TEST_F(JobFollowerTest, AnAmThatRefusesTheClientFailsTheJobWithItsReason) {
  cluster_.reports.push_back(Report(cluster::AppState::kRunning, "am-host:7000"));
  JobFollower& follower = Follower([](int64_t) -> absl::StatusOr<rpc::JobStatus> {
    return absl::UnauthenticatedError("bad credential");
  });
  const rpc::JobStatus final_status = follower.Follow(kApp, Spec());

  EXPECT_EQ(final_status.state(), rpc::JOB_FAILED);
  EXPECT_EQ(final_status.diagnostics(), "the AM refused the client: bad credential");
  EXPECT_EQ(am_.acknowledgements, 0);
}

TEST_F(JobFollowerTest, TransientErrorsAreRetriedWhileTheBackendSaysTheAmRuns) {
  cluster_.reports.push_back(Report(cluster::AppState::kRunning, "am-host:7000"));
  int watches = 0;
  JobFollower& follower = Follower([&](int64_t) -> absl::StatusOr<rpc::JobStatus> {
    if (++watches <= 3) return absl::DeadlineExceededError("slow network");
    return Status(rpc::JOB_SUCCEEDED, 1, /*complete=*/true);
  });
  const rpc::JobStatus final_status = follower.Follow(kApp, Spec());

  EXPECT_EQ(final_status.state(), rpc::JOB_SUCCEEDED);
  EXPECT_EQ(sleeps_, (std::vector<int64_t>{100, 100, 100}));
  EXPECT_EQ(am_.connected.size(), 1u) << "the same AM is asked again";
}

TEST_F(JobFollowerTest, AnAmThatStopsAnsweringIsSaidOnceAndWhenItAnswersAgain) {
  for (int i = 0; i < 20; ++i) {
    cluster_.reports.push_back(Report(cluster::AppState::kRunning, "am-host:7000"));
  }
  int watches = 0;
  JobFollower& follower = Follower([&](int64_t) -> absl::StatusOr<rpc::JobStatus> {
    ++watches;
    if (watches == 1) return Status(rpc::JOB_RUNNING, 1);
    if (watches <= 9) {  // stopped: each call waits out its deadline
      clock_.Advance(2000);
      return absl::DeadlineExceededError("Deadline Exceeded");
    }
    if (watches == 10) return Status(rpc::JOB_RUNNING, 2);
    return Status(rpc::JOB_SUCCEEDED, 3, /*complete=*/true);
  });
  const rpc::JobStatus final_status = follower.Follow(kApp, Spec());
  EXPECT_EQ(final_status.state(), rpc::JOB_SUCCEEDED);
  const std::string out = out_.str();
  const size_t said = out.find("tony: the AM at am-host:7000 has not answered for 10 s");
  EXPECT_NE(said, std::string::npos) << out;
  EXPECT_EQ(out.find("has not answered", out.find('\n', said)), std::string::npos)
      << "said once: " << out;
  EXPECT_NE(out.find("tony: the AM at am-host:7000 answers again"), std::string::npos) << out;
}

TEST_F(JobFollowerTest, AnAmThatDoesNotStartInTimeFailsTheJobAndIsKilled) {
  cluster_.reports.push_back(Report(cluster::AppState::kSubmitted));
  JobFollower& follower = Follower(
      [](int64_t) -> absl::StatusOr<rpc::JobStatus> { return absl::InternalError("unreachable"); });
  const int64_t start = clock_.NowMs();
  const rpc::JobStatus final_status =
      follower.Follow(kApp, Spec(/*stop_grace_ms=*/1000, /*startup_timeout_ms=*/5000));

  EXPECT_EQ(final_status.state(), rpc::JOB_FAILED);
  EXPECT_EQ(final_status.diagnostics(),
            "the AM did not start within 5000 ms (tony.am.startup-timeout)");
  EXPECT_EQ(cluster_.kills, std::vector<bool>{true});
  EXPECT_GT(clock_.NowMs() - start, 5000);
  EXPECT_LE(clock_.NowMs() - start, 5500);
}

}  // namespace
}  // namespace tony::client
