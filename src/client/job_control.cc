#include "client/job_control.h"

#include <chrono>
#include <memory>
#include <ostream>
#include <thread>

#include "client/job_json.h"
#include "client/job_report.h"
#include "common/clock.h"
#include "common/strings.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"
#include "rpc/auth.h"
#include "rpc/tony.grpc.pb.h"

namespace tony::client {
namespace {

std::unique_ptr<rpc::TonyAm::Stub> AmStub(const std::string& address,
                                          const rpc::JobCredentials& credentials) {
  return rpc::TonyAm::NewStub(rpc::AmChannel(address, credentials.am_cert_pem));
}

void AttachCall(grpc::ClientContext& context, const rpc::JobCredentials& credentials,
                int64_t timeout_ms) {
  rpc::AttachAuth(&context, rpc::JobAuthValue(credentials.secret));
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
}

// The backend's report, with its error as the exit code: 2 for an application it does not know.
absl::StatusOr<cluster::AppReport> Report(cluster::ClusterClient& cluster,
                                          const std::string& app_id, std::ostream& err,
                                          int* exit_code) {
  absl::StatusOr<cluster::AppReport> report = cluster.GetReport(app_id);
  if (!report.ok()) {
    err << "tony: error: " << report.status().message() << "\n";
    *exit_code = report.status().code() == absl::StatusCode::kNotFound ||
                         report.status().code() == absl::StatusCode::kInvalidArgument
                     ? 2
                     : 1;
  }
  return report;
}

// The AM's current status at once (any version is newer than 0, and nothing waits); an error
// when it cannot be asked.
absl::StatusOr<rpc::JobStatus> AskAm(const cluster::AppReport& report,
                                     const JobControlOptions& options) {
  rpc::WatchJobRequest request;
  request.set_after_version(0);
  request.set_max_wait_ms(0);
  rpc::JobStatus status;
  grpc::ClientContext context;
  AttachCall(context, options.credentials, 5000);
  if (grpc::Status s =
          AmStub(report.am_address, options.credentials)->WatchJob(&context, request, &status);
      !s.ok()) {
    return absl::UnavailableError(s.error_message());
  }
  return status;
}

}  // namespace

std::optional<rpc::JobStatus> StatusFromJobJson(const std::string& job_json) {
  const nlohmann::json job = nlohmann::json::parse(job_json, nullptr, /*allow_exceptions=*/false);
  if (!job.is_object() || !job.contains("status") || !job["status"].is_object())
    return std::nullopt;
  rpc::JobStatus status;
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = true;  // a newer tony's fields
  if (!google::protobuf::util::JsonStringToMessage(job["status"].dump(), &status, parse).ok()) {
    return std::nullopt;
  }
  return status;
}

rpc::JobStatus CurrentStatus(const cluster::AppReport& report, const JobControlOptions& options) {
  if (!report.final_state.empty()) {
    rpc::JobStatus ended = StatusFromReport(options.app_id, report, {});
    if (ended.tasks_size() == 0 && options.recorded_job_json) {
      // The AM's last word, as the job's history keeps it.
      if (std::optional<std::string> text = options.recorded_job_json()) {
        if (std::optional<rpc::JobStatus> recorded = StatusFromJobJson(*text)) {
          ended = StatusFromReport(options.app_id, report, *recorded);
        }
      }
    }
    return ended;
  }
  if (!report.am_address.empty() && !options.credentials.secret.empty()) {
    if (absl::StatusOr<rpc::JobStatus> status = AskAm(report, options); status.ok()) {
      return *status;
    }
  }
  // What the backend alone tells: running, or not yet.
  rpc::JobStatus status;
  status.set_app_id(options.app_id);
  if (report.state == cluster::AppState::kRunning) status.set_state(rpc::JOB_RUNNING);
  return status;
}

rpc::JobStatus StatusFromReport(const std::string& app_id, const cluster::AppReport& report,
                                const rpc::JobStatus& last_seen) {
  rpc::JobStatus status = last_seen;
  if (!report.status_json.empty()) {
    rpc::JobStatus parsed;
    if (google::protobuf::util::JsonStringToMessage(report.status_json, &parsed).ok()) {
      status = parsed;
    }
  }
  status.set_app_id(app_id);
  status.set_complete(true);
  if (report.final_state == "SUCCEEDED") {
    status.set_state(rpc::JOB_SUCCEEDED);
  } else if (report.final_state == "KILLED") {
    status.set_state(rpc::JOB_KILLED);
  } else {
    status.set_state(rpc::JOB_FAILED);
  }
  if (status.diagnostics().empty()) status.set_diagnostics(report.diagnostics);
  return status;
}

int ShowJob(cluster::ClusterClient& cluster, const JobControlOptions& options, std::ostream& out,
            std::ostream& err) {
  int code = 0;
  absl::StatusOr<cluster::AppReport> report = Report(cluster, options.app_id, err, &code);
  if (!report.ok()) return code;
  if (options.json) {
    out << JobJson(CurrentStatus(*report, options), &*report) << "\n";
    return 0;
  }
  out << options.app_id << ": " << AppStateName(report->state);
  if (!report->final_state.empty()) out << ", final status " << report->final_state;
  if (report->attempt > 1) out << " (AM attempt " << report->attempt << ")";
  out << "\n";
  if (!report->tracking_url.empty() && report->tracking_url != "N/A") {
    out << "tracking URL " << report->tracking_url << "\n";
  }
  if (!report->final_state.empty()) {
    rpc::JobStatus status = CurrentStatus(*report, options);
    if (status.tasks_size() > 0) {
      out << "\n" << Summary(status);
    } else if (!report->diagnostics.empty()) {
      out << report->diagnostics << "\n";
    }
    return 0;
  }
  if (report->am_address.empty()) return 0;
  if (options.credentials.secret.empty()) {
    out << "(the tasks' table needs the job's secret, in the job directory of the machine that "
           "submitted it; the tracking URL shows them)\n";
    return 0;
  }
  absl::StatusOr<rpc::JobStatus> status = AskAm(*report, options);
  if (!status.ok()) {
    out << "(the AM at " << report->am_address << " did not answer: " << status.status().message()
        << ")\n";
    return 0;
  }
  out << ProgressLine(*status) << "\n\n" << Summary(*status);
  return 0;
}

int KillJob(cluster::ClusterClient& cluster, const JobControlOptions& options, std::ostream& out,
            std::ostream& err) {
  int code = 0;
  absl::StatusOr<cluster::AppReport> report = Report(cluster, options.app_id, err, &code);
  if (!report.ok()) return code;
  if (!report->final_state.empty()) {
    out << "tony: " << options.app_id << " had already ended: " << report->final_state << "\n";
    return 0;
  }
  bool asked = false;
  if (!options.credentials.secret.empty() && !report->am_address.empty()) {
    rpc::KillJobRequest request;
    request.set_reason("killed with tony kill");
    rpc::KillJobResponse response;
    grpc::ClientContext context;
    AttachCall(context, options.credentials, 5000);
    asked =
        AmStub(report->am_address, options.credentials)->KillJob(&context, request, &response).ok();
  }
  if (!asked) {
    if (absl::Status s = cluster.Kill(options.app_id, /*force=*/false); !s.ok()) {
      err << "tony: error: cannot kill " << options.app_id << ": " << s.message() << "\n";
      return 1;
    }
  }
  out << "tony: stopping " << options.app_id << "\n" << std::flush;
  const Clock* clock = SystemClock::Get();
  const int64_t deadline = clock->NowMs() + options.stop_grace_ms + 15000;
  while (clock->NowMs() < deadline) {
    report = cluster.GetReport(options.app_id);
    if (report.ok() && !report->final_state.empty()) {
      out << "tony: " << options.app_id << " ended: " << report->final_state << "\n";
      // The backend's cleanup after the AM (YARN: the staging directory), should the client that
      // submitted the job be gone.
      (void)cluster.AwaitAmExit(options.app_id, 10000);
      return 0;
    }
    // Neither backend pushes the end of an application; ask again shortly.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (absl::Status s = cluster.Kill(options.app_id, /*force=*/true); !s.ok()) {
    err << "tony: error: cannot kill " << options.app_id << ": " << s.message() << "\n";
    return 1;
  }
  out << "tony: " << options.app_id << " did not stop in time and was killed\n";
  return 0;
}

int ListJobs(cluster::ClusterClient& cluster, const std::string& application_type,
             bool include_ended, bool json, std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::vector<cluster::AppReport>> apps =
      cluster.ListApplications(application_type, include_ended);
  if (!apps.ok()) {
    err << "tony: error: cannot list the applications: " << apps.status().message() << "\n";
    return 1;
  }
  if (json) {
    out << JobListJson(*apps) << "\n";
    return 0;
  }
  if (apps->empty()) {
    out << (include_ended ? "no tony applications\n"
                          : "no running tony applications (--all lists ended ones too)\n");
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {
      {"APPLICATION ID", "NAME", "USER", "STATE", "FINAL STATUS", "TRACKING URL"}};
  for (const cluster::AppReport& app : *apps) {
    rows.push_back(
        {app.app_id, app.name.empty() ? "-" : app.name, app.user.empty() ? "-" : app.user,
         std::string(AppStateName(app.state)), app.final_state.empty() ? "-" : app.final_state,
         app.tracking_url.empty() || app.tracking_url == "N/A" ? "-" : app.tracking_url});
  }
  out << FormatTable(rows);
  return 0;
}

}  // namespace tony::client
