#include "client/tony_client.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <thread>

#include "client/job_control.h"
#include "client/job_logs.h"
#include "client/job_report.h"
#include "client/job_stager.h"
#include "client/preflight.h"
#include "common/clock.h"
#include "common/strings.h"
#include "grpcpp/grpcpp.h"
#include "rpc/auth.h"
#include "rpc/launch_contract.h"

namespace tony::client {
namespace {

std::chrono::system_clock::time_point DeadlineIn(int64_t ms) {
  return std::chrono::system_clock::now() + std::chrono::milliseconds(ms);
}

sigset_t InterruptSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

bool IsFinal(const cluster::AppReport& report) { return !report.final_state.empty(); }

}  // namespace

void BlockInterruptSignals() {
  sigset_t set = InterruptSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForInterrupt() {
  sigset_t set = InterruptSignals();
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

TonyClient::TonyClient(cluster::ClusterClient* cluster, std::ostream& out, std::ostream& err)
    : cluster_(cluster), out_(out), err_(err) {}

void TonyClient::OnInterrupt(int sig) {
  interrupted_ = sig;
  std::lock_guard lock(mu_);
  if (in_flight_ != nullptr) in_flight_->TryCancel();
}

int TonyClient::Submit(const config::ResolvedConfig& resolved_config,
                       const config::JobSpec& job_spec, const SubmitContext& context) {
  config::ResolvedConfig resolved = resolved_config;
  config::JobSpec spec = job_spec;
  for (const std::string& warning : DropMissingHdfsClasspath(&spec, &resolved.conf, *cluster_)) {
    err_ << "tony: warning: " << warning << "\n";
  }
  if (absl::Status ok = CheckInputs(spec, context.working_dir, *cluster_); !ok.ok()) {
    err_ << "tony: error: " << ok.message() << "\n";
    // A missing or unusable input is the user's to fix; an unreachable file system is not.
    const bool bad_input =
        ok.code() == absl::StatusCode::kNotFound || ok.code() == absl::StatusCode::kInvalidArgument;
    return bad_input ? kExitBadInput : kExitJobFailed;
  }
  absl::StatusOr<rpc::JobCredentials> credentials = rpc::GenerateJobCredentials(spec.am_tls);
  absl::StatusOr<std::string> app_id =
      credentials.ok() ? cluster_->NewApplicationId() : credentials.status();
  if (!app_id.ok()) {
    err_ << "tony: error: " << app_id.status().message() << "\n";
    return kExitJobFailed;
  }
  const std::string job_dir = cluster_->JobDir(*app_id);
  if (absl::Status staged =
          StageJob(resolved.conf, spec, context.working_dir, job_dir, *credentials);
      !staged.ok()) {
    err_ << "tony: error: staging " << *app_id << ": " << staged.message() << "\n";
    // Nothing runs from it; a half-staged directory would only hold space (a full disk is the
    // usual cause).
    std::error_code ec;
    std::filesystem::remove_all(job_dir, ec);
    return kExitJobFailed;
  }
  signals_ =
      std::make_unique<SignalThread>(InterruptSignals(), [this](int sig) { OnInterrupt(sig); });

  cluster::AmSubmission submission;
  submission.app_id = *app_id;
  submission.name = spec.name;
  submission.queue = spec.queue;
  submission.priority = spec.priority;
  submission.max_attempts = spec.am_retry_count + 1;
  submission.application_type = spec.application_type;
  submission.tags = spec.tags;
  submission.node_label = spec.node_label;
  submission.job_dir = job_dir;
  submission.argv = {context.executable, "am"};
  submission.env["TONY_JOB_DIR"] = job_dir;
  submission.env[rpc::kEnvSubmittedMs] = std::to_string(SystemClock::Get()->WallMs());
  submission.resources = {spec.am.memory_mb, spec.am.vcores, spec.am.gpus};
  submission.secrets[rpc::kJobSecretAlias] = credentials->secret;
  submission.local_only_files = {rpc::kSecretFile};
  if (credentials->tls()) {
    submission.secrets[rpc::kAmCertAlias] = credentials->am_cert_pem;
    submission.secrets[rpc::kAmKeyAlias] = credentials->am_key_pem;
    submission.local_only_files.push_back(rpc::kAmKeyFile);
    submission.local_only_files.push_back(rpc::kAmCertFile);
  }
  if (absl::Status submitted = cluster_->Submit(submission); !submitted.ok()) {
    err_ << "tony: error: cannot start the AM of " << *app_id << ": " << submitted.message()
         << "\n";
    // Refused credentials and configuration the user can fix: bad input, nothing runs.
    const absl::StatusCode code = submitted.code();
    return code == absl::StatusCode::kUnauthenticated ||
                   code == absl::StatusCode::kPermissionDenied ||
                   code == absl::StatusCode::kInvalidArgument
               ? kExitBadInput
               : kExitJobFailed;
  }
  out_ << "tony: submitted " << *app_id << " (" << spec.TotalTasks() << " tasks, backend "
       << spec.backend << ")\n"
       << "tony: job directory " << job_dir << ", logs under " << job_dir << "/logs\n"
       << std::flush;

  // --tee: the tasks' lines as they print them, beside the progress lines.
  std::atomic<bool> job_over{false};
  std::atomic<int64_t> tee_deadline_ms{0};
  std::thread tee;
  if (context.tee) {
    tee = std::thread([&, store = *context.tee, id = *app_id] {
      LogsOptions logs;
      logs.app_id = id;
      logs.stderr_stream = true;
      logs.follow = true;
      logs.wait_for_history = true;
      // The job's history is finished by the time the job is; should it never be (a history
      // that cannot be written), the tee gives up a few seconds after the job's end.
      (void)ShowLogs(*store.fs, store.dirs, logs, out_, err_,
                     [&] { return job_over && SystemClock::Get()->NowMs() > tee_deadline_ms; });
    });
  }
  rpc::JobStatus final_status = Follow(*app_id, *credentials, spec);
  if (tee.joinable()) {
    tee_deadline_ms = SystemClock::Get()->NowMs() + 10000;
    job_over = true;
    tee.join();
  }
  // The AM exits once it has told us; make sure nothing of the job outlives the client.
  if (absl::Status gone = cluster_->AwaitAmExit(*app_id, spec.stop_grace_ms + 10000); !gone.ok()) {
    err_ << "tony: warning: " << gone.message() << "; killing what is left of the job\n";
    (void)cluster_->Kill(*app_id, /*force=*/true);
  }
  (void)cluster_->Kill(*app_id, /*force=*/true);  // leftovers only: the AM is gone by now

  out_ << "\n" << Summary(final_status) << std::flush;
  if (!spec.history_url.empty()) {
    out_ << "\nhistory: " << spec.history_url << "/jobs/" << *app_id << "\n" << std::flush;
  }
  if (final_status.state() == rpc::JOB_SUCCEEDED) return kExitSucceeded;
  return interrupted_ != 0 ? kExitInterrupted : kExitJobFailed;
}

rpc::JobStatus TonyClient::Follow(const std::string& app_id, const rpc::JobCredentials& credentials,
                                  const config::JobSpec& spec) {
  const std::string auth = rpc::JobAuthValue(credentials.secret);
  rpc::JobStatus last;
  last.set_app_id(app_id);
  const Clock* clock = SystemClock::Get();
  const int64_t started = clock->NowMs();
  std::unique_ptr<rpc::TonyAm::Stub> stub;
  std::string am_address;
  int attempt = 0;  // the AM attempt `stub` talks to
  bool kill_sent = false;
  int64_t kill_deadline = 0;
  std::string progress;
  bool lingering_hinted = false;  // said once per job
  std::string tensorboard_url;    // the last one printed
  int64_t address_poll_ms = 20;
  bool asked_ended_am = false;

  while (true) {
    if (interrupted_ != 0 && !kill_sent) {
      out_ << "tony: interrupted; stopping " << app_id << "\n" << std::flush;
      kill_sent = true;
      kill_deadline = clock->NowMs() + spec.stop_grace_ms + 10000;
      bool asked = false;
      if (stub) {
        rpc::KillJobRequest request;
        request.set_reason(StrCat("killed by the user (signal ", interrupted_.load(), ")"));
        rpc::KillJobResponse response;
        grpc::ClientContext context;
        rpc::AttachAuth(&context, auth);
        context.set_deadline(DeadlineIn(5000));
        asked = stub->KillJob(&context, request, &response).ok();
      }
      if (!asked) (void)cluster_->Kill(app_id, /*force=*/false);
    }
    if (kill_sent && clock->NowMs() > kill_deadline) {
      (void)cluster_->Kill(app_id, /*force=*/true);
      last.set_state(rpc::JOB_KILLED);
      last.set_complete(true);
      last.set_diagnostics("killed by the user; the AM did not stop in time and was killed");
      return last;
    }

    if (!stub) {
      absl::StatusOr<cluster::AppReport> report = cluster_->GetReport(app_id);
      if (report.ok() && IsFinal(*report)) {
        // A short job can end before this client first saw its AM listening. The AM waits for
        // its client (tony.am.wait-client-signal-stop-timeout): ask it once for the whole status
        // (every task) before settling for the backend's report.
        if (!asked_ended_am && !report->last_am_address.empty()) {
          asked_ended_am = true;
          am_address = report->last_am_address;
          attempt = std::max(report->attempt, 1);
          stub = rpc::TonyAm::NewStub(rpc::AmChannel(am_address, credentials.am_cert_pem));
          continue;
        }
        return StatusFromReport(app_id, *report, last);
      }
      if (report.ok() && !report->am_address.empty()) {
        am_address = report->am_address;
        if (attempt > 0 && report->attempt > attempt) {
          out_ << "tony: AM attempt " << report->attempt << " listens at " << am_address << "\n"
               << std::flush;
        } else if (!report->tracking_url.empty() && report->tracking_url != "N/A") {
          out_ << "tony: tracking URL " << report->tracking_url << "\n" << std::flush;
        }
        attempt = std::max(report->attempt, 1);
        stub = rpc::TonyAm::NewStub(rpc::AmChannel(am_address, credentials.am_cert_pem));
        continue;
      }
      if (spec.am_startup_timeout_ms > 0 && clock->NowMs() - started > spec.am_startup_timeout_ms) {
        (void)cluster_->Kill(app_id, /*force=*/true);
        last.set_state(rpc::JOB_FAILED);
        last.set_complete(true);
        last.set_diagnostics(StrCat("the AM did not start within ", spec.am_startup_timeout_ms,
                                    " ms (tony.am.startup-timeout)"));
        return last;
      }
      // The backend has no way to push the AM's address; ask again shortly, then less often
      // (a queued YARN application may wait for minutes).
      std::this_thread::sleep_for(std::chrono::milliseconds(address_poll_ms));
      address_poll_ms = std::min<int64_t>(address_poll_ms * 2, 500);
      continue;
    }

    rpc::WatchJobRequest request;
    request.set_after_version(last.version());
    request.set_max_wait_ms(2000);
    rpc::JobStatus status;
    grpc::ClientContext context;
    rpc::AttachAuth(&context, auth);
    context.set_deadline(DeadlineIn(10000));
    {
      std::lock_guard lock(mu_);
      in_flight_ = &context;
    }
    grpc::Status rpc_status = interrupted_ != 0 && !kill_sent
                                  ? grpc::Status(grpc::StatusCode::CANCELLED, "interrupted")
                                  : stub->WatchJob(&context, request, &status);
    {
      std::lock_guard lock(mu_);
      in_flight_ = nullptr;
    }
    if (rpc_status.ok()) {
      last = status;
      if (std::string line = ProgressLine(status); line != progress && !status.complete()) {
        progress = line;
        out_ << "tony: [" << (clock->NowMs() - started) / 100 / 10.0 << " s] " << line << "\n"
             << std::flush;
      }
      if (!status.tensorboard_url().empty() && status.tensorboard_url() != tensorboard_url) {
        tensorboard_url = status.tensorboard_url();
        out_ << "tony: TensorBoard at " << tensorboard_url << "\n" << std::flush;
      }
      if (!lingering_hinted) {
        if (std::string hint = LingeringTasksHint(status, clock->WallMs()); !hint.empty()) {
          out_ << "tony: " << hint << "\n" << std::flush;
          lingering_hinted = true;
        }
      }
      if (status.complete()) {
        rpc::AcknowledgeFinalRequest ack_request;
        rpc::AcknowledgeFinalResponse ack_response;
        grpc::ClientContext ack;
        rpc::AttachAuth(&ack, auth);
        ack.set_deadline(DeadlineIn(2000));
        (void)stub->AcknowledgeFinal(&ack, ack_request, &ack_response);
        return status;
      }
      continue;
    }
    if (rpc_status.error_code() == grpc::StatusCode::CANCELLED && interrupted_ != 0) continue;
    // The AM did not answer: it has ended, or it is gone.
    absl::StatusOr<cluster::AppReport> report = cluster_->GetReport(app_id);
    if (report.ok() && IsFinal(*report)) return StatusFromReport(app_id, *report, last);
    if (report.ok() && report->attempt > attempt) {
      // That AM is gone and the cluster started another attempt (tony.am.retry-count): follow
      // the new one once it listens. Its job starts over, and so do its status versions.
      // Say so now: the new attempt may finish before the next report shows its address.
      out_ << "tony: the AM at " << am_address << " ended without a final status (attempt "
           << attempt << ")\n"
           << "tony: AM attempt " << report->attempt << " runs the job again\n"
           << std::flush;
      stub.reset();
      address_poll_ms = 20;
      am_address.clear();
      last.set_version(0);
      progress.clear();
      continue;
    }
    if (rpc_status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      last.set_state(rpc::JOB_FAILED);
      last.set_complete(true);
      last.set_diagnostics(StrCat("the AM refused the client: ", rpc_status.error_message()));
      return last;
    }
    // A transient failure; the report above says the AM is still there.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace tony::client
