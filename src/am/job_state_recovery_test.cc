// An AM attempt that adopts the running tasks of an earlier one: JobStateMachine::Recover from the
// history the earlier attempt wrote (RecoverFromHistory), as HistoryRecorder writes it.

#include <gtest/gtest.h>

#include <map>

#include "am/history_recorder.h"
#include "am/job_recovery.h"
#include "am/job_state_fixture.h"

namespace tony::am {
namespace {

const TaskRef kW0{"worker", 0};
const TaskRef kW1{"worker", 1};

class RecoveryTest : public JobStateTest {
 protected:
  void InitWorkers(std::vector<std::pair<std::string, std::string>> more = {}) {
    std::vector<std::pair<std::string, std::string>> settings = {
        {"tony.worker.instances", "2"}, {"tony.worker.restart-backoff-ms", "0"}};
    settings.insert(settings.end(), more.begin(), more.end());
    Init(settings);
  }
  // The first attempt dies: the second one's state machine takes the job up from the history
  // (every transition and notice so far, as the history's lines), with `live` containers of the
  // first attempt still running. Returns the second attempt's first actions.
  Actions SecondAttempt(const std::map<std::string, std::string>& live) {
    recovered_ = Replay(job_->TakeTransitions(), /*decided=*/false);
    clock_.Advance(5000);
    return Recover(live);
  }
  // What the earlier attempt's history says after `transitions`, its notices and, if `decided`,
  // its decision, as HistoryRecorder writes them (`opened`: with the AM's start first).
  RecoveredJob Replay(const std::vector<TaskTransition>& transitions, bool decided,
                      bool opened = false) {
    HistoryRecorderOptions options;
    options.app_id = "application_1_0001";
    HistoryRecorder recorder(options, &job_->spec(), &clock_);
    if (opened) recorder.Open("", rpc::JobStatus());
    recorder.RecordChanges(transitions, job_->TakeNotices());
    if (decided) recorder.RecordDecision(job_->state(), job_->diagnostics());
    const auto& events = recorder.live().events;
    return RecoverFromHistory(std::vector<history::HistoryEvent>(events.begin(), events.end()));
  }
  // The next attempt's state machine takes recovered_ up with `live` containers.
  Actions Recover(const std::map<std::string, std::string>& live) {
    job_ = std::make_unique<JobStateMachine>(job_->spec(), &clock_);
    return job_->Recover(recovered_, live);
  }
  static std::map<std::string, std::string> Live(std::initializer_list<TaskRef> tasks) {
    std::map<std::string, std::string> live;
    for (const TaskRef& task : tasks) live["c_" + task.ToString()] = "/logs/c_" + task.ToString();
    return live;
  }

  RecoveredJob recovered_;
};

TEST_F(RecoveryTest, RunningTasksAreAdoptedInTheirContainersAndEndedOnesStayEnded) {
  InitWorkers();
  StartAll();
  ASSERT_EQ(State(kW0), TaskState::kRunning);
  Exit(kW1, 0);
  ASSERT_EQ(State(kW1), TaskState::kSucceeded);

  const Actions actions = SecondAttempt(Live({kW0}));
  EXPECT_TRUE(actions.empty());  // nothing asked for, nothing stopped
  EXPECT_EQ(State(kW1), TaskState::kSucceeded);
  EXPECT_EQ(job_->Find(kW1)->exit_code, 0);
  EXPECT_EQ(State(kW0), TaskState::kRunning);
  EXPECT_EQ(job_->Find(kW0)->container_id, "c_worker:0");
  EXPECT_EQ(job_->Find(kW0)->log_dir, "/logs/c_worker:0");
  EXPECT_EQ(job_->Find(kW0)->port, 1000);
  EXPECT_EQ(job_->Find(kW0)->attempt, 0);
  EXPECT_TRUE(job_->ClusterSpecReleased(kW0));
  // Its executor heartbeats on with the new attempt, whose heartbeat deadline starts now.
  clock_.Advance(job_->spec().heartbeat_interval_ms);
  EXPECT_FALSE(job_->OnHeartbeat(kW0, "c_worker:0", 1 << 20));
  EXPECT_EQ(Count<StopContainer>(job_->OnTick()), 0);
  // Nothing of the adoption is recorded as a transition: the history has it all already.
  EXPECT_TRUE(job_->TakeTransitions().empty());
  Exit(kW0, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
}

TEST_F(RecoveryTest, ATaskWhoseContainerEndedWhileNoAmRanRestartsWithoutUsingItsBudget) {
  InitWorkers({{"tony.worker.max-restarts", "0"}});
  StartAll();
  const Actions actions = SecondAttempt(Live({kW0}));
  EXPECT_EQ(State(kW0), TaskState::kRunning);
  EXPECT_FALSE(job_->decided());
  EXPECT_EQ(State(kW1), TaskState::kRequested);
  EXPECT_EQ(job_->Find(kW1)->attempt, 1);
  EXPECT_EQ(job_->Find(kW1)->restarts_used, 0);
  ASSERT_EQ(job_->Find(kW1)->previous_attempts.size(), 1u);
  EXPECT_EQ(job_->Find(kW1)->previous_attempts[0].exit_code, kExitAborted);
  EXPECT_EQ(Count<RequestContainer>(actions), 1);
}

TEST_F(RecoveryTest, ContainersOfEarlierAttemptsThatNoTaskClaimsAreStopped) {
  InitWorkers();
  StartAll();
  std::map<std::string, std::string> live = Live({kW0, kW1});
  live["c_stray"] = "/logs/c_stray";
  const Actions actions = SecondAttempt(live);
  ASSERT_EQ(Count<StopContainer>(actions), 1);
  for (const Action& action : actions) {
    if (const auto* stop = std::get_if<StopContainer>(&action)) {
      EXPECT_EQ(stop->container_id, "c_stray");
    }
  }
}

TEST_F(RecoveryTest, TasksThatWaitedForTheirClusterSpecRegisterAgainAndTheGangFormsAnew) {
  InitWorkers();
  Allocate(kW0);
  Allocate(kW1);
  Register(kW0, 1000);  // worker:1 had not registered when the AM died
  SecondAttempt(Live({kW0, kW1}));
  EXPECT_EQ(State(kW0), TaskState::kAllocated);
  EXPECT_EQ(State(kW1), TaskState::kAllocated);
  EXPECT_FALSE(job_->ClusterSpecReleased(kW0));
  EXPECT_EQ(Count<SendClusterSpec>(Register(kW0, 1000)), 0);
  EXPECT_EQ(Count<SendClusterSpec>(Register(kW1, 1001)), 2);
  EXPECT_EQ(job_->ClusterSpec().at("worker"), (std::vector<std::string>{"h:1000", "h:1001"}));
}

TEST_F(RecoveryTest, RestartsTheEarlierAttemptUsedStayUsed) {
  InitWorkers({{"tony.worker.max-restarts", "1"}});
  StartAll();
  Exit(kW0, 1);  // restarted: its one restart is used
  ASSERT_EQ(job_->Find(kW0)->attempt, 1);
  Allocate(kW0);
  Register(kW0, 2000);
  ASSERT_EQ(State(kW0), TaskState::kRunning);
  SecondAttempt(Live({kW0, kW1}));
  EXPECT_EQ(job_->Find(kW0)->attempt, 1);
  EXPECT_EQ(job_->Find(kW0)->restarts_used, 1);
  EXPECT_EQ(job_->Find(kW0)->port, 2000);
  ASSERT_EQ(job_->Find(kW0)->previous_attempts.size(), 1u);
  EXPECT_EQ(job_->Find(kW0)->previous_attempts[0].exit_code, 1);
  Exit(kW0, 1);
  EXPECT_EQ(job_->state(), JobState::kFailed);
}

TEST_F(RecoveryTest, TasksNeverAskedForAreAskedForNow) {
  InitWorkers();
  // The first attempt died before any transition reached its history.
  job_->TakeTransitions();
  const Actions actions = SecondAttempt({});
  EXPECT_EQ(Count<RequestContainer>(actions), 2);
  EXPECT_EQ(State(kW0), TaskState::kRequested);
  EXPECT_EQ(State(kW1), TaskState::kRequested);
}

TEST_F(RecoveryTest, ATaskTheHistoryShowsWaitingForItsSpecButThatHeartbeatsIsRunning) {
  InitWorkers();
  StartAll();
  // The earlier attempt released the spec and died before TASK_STARTED reached its history.
  std::vector<TaskTransition> transitions = job_->TakeTransitions();
  std::erase_if(transitions, [](const TaskTransition& t) { return t.to == TaskState::kRunning; });
  recovered_ = Replay(transitions, /*decided=*/false);
  Recover(Live({kW0, kW1}));
  ASSERT_EQ(State(kW0), TaskState::kAllocated);
  EXPECT_FALSE(job_->OnHeartbeat(kW0, "c_worker:0", 1 << 20));
  EXPECT_EQ(State(kW0), TaskState::kRunning);
  EXPECT_TRUE(job_->ClusterSpecReleased(kW1) || State(kW1) == TaskState::kAllocated);
  // worker:1 registers again: the spec went out before, so it gets it at once.
  EXPECT_EQ(Count<SendClusterSpec>(Register(kW1, 1001)), 1);
  EXPECT_EQ(State(kW1), TaskState::kRunning);
}

TEST_F(RecoveryTest, AJobTheEarlierAttemptDecidedIsDecidedAlikeAndItsTasksStopped) {
  InitWorkers();
  StartAll();
  Actions killed = job_->Kill("killed by the user");
  ASSERT_EQ(Count<StopContainer>(killed), 2);
  // The AM records the decision at once (ApplicationMaster::Execute); it dies in the grace period.
  recovered_ = Replay(job_->TakeTransitions(), /*decided=*/true);
  const Actions actions = Recover(Live({kW0, kW1}));
  EXPECT_EQ(job_->state(), JobState::kKilled);
  EXPECT_EQ(job_->diagnostics(), "killed by the user");
  EXPECT_EQ(Count<StopContainer>(actions), 2);
  EXPECT_EQ(Count<RequestContainer>(actions), 0);
  // Their ends restart nothing.
  Exit(kW0, 143);
  EXPECT_EQ(job_->state(), JobState::kKilled);
  EXPECT_EQ(Count<RequestContainer>(job_->OnContainerCompleted("c_worker:1", 143, "", false)), 0);
}

TEST_F(RecoveryTest, TheApplicationTimeoutCountsFromTheFirstAttempt) {
  InitWorkers({{"tony.application.timeout", "60000"}});
  StartAll();
  recovered_ = Replay(job_->TakeTransitions(), /*decided=*/false, /*opened=*/true);  // AM_STARTED
  clock_.Advance(50000);
  Recover(Live({kW0, kW1}));
  clock_.Advance(9000);
  job_->OnHeartbeat(kW0, "c_worker:0", 1);
  job_->OnHeartbeat(kW1, "c_worker:1", 1);
  job_->OnTick();
  EXPECT_FALSE(job_->decided());
  clock_.Advance(1000);
  job_->OnTick();
  EXPECT_EQ(job_->state(), JobState::kFailed) << job_->diagnostics();
}

class GangRecoveryTest : public RecoveryTest {
 protected:
  void InitGang() {
    InitWorkers({{"tony.application.framework", "pytorch"}, {"tony.worker.max-restarts", "2"}});
    StartAll();
  }
};

// worker:1 failed and was restarted in its container; the AM died before worker:0 (told to stop
// for the gang's restart with its next heartbeat) had ended: the next attempt stops it.
TEST_F(GangRecoveryTest, AGangRestartTheEarlierAttemptBeganIsCarriedThrough) {
  InitGang();
  ASSERT_TRUE(job_->Find(kW0)->gang);
  job_->OnExecutorResult(kW1, "c_worker:1", 1, "boom");  // its executor waits
  ASSERT_EQ(State(kW1), TaskState::kAllocated);
  ASSERT_EQ(job_->Find(kW1)->attempt, 1);
  ASSERT_FALSE(job_->Find(kW0)->gang_restart.empty());
  SecondAttempt(Live({kW0, kW1}));
  EXPECT_EQ(State(kW0), TaskState::kRunning);
  EXPECT_FALSE(job_->Find(kW0)->gang_restart.empty());
  EXPECT_TRUE(job_->Find(kW1)->awaiting_in_place);
  EXPECT_TRUE(job_->OnHeartbeat(kW0, "c_worker:0", 1));  // told to stop
  // worker:1's executor reports its old attempt's end again: the new AM had it already.
  EXPECT_TRUE(job_->OnExecutorResult(kW1, "c_worker:1", 1, "boom", false, false, 0).empty());
  EXPECT_EQ(State(kW1), TaskState::kAllocated);
  EXPECT_EQ(job_->Find(kW1)->attempt, 1);
  // worker:0 ends for the restart and runs again in its container; the gang forms anew.
  job_->OnExecutorResult(kW0, "c_worker:0", 143, "");
  EXPECT_EQ(State(kW0), TaskState::kAllocated);
  EXPECT_EQ(job_->Find(kW0)->attempt, 1);
  EXPECT_EQ(job_->Find(kW1)->restarts_used, 1);
  EXPECT_EQ(Count<SendClusterSpec>(Register(kW0, 2000)), 0);
  clock_.Advance(60000);  // past any backoff
  job_->OnTick();
  EXPECT_EQ(Count<SendClusterSpec>(Register(kW1, 2001)), 2);
  EXPECT_FALSE(job_->decided());
}

TEST(RecoverFromHistoryTest, CountsAmAttemptsGangRestartsAndTheJobsEnd) {
  std::vector<history::HistoryEvent> events(4);
  events[0].kind = "AM_STARTED";
  events[1].kind = "GANG_RESTARTED";
  events[1].task = "worker:0";
  events[2].kind = "AM_STARTED";
  events[3].kind = "APPLICATION_FINISHED";
  const RecoveredJob job = RecoverFromHistory(events);
  EXPECT_EQ(job.am_attempts, 2);
  EXPECT_EQ(job.gang_restarts, 1);
  EXPECT_TRUE(job.ended);
}

TEST_F(RecoveryTest, AnElasticGroupThatWasDoneNeedsNoReplacementInTheNextAttempt) {
  Init({{"tony.application.framework", "pytorch"},
        {"tony.worker.instances", "3"},
        {"tony.worker.min-instances", "1"},
        {"tony.worker.max-restarts", "1"},
        {"tony.worker.restart-backoff-ms", "10000"}});
  StartAll();
  const TaskRef w2{"worker", 2};
  Exit(w2, 137);  // its replacement waits out the backoff
  Exit(kW0, 0);
  // The AM died after worker:0's success was written, before worker:2's stop was.
  std::vector<TaskTransition> transitions = job_->TakeTransitions();
  std::erase_if(transitions, [&](const TaskTransition& t) {
    return t.task == w2 && t.to == TaskState::kFinished;
  });
  recovered_ = Replay(transitions, /*decided=*/false);
  clock_.Advance(20000);
  const Actions actions = Recover(Live({kW1}));
  EXPECT_EQ(Count<RequestContainer>(actions), 0) << "the group was done";
  EXPECT_EQ(State(w2), TaskState::kFinished);
  EXPECT_EQ(Count<RequestContainer>(job_->OnTick()), 0);
  Exit(kW1, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
}

const TaskRef kPre{config::kPreprocessType, 0};

TEST_F(RecoveryTest, ALaterAttemptKeepsThePreprocessingJobsParametersAndStage) {
  Init({{"tony.worker.instances", "1"}, {"tony.application.enable-preprocess", "true"}});
  Allocate(kPre);
  Register(kPre, 100);
  job_->SetModelParams(kPre, "c_" + kPre.ToString(), 0, "--epochs 3");
  Exit(kPre, 0);
  ASSERT_EQ(State({"worker", 0}), TaskState::kRequested);
  const Actions actions = SecondAttempt({});
  EXPECT_EQ(job_->model_params(), "--epochs 3");
  EXPECT_EQ(State(kPre), TaskState::kSucceeded);
  EXPECT_EQ(State({"worker", 0}), TaskState::kRequested);
  EXPECT_EQ(Count<RequestContainer>(actions), 1);
}

TEST_F(RecoveryTest, ARunningPreprocessingJobIsAdoptedAndTheOthersWaitOn) {
  Init({{"tony.worker.instances", "2"}, {"tony.application.enable-preprocess", "true"}});
  Allocate(kPre);
  Register(kPre, 100);
  const Actions actions = SecondAttempt(Live({kPre}));
  EXPECT_EQ(Count<RequestContainer>(actions), 0);
  EXPECT_EQ(State(kPre), TaskState::kRunning);
  EXPECT_EQ(State({"worker", 1}), TaskState::kNew);
  EXPECT_EQ(Count<RequestContainer>(Exit(kPre, 0)), 2);
}

}  // namespace
}  // namespace tony::am
