#include "client/job_follower.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <ostream>
#include <thread>

#include "client/job_control.h"
#include "client/job_report.h"
#include "common/strings.h"
#include "grpcpp/grpcpp.h"
#include "rpc/auth.h"
#include "rpc/tony.grpc.pb.h"

namespace tony::client {
namespace {

// How long the AM may hold a WatchJob call before answering with the current status, and how
// long the client waits for any answer at all.
constexpr int64_t kWatchMaxWaitMs = 2000;
constexpr int64_t kWatchDeadlineMs = 10000;
// The AM's address is polled from 20 ms, doubling up to 500 ms (a queued YARN application may
// wait for minutes); a transient error is retried after 100 ms.
constexpr int64_t kFirstAddressPollMs = 20;
constexpr int64_t kMaxAddressPollMs = 500;
constexpr int64_t kRetryAfterErrorMs = 100;
// How long an AM that the backend says runs may leave the client unanswered before it says so.
constexpr int64_t kSilentAmNoticeMs = 10000;

std::chrono::system_clock::time_point DeadlineIn(int64_t ms) {
  return std::chrono::system_clock::now() + std::chrono::milliseconds(ms);
}

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

class GrpcAmSession final : public AmSession {
 public:
  GrpcAmSession(const std::string& address, const rpc::JobCredentials& credentials)
      : auth_(rpc::JobAuthValue(credentials.secret)),
        stub_(rpc::TonyAm::NewStub(rpc::AmChannel(address, credentials.am_cert_pem))) {}

  absl::StatusOr<rpc::JobStatus> Watch(int64_t after_version, int64_t max_wait_ms) override {
    rpc::WatchJobRequest request;
    request.set_after_version(after_version);
    request.set_max_wait_ms(static_cast<int32_t>(std::min<int64_t>(max_wait_ms, INT32_MAX)));
    rpc::JobStatus status;
    grpc::ClientContext context;
    rpc::AttachAuth(&context, auth_);
    context.set_deadline(DeadlineIn(kWatchDeadlineMs));
    {
      MutexLock lock(mu_);
      if (cancelled_) {
        cancelled_ = false;  // the next Watch follows the job's end again
        return absl::CancelledError("interrupted");
      }
      in_flight_ = &context;
    }
    grpc::Status result = stub_->WatchJob(&context, request, &status);
    {
      MutexLock lock(mu_);
      in_flight_ = nullptr;
    }
    if (!result.ok()) return FromGrpc(result);
    return status;
  }

  absl::Status Kill(const std::string& reason) override {
    rpc::KillJobRequest request;
    request.set_reason(reason);
    rpc::KillJobResponse response;
    grpc::ClientContext context;
    rpc::AttachAuth(&context, auth_);
    context.set_deadline(DeadlineIn(5000));
    return FromGrpc(stub_->KillJob(&context, request, &response));
  }

  absl::Status Acknowledge() override {
    rpc::AcknowledgeFinalRequest request;
    rpc::AcknowledgeFinalResponse response;
    grpc::ClientContext context;
    rpc::AttachAuth(&context, auth_);
    context.set_deadline(DeadlineIn(2000));
    return FromGrpc(stub_->AcknowledgeFinal(&context, request, &response));
  }

  void Cancel() override {
    MutexLock lock(mu_);
    cancelled_ = true;
    if (in_flight_ != nullptr) in_flight_->TryCancel();
  }

 private:
  const std::string auth_;
  const std::unique_ptr<rpc::TonyAm::Stub> stub_;
  Mutex mu_;
  grpc::ClientContext* in_flight_ TONY_GUARDED_BY(mu_) = nullptr;
  bool cancelled_ TONY_GUARDED_BY(mu_) = false;  // a Cancel between two Watch calls ends the next
};

bool IsFinal(const cluster::AppReport& report) { return !report.final_state.empty(); }

}  // namespace

AmConnector GrpcAmConnector(const rpc::JobCredentials& credentials) {
  return [credentials](const std::string& address) -> std::unique_ptr<AmSession> {
    return std::make_unique<GrpcAmSession>(address, credentials);
  };
}

FollowerEnv SystemFollowerEnv(const rpc::JobCredentials& credentials) {
  FollowerEnv env;
  env.clock = SystemClock::Get();
  env.sleep = [](int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  env.connect = GrpcAmConnector(credentials);
  return env;
}

JobFollower::JobFollower(cluster::ClusterClient* cluster, FollowerEnv env, std::ostream& out)
    : cluster_(cluster), env_(std::move(env)), out_(out) {}

void JobFollower::Interrupt(int sig) {
  interrupted_ = sig;
  MutexLock lock(mu_);
  if (session_) session_->Cancel();
}

void JobFollower::SetSession(std::unique_ptr<AmSession> session) {
  last_answer_ms_ = env_.clock->NowMs();
  said_silent_ = false;
  std::shared_ptr<AmSession> shared = std::move(session);
  MutexLock lock(mu_);
  session_ = std::move(shared);
}

rpc::JobStatus JobFollower::Follow(const std::string& app_id, const config::JobSpec& spec) {
  last_ = rpc::JobStatus();
  last_.set_app_id(app_id);
  started_ms_ = env_.clock->NowMs();
  // A later AM attempt adopts the running tasks.
  adopts_tasks_ = spec.am_retry_count > 0;
  while (true) {
    if (HandleInterrupt(app_id, spec) == Step::kDone) return last_;
    const Step step = session_ ? Watch(app_id) : FindAm(app_id, spec);
    if (step == Step::kDone) return last_;
  }
}

JobFollower::Step JobFollower::HandleInterrupt(const std::string& app_id,
                                               const config::JobSpec& spec) {
  if (interrupted_ != 0 && !kill_sent_) {
    out_ << "tony: interrupted; stopping " << app_id << "\n" << std::flush;
    kill_sent_ = true;
    kill_deadline_ms_ = env_.clock->NowMs() + spec.stop_grace_ms + 10000;
    const std::string reason = StrCat("killed by the user (signal ", interrupted_.load(), ")");
    const bool asked = session_ && session_->Kill(reason).ok();
    if (!asked) (void)cluster_->Kill(app_id, /*force=*/false);
  }
  if (kill_sent_ && env_.clock->NowMs() > kill_deadline_ms_) {
    (void)cluster_->Kill(app_id, /*force=*/true);
    last_.set_state(rpc::JOB_KILLED);
    last_.set_complete(true);
    last_.set_diagnostics("killed by the user; the AM did not stop in time and was killed");
    return Step::kDone;
  }
  return Step::kContinue;
}

JobFollower::Step JobFollower::FindAm(const std::string& app_id, const config::JobSpec& spec) {
  absl::StatusOr<cluster::AppReport> report = cluster_->GetReport(app_id);
  if (report.ok() && IsFinal(*report)) {
    // A short job can end before this client first saw its AM listening. The AM waits for its
    // client (tony.am.wait-client-signal-stop-timeout): ask it once for the whole status (every
    // task) before settling for the backend's report.
    if (!asked_ended_am_ && !report->last_am_address.empty()) {
      asked_ended_am_ = true;
      am_address_ = report->last_am_address;
      attempt_ = std::max(report->attempt, 1);
      SetSession(env_.connect(am_address_));
      return Step::kContinue;
    }
    last_ = StatusFromReport(app_id, *report, last_);
    return Step::kDone;
  }
  if (report.ok() && !report->am_address.empty()) {
    am_address_ = report->am_address;
    if (attempt_ > 0 && report->attempt > attempt_) {
      out_ << "tony: AM attempt " << report->attempt << " listens at " << am_address_ << "\n"
           << std::flush;
    } else if (!report->tracking_url.empty() && report->tracking_url != "N/A") {
      out_ << "tony: tracking URL " << report->tracking_url << "\n" << std::flush;
    }
    attempt_ = std::max(report->attempt, 1);
    SetSession(env_.connect(am_address_));
    return Step::kContinue;
  }
  if (spec.am_startup_timeout_ms > 0 &&
      env_.clock->NowMs() - started_ms_ > spec.am_startup_timeout_ms) {
    (void)cluster_->Kill(app_id, /*force=*/true);
    last_.set_state(rpc::JOB_FAILED);
    last_.set_complete(true);
    last_.set_diagnostics(StrCat("the AM did not start within ", spec.am_startup_timeout_ms,
                                 " ms (tony.am.startup-timeout)"));
    return Step::kDone;
  }
  // The backend has no way to push the AM's address; ask again shortly, then less often.
  env_.sleep(address_poll_ms_);
  address_poll_ms_ = std::min(address_poll_ms_ * 2, kMaxAddressPollMs);
  return Step::kContinue;
}

JobFollower::Step JobFollower::Watch(const std::string& app_id) {
  absl::StatusOr<rpc::JobStatus> status = session_->Watch(last_.version(), kWatchMaxWaitMs);
  if (status.ok()) {
    if (said_silent_) {
      out_ << "tony: the AM at " << am_address_ << " answers again\n" << std::flush;
      said_silent_ = false;
    }
    last_answer_ms_ = env_.clock->NowMs();
    if (status->complete() && Superseded(app_id)) return Step::kContinue;
    last_ = *std::move(status);
    ShowProgress(last_);
    if (last_.complete()) {
      (void)session_->Acknowledge();
      // Closes the connection now: the AM's server, shutting down, waits for its clients'
      // connections (up to its 2 s deadline), and `tony submit` waits for the AM to end.
      SetSession(nullptr);
      return Step::kDone;
    }
    return Step::kContinue;
  }
  // Cancelled by an interrupt: the next round sends the kill.
  if (status.status().code() == absl::StatusCode::kCancelled && interrupted_ != 0) {
    return Step::kContinue;
  }
  // The AM did not answer: it has ended, or it is gone.
  absl::StatusOr<cluster::AppReport> report = cluster_->GetReport(app_id);
  if (report.ok() && IsFinal(*report)) {
    last_ = StatusFromReport(app_id, *report, last_);
    return Step::kDone;
  }
  if (report.ok() && report->attempt > attempt_) {
    // That AM is gone and the cluster started another attempt (tony.am.retry-count): follow the
    // new one once it listens. Its status versions start over. Say so now: the new attempt may
    // finish before the next report shows its address.
    out_ << "tony: the AM at " << am_address_ << " ended without a final status (attempt "
         << attempt_ << ")\n"
         << "tony: AM attempt " << report->attempt
         << (adopts_tasks_ ? " takes over the job\n" : " runs the job again\n") << std::flush;
    FollowNextAttempt();
    return Step::kContinue;
  }
  if (status.status().code() == absl::StatusCode::kUnauthenticated) {
    last_.set_state(rpc::JOB_FAILED);
    last_.set_complete(true);
    last_.set_diagnostics(StrCat("the AM refused the client: ", status.status().message()));
    return Step::kDone;
  }
  // A transient failure; the report above says the AM is still there. One that lasts is said
  // once: the AM may be stopped or starved, and the job waits for it (its tasks too, up to
  // their heartbeat limit, and the cluster's retries of the AM after that).
  if (const int64_t silent_ms = env_.clock->NowMs() - last_answer_ms_;
      !said_silent_ && silent_ms >= kSilentAmNoticeMs) {
    out_ << "tony: the AM at " << am_address_ << " has not answered for " << silent_ms / 1000
         << " s (" << status.status().message() << "); it still runs, so the client waits\n"
         << std::flush;
    said_silent_ = true;
  }
  env_.sleep(kRetryAfterErrorMs);
  return Step::kContinue;
}

bool JobFollower::Superseded(const std::string& app_id) {
  absl::StatusOr<cluster::AppReport> report = cluster_->GetReport(app_id);
  if (!report.ok() || report->attempt <= attempt_) return false;
  // An AM whose attempt the cluster no longer counts (it outlived its container, or lost the
  // cluster while the next attempt started): its final status is not the job's.
  out_ << "tony: the AM at " << am_address_ << " (attempt " << attempt_
       << ") is no longer the application's current attempt; attempt " << report->attempt
       << " decides\n"
       << std::flush;
  FollowNextAttempt();
  return true;
}

void JobFollower::FollowNextAttempt() {
  SetSession(nullptr);
  address_poll_ms_ = kFirstAddressPollMs;
  am_address_.clear();
  last_.set_version(0);
  progress_.clear();
}

void JobFollower::ShowProgress(const rpc::JobStatus& status) {
  if (std::string line = ProgressLine(status); line != progress_ && !status.complete()) {
    progress_ = line;
    const int64_t tenths = (env_.clock->NowMs() - started_ms_) / 100;
    out_ << "tony: [" << static_cast<double>(tenths) / 10.0 << " s] " << line << "\n" << std::flush;
  }
  if (!status.tensorboard_url().empty() && status.tensorboard_url() != tensorboard_url_) {
    tensorboard_url_ = status.tensorboard_url();
    out_ << "tony: TensorBoard at " << tensorboard_url_ << "\n" << std::flush;
  }
  if (!lingering_hinted_) {
    if (std::string hint = LingeringTasksHint(status, env_.clock->WallMs()); !hint.empty()) {
      out_ << "tony: " << hint << "\n" << std::flush;
      lingering_hinted_ = true;
    }
  }
}

}  // namespace tony::client
