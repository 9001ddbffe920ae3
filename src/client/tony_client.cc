#include "client/tony_client.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <thread>

#include "client/job_follower.h"
#include "client/job_json.h"
#include "client/job_logs.h"
#include "client/job_report.h"
#include "client/job_stager.h"
#include "client/preflight.h"
#include "common/clock.h"
#include "common/strings.h"
#include "rpc/job_credentials.h"
#include "rpc/launch_contract.h"

namespace tony::client {
namespace {

constexpr char kOutputDirKey[] = "tony.application.output-dir";

sigset_t InterruptSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

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
    : cluster_(cluster), out_lines_(out), err_lines_(err), out_(out_lines_), err_(err_lines_) {}

void TonyClient::OnInterrupt(int sig) { follower_->Interrupt(sig); }

int RefusedSubmissionExitCode(const absl::Status& refused) {
  // Refused credentials or rights, configuration the user can fix, a precondition of the
  // cluster's that the job does not meet, or a cluster with no active server to take it
  // (kUnavailable: no active NameNode or ResourceManager). Nothing runs in any of these.
  switch (refused.code()) {
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kUnavailable:
      return kExitBadInput;
    default:
      return kExitJobFailed;
  }
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
    // A TONY_HOME others may write, or a planted link: the user's to fix, and nothing started.
    return app_id.status().code() == absl::StatusCode::kFailedPrecondition ? kExitBadInput
                                                                           : kExitJobFailed;
  }
  const std::string job_dir = cluster_->JobDir(*app_id);
  // Where the tasks' outputs go, as the job's configuration tells the AM and the executors.
  std::string requested_outputs = spec.output_dir;
  if (!requested_outputs.empty() && !requested_outputs.starts_with('/') &&
      requested_outputs.find("://") == std::string::npos) {
    requested_outputs = ResolveInputPath(context.working_dir, requested_outputs).string();
  }
  absl::StatusOr<std::string> output_dir = cluster_->OutputDir(*app_id, requested_outputs);
  if (!output_dir.ok()) {
    err_ << "tony: error: " << output_dir.status().message() << "\n";
    return output_dir.status().code() == absl::StatusCode::kInvalidArgument ? kExitBadInput
                                                                            : kExitJobFailed;
  }
  spec.output_dir = *output_dir;
  resolved.conf.Replace(kOutputDirKey, *output_dir, config::ValueSource::Derived());
  if (absl::Status staged =
          StageJob(resolved.conf, spec, context.working_dir, job_dir, *credentials);
      !staged.ok()) {
    err_ << "tony: error: staging " << *app_id << ": " << staged.message() << "\n";
    // A directory that is not the user's alone is left as it is, for the user to look at.
    if (staged.code() == absl::StatusCode::kFailedPrecondition) return kExitBadInput;
    // Nothing runs from it; a half-staged directory would only hold space (a full disk is the
    // usual cause).
    std::error_code ec;
    std::filesystem::remove_all(job_dir, ec);
    return kExitJobFailed;
  }
  if (absl::Status made = cluster_->MakeOutputDir(*output_dir); !made.ok()) {
    err_ << "tony: error: output directory of " << *app_id << ": " << made.message() << "\n";
    std::error_code ec;
    std::filesystem::remove_all(job_dir, ec);
    return RefusedSubmissionExitCode(made);
  }
  follower_ = std::make_unique<JobFollower>(cluster_, SystemFollowerEnv(*credentials), out_);
  signals_ =
      std::make_unique<SignalThread>(InterruptSignals(), [this](int sig) { OnInterrupt(sig); });

  cluster::AmSubmission submission;
  submission.app_id = *app_id;
  submission.name = spec.name;
  submission.queue = spec.queue;
  submission.priority = spec.priority;
  submission.max_attempts = spec.am_retry_count + 1;
  submission.keep_containers = spec.am_retry_count > 0;
  submission.application_type = spec.application_type;
  submission.tags = spec.tags;
  submission.node_label = spec.node_label;
  submission.job_dir = job_dir;
  submission.argv = {context.executable, "am"};
  submission.env["TONY_JOB_DIR"] = job_dir;
  submission.submitted_ms = SystemClock::Get()->WallMs();
  submission.resources = spec.am;
  submission.secrets[rpc::kJobSecretAlias] = credentials->secret;
  submission.local_only_files = {rpc::kSecretFile};
  if (credentials->tls()) {
    submission.secrets[rpc::kAmCertAlias] = credentials->am_cert_pem;
    submission.secrets[rpc::kAmKeyAlias] = credentials->am_key_pem;
    submission.local_only_files.emplace_back(rpc::kAmKeyFile);
    submission.local_only_files.emplace_back(rpc::kAmCertFile);
  }
  if (absl::Status submitted = cluster_->Submit(submission); !submitted.ok()) {
    err_ << "tony: error: cannot start the AM of " << *app_id << ": " << submitted.message()
         << "\n";
    // Submit removed what it staged.
    return RefusedSubmissionExitCode(submitted);
  }
  out_ << "tony: submitted " << *app_id << " (" << spec.TotalTasks() << " tasks, backend "
       << spec.backend << ")\n"
       << "tony: job directory " << job_dir << ", logs under " << job_dir << "/logs\n"
       << "tony: outputs go to " << *output_dir << " (TONY_OUTPUT_DIR)\n"
       << std::flush;
  if (context.json_out != nullptr) {
    *context.json_out << SubmittedJson(*app_id, spec.backend, job_dir, *output_dir) << "\n"
                      << std::flush;
  }

  // --tee: the tasks' lines as they print them, beside the progress lines.
  std::atomic<bool> job_over{false};
  std::atomic<int64_t> tee_deadline_ms{0};
  std::thread tee;
  if (context.tee) {
    tee = std::thread([&, store = *context.tee, id = *app_id] {
      LineWriter out(out_lines_);
      LineWriter err(err_lines_);
      LogsOptions logs;
      logs.app_id = id;
      logs.stderr_stream = true;
      logs.follow = true;
      logs.wait_for_history = true;
      // The job's history is finished by the time the job is; should it never be (a history
      // that cannot be written), the tee gives up a few seconds after the job's end.
      (void)ShowLogs(*store.fs, store.dirs, logs, out, err,
                     [&] { return job_over && SystemClock::Get()->NowMs() > tee_deadline_ms; });
    });
  }
  rpc::JobStatus final_status = follower_->Follow(*app_id, spec);
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
  // The job is over and its AM gone: its key material serves no one any more, and the job
  // directory, which stays for its logs and final status, keeps no credential.
  for (const char* name : {rpc::kSecretFile, rpc::kAmKeyFile}) {
    std::error_code ec;
    std::filesystem::remove(StrCat(job_dir, "/", name), ec);
  }

  out_ << "\n" << Summary(final_status) << std::flush;
  if (!spec.history_url.empty()) {
    out_ << "\nhistory: " << spec.history_url << "/jobs/" << *app_id << "\n" << std::flush;
  }
  const int code = final_status.state() == rpc::JOB_SUCCEEDED ? kExitSucceeded
                   : follower_->interrupted() != 0            ? kExitInterrupted
                                                              : kExitJobFailed;
  if (context.json_out != nullptr) {
    *context.json_out << EndedJson(final_status, code) << "\n" << std::flush;
  }
  return code;
}

}  // namespace tony::client
