#include "history/history_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <tuple>

#include "nlohmann/json.hpp"

namespace tony::history {
namespace {

std::optional<int> ParseNumber(std::string_view text) {
  int value = 0;
  if (text.empty() || text.size() > 9) return std::nullopt;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

using Json = nlohmann::json;

// A number that protobuf's JSON mapping may write as a string (64-bit integers).
int64_t Int(const Json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  if (it == object.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number()) return static_cast<int64_t>(it->get<double>());
  if (it->is_string()) {
    const auto& text = it->get_ref<const std::string&>();
    int64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc() && end == text.data() + text.size()) return value;
  }
  return 0;
}

std::string Str(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// "JOB_SUCCEEDED" -> "SUCCEEDED", "TASK_FINISHED" -> "STOPPED" (as the summary table says).
std::string StateName(const std::string& proto_name) {
  if (proto_name == "TASK_FINISHED") return "STOPPED";
  const size_t underscore = proto_name.find('_');
  return underscore == std::string::npos ? proto_name : proto_name.substr(underscore + 1);
}

Json ParseObject(std::string_view text) {
  Json value = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  return value.is_object() ? value : Json();
}

}  // namespace

JobInfo ParseJob(std::string_view text) {
  JobInfo job;
  const Json root = ParseObject(text);
  if (!root.is_object()) {
    job.problems.emplace_back(text.empty() ? "job.json is empty"
                                           : "job.json is not a JSON object (cut short?)");
    return job;
  }
  // A newer tony may write what this one would misread: say so, and read what it can.
  if (const int64_t format = Int(root, "format"); format > kFormatVersion) {
    job.problems.push_back(StrCat("job.json is of history format ", format,
                                  ", newer than this tony reads (", kFormatVersion,
                                  "): some of it may be missing or wrong here"));
  }
  job.app_id = Str(root, "app_id");
  job.name = Str(root, "name");
  job.user = Str(root, "user");
  job.framework = Str(root, "framework");
  job.backend = Str(root, "backend");
  job.queue = Str(root, "queue");
  job.submitted_ms = Int(root, "submitted_ms");
  if (const int64_t dropped = Int(root, "history_dropped_bytes"); dropped > 0) {
    job.problems.push_back(StrCat(dropped, " bytes of this history could not be written"));
  }
  auto status = root.find("status");
  if (status == root.end() || !status->is_object()) {
    job.problems.emplace_back("job.json has no status");
    return job;
  }
  job.state = StateName(Str(*status, "state"));
  job.diagnostics = Str(*status, "diagnostics");
  job.output_dir = Str(*status, "output_dir");
  job.start_ms = Int(*status, "start_ms");
  job.end_ms = Int(*status, "end_ms");
  auto complete = status->find("complete");
  job.complete = complete != status->end() && complete->is_boolean() && complete->get<bool>();
  auto tasks = status->find("tasks");
  if (tasks != status->end() && tasks->is_array()) {
    for (const Json& task : *tasks) {
      if (!task.is_object()) continue;
      TaskRow row;
      row.type = Str(task, "type");
      row.index = static_cast<int>(Int(task, "index"));
      row.state = StateName(Str(task, "state"));
      row.attempt = static_cast<int>(Int(task, "attempt"));
      row.host = Str(task, "host");
      row.port = static_cast<int>(Int(task, "port"));
      auto has_exit = task.find("has_exit_code");
      if (has_exit != task.end() && has_exit->is_boolean() && has_exit->get<bool>()) {
        row.exit_code = static_cast<int>(Int(task, "exit_code"));
      }
      row.diagnostics = Str(task, "diagnostics");
      row.start_ms = Int(task, "start_ms");
      row.end_ms = Int(task, "end_ms");
      row.peak_rss_bytes = Int(task, "peak_rss_bytes");
      if (auto progress = task.find("progress"); progress != task.end() && progress->is_object()) {
        auto has_step = progress->find("has_step");
        if (has_step != progress->end() && has_step->is_boolean() && has_step->get<bool>()) {
          row.step = Int(*progress, "step");
          row.total = Int(*progress, "total");
        }
      }
      row.log_dir = Str(task, "log_dir");
      row.heartbeats = Int(task, "heartbeats");
      if (auto previous = task.find("previous_attempts");
          previous != task.end() && previous->is_array()) {
        for (const Json& attempt : *previous) {
          if (attempt.is_object()) {
            row.previous_exit_codes.push_back(static_cast<int>(Int(attempt, "exit_code")));
          }
        }
      }
      job.tasks.push_back(std::move(row));
    }
  }
  return job;
}

std::string EventLine(const HistoryEvent& event) {
  nlohmann::ordered_json line = {{"time_ms", event.time_ms}};
  if (!event.task.empty()) {
    line["task"] = event.task;
    line["attempt"] = event.attempt;
  }
  line["kind"] = event.kind;
  if (event.task.empty() && event.attempt > 0) line["attempt"] = event.attempt;
  const auto text = [&line](const char* key, const std::string& value) {
    if (!value.empty()) line[key] = value;
  };
  text("user", event.user);
  text("name", event.name);
  text("state", event.state);
  text("container", event.container);
  text("host", event.host);
  text("address", event.address);
  text("tracking_url", event.tracking_url);
  if (event.exit_code) line["exit_code"] = *event.exit_code;
  text("diagnostics", event.diagnostics);
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string MetricLine(const MetricSample& sample) {
  nlohmann::ordered_json line = {{"time_ms", sample.time_ms},
                                 {"task", sample.task},
                                 {"attempt", sample.attempt},
                                 {"cpu_seconds", sample.cpu_seconds},
                                 {"rss_bytes", sample.rss_bytes}};
  if (sample.gpu_utilization) line["gpu_utilization"] = *sample.gpu_utilization;
  if (sample.gpu_memory_bytes) line["gpu_memory_bytes"] = *sample.gpu_memory_bytes;
  if (sample.step) {
    line["step"] = *sample.step;
    if (sample.total > 0) line["total"] = sample.total;
    if (!sample.values.empty()) {
      nlohmann::ordered_json values = nlohmann::ordered_json::object();
      for (const auto& [name, value] : sample.values) {
        if (std::isfinite(value)) values[name] = value;
      }
      line["values"] = std::move(values);
    }
  }
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::vector<HistoryEvent> ParseEvents(std::string_view text, int* bad_lines) {
  std::vector<HistoryEvent> events;
  *bad_lines = 0;
  for (std::string_view line : Split(text, '\n')) {
    if (line.empty()) continue;
    const Json e = ParseObject(line);
    if (!e.is_object() || Str(e, "kind").empty()) {
      ++*bad_lines;
      continue;
    }
    HistoryEvent event;
    event.time_ms = Int(e, "time_ms");
    event.kind = Str(e, "kind");
    event.task = Str(e, "task");
    event.attempt = static_cast<int>(Int(e, "attempt"));
    event.user = Str(e, "user");
    event.name = Str(e, "name");
    event.state = Str(e, "state");
    if (e.contains("exit_code")) event.exit_code = static_cast<int>(Int(e, "exit_code"));
    event.container = Str(e, "container");
    event.host = Str(e, "host");
    event.address = !Str(e, "address").empty() ? Str(e, "address") : event.host;
    event.tracking_url = Str(e, "tracking_url");
    event.diagnostics = Str(e, "diagnostics");
    events.push_back(std::move(event));
  }
  return events;
}

std::vector<MetricSample> ParseMetrics(std::string_view text, int* bad_lines) {
  std::vector<MetricSample> samples;
  *bad_lines = 0;
  for (std::string_view line : Split(text, '\n')) {
    if (line.empty()) continue;
    const Json m = ParseObject(line);
    if (!m.is_object() || Str(m, "task").empty()) {
      ++*bad_lines;
      continue;
    }
    MetricSample sample;
    sample.time_ms = Int(m, "time_ms");
    sample.task = Str(m, "task");
    sample.attempt = static_cast<int>(Int(m, "attempt"));
    auto cpu = m.find("cpu_seconds");
    if (cpu != m.end() && cpu->is_number()) sample.cpu_seconds = cpu->get<double>();
    sample.rss_bytes = Int(m, "rss_bytes");
    auto gpu = m.find("gpu_utilization");
    if (gpu != m.end() && gpu->is_number()) sample.gpu_utilization = gpu->get<double>();
    if (m.contains("gpu_memory_bytes")) sample.gpu_memory_bytes = Int(m, "gpu_memory_bytes");
    if (m.contains("step")) {
      sample.step = Int(m, "step");
      sample.total = Int(m, "total");
      auto values = m.find("values");
      if (values != m.end() && values->is_object()) {
        for (const auto& [name, value] : values->items()) {
          if (value.is_number() && sample.values.size() < 16) {
            sample.values[name] = value.get<double>();
          }
        }
      }
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::vector<ConfigRow> ParseConfig(std::string_view text, std::string* problem) {
  std::vector<ConfigRow> rows;
  const Json root = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!root.is_array()) {
    *problem = text.empty() ? "config.json is missing or empty"
                            : "config.json is not a JSON array (cut short?)";
    return rows;
  }
  for (const Json& row : root) {
    if (!row.is_object()) continue;
    rows.push_back({Str(row, "key"), Str(row, "value"), Str(row, "source")});
  }
  return rows;
}

absl::StatusOr<JobLocation> FindJob(HistoryFs& fs, const HistoryDirs& dirs,
                                    const std::string& app_id) {
  for (const auto& [root, finished] :
       {std::pair{dirs.finished, true}, std::pair{dirs.intermediate, false}}) {
    const std::string dir = StrCat(root, "/", app_id);
    absl::StatusOr<HistoryEntry> entry = fs.Stat(dir);
    if (entry.ok() && entry->is_directory) return JobLocation{dir, finished};
    if (!entry.ok() && !absl::IsNotFound(entry.status())) return entry.status();
  }
  return absl::NotFoundError(StrCat("no history of ", app_id, " in ", fs.Describe(dirs.finished),
                                    " or ", fs.Describe(dirs.intermediate),
                                    " (tony.history.location)"));
}

absl::StatusOr<std::vector<JobInfo>> ListJobs(HistoryFs& fs, const HistoryDirs& dirs) {
  std::vector<JobInfo> jobs;
  std::set<std::string> seen;
  for (const auto& [root, finished] :
       {std::pair{dirs.finished, true}, std::pair{dirs.intermediate, false}}) {
    absl::StatusOr<std::vector<HistoryEntry>> entries = fs.List(root);
    if (absl::IsNotFound(entries.status())) continue;
    if (!entries.ok()) return entries.status();
    for (const HistoryEntry& entry : *entries) {
      if (!entry.is_directory || !entry.name.starts_with("application_")) continue;
      if (!seen.insert(entry.name).second) continue;
      const std::string dir = StrCat(root, "/", entry.name);
      absl::StatusOr<std::string> text = fs.Read(StrCat(dir, "/", kJobFile), 0, kMaxReadBytes);
      JobInfo job;
      if (text.ok()) {
        job = ParseJob(*text);
      } else if (absl::IsNotFound(text.status())) {
        continue;  // removed meanwhile, or just being created
      } else {
        job.problems.push_back(std::string(text.status().message()));
      }
      if (job.app_id.empty()) job.app_id = entry.name;
      if (job.start_ms == 0 && job.submitted_ms == 0) job.start_ms = entry.modified_ms;
      job.finished = finished;
      jobs.push_back(std::move(job));
    }
  }
  std::sort(jobs.begin(), jobs.end(), [](const JobInfo& a, const JobInfo& b) {
    const int64_t a_start = a.start_ms > 0 ? a.start_ms : a.submitted_ms;
    const int64_t b_start = b.start_ms > 0 ? b.start_ms : b.submitted_ms;
    return std::tie(a_start, a.app_id) > std::tie(b_start, b.app_id);
  });
  return jobs;
}

absl::StatusOr<std::vector<ExpiredHistory>> FindExpiredHistory(
    HistoryFs& fs, const HistoryDirs& dirs, int64_t retention_sec, int64_t now_ms,
    const std::function<bool(const std::string& app_id)>& ended) {
  std::vector<ExpiredHistory> expired;
  if (retention_sec <= 0) return expired;
  auto collect = [&](const std::string& root, bool intermediate) -> absl::Status {
    absl::StatusOr<std::vector<HistoryEntry>> entries = fs.List(root);
    if (absl::IsNotFound(entries.status())) return absl::OkStatus();
    if (!entries.ok()) return entries.status();
    for (const HistoryEntry& entry : *entries) {
      if (!entry.is_directory || !entry.name.starts_with("application_")) continue;
      const std::string dir = StrCat(root, "/", entry.name);
      absl::StatusOr<HistoryEntry> job = fs.Stat(StrCat(dir, "/", kJobFile));
      const int64_t age = now_ms - (job.ok() ? job->modified_ms : entry.modified_ms);
      if (age <= retention_sec * 1000) continue;
      if (intermediate && !ended(entry.name)) continue;
      expired.push_back({entry.name, dir, age});
    }
    return absl::OkStatus();
  };
  if (absl::Status finished = collect(dirs.finished, false); !finished.ok()) return finished;
  if (ended) {
    if (absl::Status running = collect(dirs.intermediate, true); !running.ok()) return running;
  }
  return expired;
}

std::optional<LogFile> ParseLogName(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  LogFile file;
  file.stream = std::string(name.substr(dot + 1));
  if (file.stream != "stdout" && file.stream != "stderr") return std::nullopt;
  std::string_view rest = name.substr(0, dot);
  const size_t second = rest.rfind('-');
  if (second == std::string_view::npos) return std::nullopt;
  const size_t first = rest.rfind('-', second == 0 ? 0 : second - 1);
  if (first == std::string_view::npos || first == 0 || first >= second) return std::nullopt;
  std::optional<int> index = ParseNumber(rest.substr(first + 1, second - first - 1));
  std::optional<int> attempt = ParseNumber(rest.substr(second + 1));
  if (!index || !attempt) return std::nullopt;
  file.type = std::string(rest.substr(0, first));
  file.index = *index;
  file.attempt = *attempt;
  file.name = std::string(name);
  return file;
}

absl::StatusOr<std::vector<LogFile>> ListLogs(HistoryFs& fs, const std::string& job_dir) {
  absl::StatusOr<std::vector<HistoryEntry>> entries = fs.List(StrCat(job_dir, "/", kLogsDir));
  if (absl::IsNotFound(entries.status())) return std::vector<LogFile>();
  if (!entries.ok()) return entries.status();
  std::vector<LogFile> files;
  for (const HistoryEntry& entry : *entries) {
    if (entry.is_directory) continue;
    if (std::optional<LogFile> file = ParseLogName(entry.name)) {
      file->size = entry.size;
      files.push_back(*std::move(file));
    }
  }
  std::sort(files.begin(), files.end(), [](const LogFile& a, const LogFile& b) {
    const bool a_err = a.stream != "stdout";
    const bool b_err = b.stream != "stdout";
    return std::tie(a.type, a.index, a.attempt, a_err) <
           std::tie(b.type, b.index, b.attempt, b_err);
  });
  return files;
}

}  // namespace tony::history
