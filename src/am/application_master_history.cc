// The job's history as the AM writes it (history/history_format.h): its events from the state
// machine's task transitions, metric samples from heartbeats, the resolved configuration, and
// job.json. Everything is queued to the HistoryWriter's own thread; nothing here waits on a disk
// or on HDFS. On the AM's loop, as all of ApplicationMaster, except HistoryJobJson (any thread
// that holds the loop's data, i.e. the loop, before the finisher starts).

#include "am/application_master.h"
#include "common/strings.h"
#include "config/configuration.h"
#include "google/protobuf/util/json_util.h"
#include "history/history_reader.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace tony::am {
namespace {

using Json = nlohmann::ordered_json;

// The task's state as the summary table and the history name it.
std::string_view EndStateName(TaskState state) {
  switch (state) {
    case TaskState::kSucceeded:
      return "SUCCEEDED";
    case TaskState::kFailed:
      return "FAILED";
    default:
      return "STOPPED";
  }
}

// JSON text of `value`; invalid UTF-8 (a task's diagnostics may hold any bytes) is replaced.
std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

void ApplicationMaster::OpenHistory(const std::string& tracking_url) {
  live_.name = job_.spec().name;
  live_.user = options_.user;
  live_.framework = job_.spec().framework;
  live_.backend = options_.backend;
  live_.queue = job_.spec().queue;
  if (options_.history_fs) {
    history::HistoryWriterOptions writer;
    writer.fs = options_.history_fs;
    writer.dirs = options_.history_dirs;
    writer.app_id = options_.app_id;
    writer.max_log_bytes = job_.spec().history_max_log_bytes;
    history_ = std::make_unique<history::HistoryWriter>(std::move(writer));
    spdlog::info("[{}] history at {}", options_.app_id,
                 options_.history_fs->Describe(history_->dir()));
  }
  absl::StatusOr<std::vector<config::Configuration::DumpedProperty>> conf =
      config::Configuration::ReadDumped(options_.conf_file);
  if (conf.ok()) {
    Json rows = Json::array();
    for (const auto& row : *conf) {
      rows.push_back({{"key", row.key}, {"value", row.value}, {"source", row.source}});
      live_.config.push_back({row.key, row.value, row.source});
    }
    if (history_) history_->Replace(history::kConfigFile, Dump(rows));
  } else {
    spdlog::warn("[{}] the history has no configuration: {}", options_.app_id,
                 ToStd(conf.status().message()));
  }
  if (history_) history_->Replace(history::kJobFile, HistoryJobJson());
  if (options_.submitted_ms > 0 && options_.am_attempt == 1) {
    RecordEvent({{"time_ms", options_.submitted_ms},
                 {"kind", history::kEventSubmitted},
                 {"user", options_.user},
                 {"name", job_.spec().name}});
  }
  RecordEvent({{"time_ms", clock_->WallMs()},
               {"kind", history::kEventAmStarted},
               {"attempt", options_.am_attempt},
               {"host", options_.host},
               {"tracking_url", tracking_url}});
}

void ApplicationMaster::RecordEvent(const nlohmann::ordered_json& event) {
  const std::string line = Dump(event);
  if (history_) history_->Event(line);
  int bad = 0;
  for (history::HistoryEvent& parsed : history::ParseEvents(line, &bad)) {
    live_.events.push_back(std::move(parsed));
  }
  // The live page shows the newest; the history keeps them all.
  if (live_.events.size() > kLiveEvents) {
    live_.events.erase(live_.events.begin(), live_.events.begin() + kLiveEvents / 4);
  }
}

void ApplicationMaster::RecordTransitions() {
  std::vector<TaskTransition> transitions = job_.TakeTransitions();
  for (const TaskTransition& t : transitions) {
    Json event = {{"time_ms", t.wall_ms}, {"task", t.task.ToString()}, {"attempt", t.attempt}};
    switch (t.to) {
      case TaskState::kRequested:
        event["kind"] = history::kEventTaskRequested;
        break;
      case TaskState::kAllocated:
        event["kind"] = history::kEventTaskAllocated;
        event["container"] = t.container_id;
        event["host"] = t.host;
        break;
      case TaskState::kRegistered:
        event["kind"] = history::kEventTaskRegistered;
        event["container"] = t.container_id;
        event["address"] = StrCat(t.host, ":", t.port);
        break;
      case TaskState::kRunning:
        event["kind"] = history::kEventTaskStarted;
        event["container"] = t.container_id;
        break;
      case TaskState::kSucceeded:
      case TaskState::kFailed:
      case TaskState::kFinished:
        event["kind"] = history::kEventTaskFinished;
        event["state"] = EndStateName(t.to);
        if (!t.container_id.empty()) event["container"] = t.container_id;
        if (t.exit_code) event["exit_code"] = *t.exit_code;
        if (!t.diagnostics.empty()) event["diagnostics"] = t.diagnostics;
        break;
      case TaskState::kNew:
        if (t.from != TaskState::kFailed) continue;
        event["kind"] = history::kEventTaskRestarted;
        event["diagnostics"] = t.diagnostics;
        break;
    }
    RecordEvent(event);
  }
}

void ApplicationMaster::RecordMetrics(const rpc::HeartbeatRequest& heartbeat) {
  const TaskRef task{heartbeat.task().type(), heartbeat.task().index()};
  const TaskRecord* record = job_.Find(task);
  if (record == nullptr || record->container_id != heartbeat.container_id()) return;
  const double cpu_seconds = heartbeat.cpu_seconds();
  const int64_t rss_bytes = heartbeat.rss_bytes();
  const int64_t now = clock_->WallMs();
  auto [last, first] = last_metric_ms_.try_emplace(task, now);
  // A GPU sample is taken at the metrics interval by the executor: each is kept.
  if (!first && !heartbeat.has_gpu_sample() &&
      now - last->second < job_.spec().metrics_interval_ms) {
    return;
  }
  last->second = now;
  Json line = {{"time_ms", now},
               {"task", task.ToString()},
               {"attempt", record->attempt},
               {"cpu_seconds", cpu_seconds},
               {"rss_bytes", rss_bytes}};
  history::MetricSample sample;
  sample.time_ms = now;
  sample.task = task.ToString();
  sample.attempt = record->attempt;
  sample.cpu_seconds = cpu_seconds;
  sample.rss_bytes = rss_bytes;
  if (heartbeat.has_gpu_sample()) {
    line["gpu_utilization"] = heartbeat.gpu_utilization();
    line["gpu_memory_bytes"] = heartbeat.gpu_memory_bytes();
    sample.gpu_utilization = heartbeat.gpu_utilization();
    sample.gpu_memory_bytes = heartbeat.gpu_memory_bytes();
  }
  if (history_) history_->Metric(Dump(line));
  live_.metrics.push_back(std::move(sample));
  if (live_.metrics.size() > kLiveSamples) {
    live_.metrics.erase(live_.metrics.begin(), live_.metrics.begin() + kLiveSamples / 4);
  }
}

void ApplicationMaster::RecordJobEnd() {
  RecordTransitions();
  Json event = {{"time_ms", clock_->WallMs()},
                {"kind", history::kEventFinished},
                {"state", ToString(job_.state())}};
  if (!job_.diagnostics().empty()) event["diagnostics"] = job_.diagnostics();
  RecordEvent(event);
}

void ApplicationMaster::AppendOutput(const rpc::AppendOutputRequest& request,
                                     Reply<rpc::AppendOutputResponse> reply) {
  const TaskRef task{request.task().type(), request.task().index()};
  // Output of the current attempt, or of an earlier one still draining.
  std::optional<int> attempt;
  if (const TaskRecord* record = job_.Find(task); record != nullptr) {
    if (record->container_id == request.container_id()) attempt = record->attempt;
    for (const AttemptRecord& earlier : record->previous_attempts) {
      if (earlier.container_id == request.container_id()) attempt = earlier.attempt;
    }
  }
  if (history_ && attempt) {
    const auto append = [&](const std::string& stream, int64_t offset, const std::string& data) {
      if (data.empty()) return;
      int64_t& have = output_offsets_[{request.container_id(), stream}];
      const int64_t end = offset + static_cast<int64_t>(data.size());
      if (end <= have) return;  // a retried call: already written
      std::string_view fresh = data;
      std::string gap;
      if (offset < have) {
        fresh.remove_prefix(static_cast<size_t>(have - offset));
      } else if (offset > have) {
        gap = StrCat("\n[tony: ", offset - have, " bytes of this output were not received]\n");
      }
      have = end;
      history_->Log(history::LogFileName(task.type, task.index, *attempt, stream),
                    gap.empty() ? fresh : std::string_view(gap += fresh));
    };
    append("stdout", request.stdout_offset(), request.stdout_data());
    append("stderr", request.stderr_offset(), request.stderr_data());
  }
  std::move(reply).Send();
}

std::string ApplicationMaster::HistoryJobJson() const {
  Json job = {{"format", history::kFormatVersion},  {"app_id", options_.app_id},
              {"name", job_.spec().name},           {"user", options_.user},
              {"framework", job_.spec().framework}, {"backend", options_.backend},
              {"queue", job_.spec().queue},         {"am_attempt", options_.am_attempt}};
  if (options_.submitted_ms > 0) job["submitted_ms"] = options_.submitted_ms;
  if (history_ && history_->dropped_bytes() > 0) {
    job["history_dropped_bytes"] = history_->dropped_bytes();
  }
  rpc::JobStatus proto;
  status_.Fill(&proto);
  proto.set_complete(finishing_);
  std::string status_text;
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(proto, &status_text, print);
  Json status = Json::parse(status_text, nullptr, /*allow_exceptions=*/false);
  if (status.is_object()) job["status"] = std::move(status);
  return Dump(job);
}

}  // namespace tony::am
