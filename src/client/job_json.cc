#include "client/job_json.h"

#include <map>

#include "client/job_report.h"
#include "nlohmann/json.hpp"

namespace tony::client {
namespace {

using Json = nlohmann::ordered_json;

// One line; bytes that are not UTF-8 (a task's diagnostics may hold any) are replaced.
std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json TaskJson(const rpc::TaskStatus& task) {
  Json out = {{"task", task.type() + ":" + std::to_string(task.index())},
              {"type", task.type()},
              {"index", task.index()},
              {"state", std::string(ToString(task.state()))},
              {"role", task.role()},
              {"exit_code", task.has_exit_code() ? Json(task.exit_code()) : Json(nullptr)},
              {"attempt", task.attempt()},
              {"host", task.host()},
              {"port", task.port()},
              {"container_id", task.container_id()},
              {"log_dir", task.log_dir()},
              {"start_ms", task.start_ms()},
              {"end_ms", task.end_ms()},
              {"peak_rss_bytes", task.peak_rss_bytes()},
              {"diagnostics", task.diagnostics()}};
  if (task.progress().has_step()) {
    const std::map<std::string, double> metrics(task.progress().metrics().begin(),
                                                task.progress().metrics().end());
    out["progress"] = {
        {"step", task.progress().step()}, {"total", task.progress().total()}, {"metrics", metrics}};
  } else {
    out["progress"] = nullptr;
  }
  Json previous = Json::array();
  for (const rpc::AttemptStatus& attempt : task.previous_attempts()) {
    previous.push_back({{"attempt", attempt.attempt()},
                        {"exit_code", attempt.exit_code()},
                        {"diagnostics", attempt.diagnostics()},
                        {"end_ms", attempt.end_ms()}});
  }
  out["previous_attempts"] = std::move(previous);
  return out;
}

Json ReportJson(const cluster::AppReport& app) {
  return {{"app_id", app.app_id},
          {"name", app.name},
          {"user", app.user},
          {"backend_state", std::string(AppStateName(app.state))},
          {"final_status", app.final_state},
          {"tracking_url", app.tracking_url == "N/A" ? "" : app.tracking_url}};
}

}  // namespace

std::string_view AppStateName(cluster::AppState state) {
  switch (state) {
    case cluster::AppState::kSubmitted:
      return "SUBMITTED";
    case cluster::AppState::kRunning:
      return "RUNNING";
    case cluster::AppState::kFinished:
      return "FINISHED";
    case cluster::AppState::kFailed:
      return "FAILED";
    case cluster::AppState::kKilled:
      return "KILLED";
  }
  return "UNKNOWN";
}

namespace {

Json JobObject(const rpc::JobStatus& status, const cluster::AppReport* report) {
  Json out = report != nullptr ? ReportJson(*report) : Json::object();
  out["app_id"] = status.app_id();
  out["state"] = std::string(ToString(status.state()));
  out["complete"] = status.complete();
  out["diagnostics"] = status.diagnostics();
  out["start_ms"] = status.start_ms();
  out["end_ms"] = status.end_ms();
  out["output_dir"] = status.output_dir();
  out["tensorboard_url"] = status.tensorboard_url();
  if (report != nullptr && report->attempt > 0) out["am_attempt"] = report->attempt;
  Json tasks = Json::array();
  for (const rpc::TaskStatus& task : status.tasks()) tasks.push_back(TaskJson(task));
  out["tasks"] = std::move(tasks);
  return out;
}

}  // namespace

std::string JobJson(const rpc::JobStatus& status, const cluster::AppReport* report) {
  return Dump(JobObject(status, report));
}

std::string SubmittedJson(const std::string& app_id, const std::string& backend,
                          const std::string& job_dir, const std::string& output_dir) {
  return Dump(Json{{"event", "submitted"},
                   {"app_id", app_id},
                   {"backend", backend},
                   {"job_dir", job_dir},
                   {"output_dir", output_dir}});
}

std::string EndedJson(const rpc::JobStatus& status, int exit_code) {
  return Dump(
      Json{{"event", "ended"}, {"exit_code", exit_code}, {"job", JobObject(status, nullptr)}});
}

std::string JobListJson(const std::vector<cluster::AppReport>& apps) {
  Json out = Json::array();
  for (const cluster::AppReport& app : apps) out.push_back(ReportJson(app));
  return Dump(out);
}

}  // namespace tony::client
