#include "am/history_recorder.h"

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

HistoryRecorder::HistoryRecorder(HistoryRecorderOptions options, const config::JobSpec* spec,
                                 const Clock* clock)
    : options_(std::move(options)), spec_(spec), clock_(clock) {}

void HistoryRecorder::Open(const std::string& tracking_url, const rpc::JobStatus& status) {
  live_.name = spec_->name;
  live_.user = options_.user;
  live_.framework = spec_->framework;
  live_.backend = options_.backend;
  live_.queue = spec_->queue;
  if (options_.fs) {
    history::HistoryWriterOptions writer;
    writer.fs = options_.fs;
    writer.dirs = options_.dirs;
    writer.app_id = options_.app_id;
    writer.max_log_bytes = spec_->history_max_log_bytes;
    writer.prompt_events = options_.prompt_events;
    writer_ = std::make_unique<history::HistoryWriter>(std::move(writer));
    spdlog::info("[{}] history at {}", options_.app_id, options_.fs->Describe(writer_->dir()));
  }
  absl::StatusOr<std::vector<config::Configuration::DumpedProperty>> conf =
      config::Configuration::ReadDumped(options_.conf_file);
  if (conf.ok()) {
    Json rows = Json::array();
    for (const auto& row : *conf) {
      rows.push_back({{"key", row.key}, {"value", row.value}, {"source", row.source}});
      live_.config.push_back({row.key, row.value, row.source});
    }
    if (writer_) writer_->Replace(history::kConfigFile, Dump(rows));
  } else {
    spdlog::warn("[{}] the history has no configuration: {}", options_.app_id,
                 ToStd(conf.status().message()));
  }
  if (writer_) writer_->Replace(history::kJobFile, JobJson(status));
  if (options_.submitted_ms > 0 && options_.am_attempt == 1) {
    history::HistoryEvent submitted;
    submitted.time_ms = options_.submitted_ms;
    submitted.kind = history::kEventSubmitted;
    submitted.user = options_.user;
    submitted.name = spec_->name;
    RecordEvent(submitted);
  }
  // A line the earlier attempt left partial ends here (readers skip it), not in this one's first.
  if (torn_events_ && writer_) writer_->Event("");
  history::HistoryEvent started;
  started.time_ms = clock_->WallMs();
  started.kind = history::kEventAmStarted;
  started.attempt = options_.am_attempt;
  started.host = options_.host;
  started.tracking_url = tracking_url;
  RecordEvent(started);
}

void HistoryRecorder::RecordEvent(const history::HistoryEvent& event) {
  const std::string line = history::EventLine(event);
  if (writer_) writer_->Event(line);
  // The live copy as a reader of the history sees it: read back from the line, whose text is
  // valid UTF-8 (a task's diagnostics may hold any bytes; the page is served as UTF-8).
  int bad = 0;
  for (history::HistoryEvent& read : history::ParseEvents(line, &bad)) {
    live_.events.push_back(std::move(read));
  }
  // The live page shows the newest; the history keeps them all.
  if (live_.events.size() > kLiveEvents) {
    live_.events.erase(live_.events.begin(), live_.events.begin() + kLiveEvents / 4);
  }
}

void HistoryRecorder::RecordChanges(const std::vector<TaskTransition>& transitions,
                                    const std::vector<TaskEvent>& notices) {
  // Each list is in the order the state machine made it, and both are numbered in that order
  // (seq): merged by it, a cause comes before what it led to within the same millisecond too.
  size_t n = 0;
  for (const TaskTransition& t : transitions) {
    for (; n < notices.size() && notices[n].seq < t.seq; ++n) RecordNotice(notices[n]);
    RecordTransition(t);
  }
  for (; n < notices.size(); ++n) RecordNotice(notices[n]);
}

void HistoryRecorder::RecordTransition(const TaskTransition& t) {
  history::HistoryEvent event;
  event.time_ms = t.wall_ms;
  event.task = t.task.ToString();
  event.attempt = t.attempt;
  switch (t.to) {
    case TaskState::kRequested:
      event.kind = history::kEventTaskRequested;
      break;
    case TaskState::kAllocated:
      if (t.from == TaskState::kFailed) {
        // Restarted in the container it has (a gang restart): no request in between.
        history::HistoryEvent restarted = event;
        restarted.kind = history::kEventTaskRestarted;
        restarted.diagnostics = t.diagnostics;
        RecordEvent(restarted);
      }
      event.kind = history::kEventTaskAllocated;
      event.container = t.container_id;
      event.host = t.host;
      break;
    case TaskState::kRegistered:
      event.kind = history::kEventTaskRegistered;
      event.container = t.container_id;
      event.address = StrCat(t.host, ":", t.port);
      break;
    case TaskState::kRunning:
      event.kind = history::kEventTaskStarted;
      event.container = t.container_id;
      break;
    case TaskState::kSucceeded:
    case TaskState::kFailed:
    case TaskState::kFinished:
      event.kind = history::kEventTaskFinished;
      event.state = EndStateName(t.to);
      event.container = t.container_id;
      event.exit_code = t.exit_code;
      event.diagnostics = t.diagnostics;
      break;
    case TaskState::kNew:
      if (t.from != TaskState::kFailed) return;
      event.kind = history::kEventTaskRestarted;
      event.diagnostics = t.diagnostics;
      break;
  }
  RecordEvent(event);
}

void HistoryRecorder::RecordNotice(const TaskEvent& notice) {
  history::HistoryEvent event;
  event.time_ms = notice.wall_ms;
  event.task = notice.task.ToString();
  event.attempt = notice.attempt;
  event.kind = notice.kind == "HUNG"           ? history::kEventTaskHung
               : notice.kind == "GANG_RESTART" ? history::kEventGangRestarted
               : notice.kind == "PREEMPTING"   ? history::kEventTaskPreempting
               : notice.kind == "MODEL_PARAMS" ? history::kEventModelParams
                                               : history::kEventTaskStraggling;
  event.diagnostics = notice.detail;
  RecordEvent(event);
}

void HistoryRecorder::RecordMetrics(const rpc::HeartbeatRequest& heartbeat, int attempt) {
  const TaskRef task{heartbeat.task().type(), heartbeat.task().index()};
  const int64_t now = clock_->WallMs();
  auto [last, first] = last_metric_ms_.try_emplace(task, now);
  // A GPU sample is taken at the metrics interval by the executor: each is kept.
  if (!first && !heartbeat.has_gpu_sample() && now - last->second < spec_->metrics_interval_ms) {
    return;
  }
  last->second = now;
  history::MetricSample sample;
  sample.time_ms = now;
  sample.task = task.ToString();
  sample.attempt = attempt;
  sample.cpu_seconds = heartbeat.cpu_seconds();
  sample.rss_bytes = heartbeat.rss_bytes();
  if (heartbeat.has_gpu_sample()) {
    sample.gpu_utilization = heartbeat.gpu_utilization();
    sample.gpu_memory_bytes = heartbeat.gpu_memory_bytes();
  }
  if (heartbeat.progress().has_step()) {
    sample.step = heartbeat.progress().step();
    sample.total = heartbeat.progress().total();
    sample.values = {heartbeat.progress().metrics().begin(), heartbeat.progress().metrics().end()};
  }
  if (writer_) writer_->Metric(history::MetricLine(sample));
  live_.metrics.push_back(std::move(sample));
  if (live_.metrics.size() > kLiveSamples) {
    live_.metrics.erase(live_.metrics.begin(), live_.metrics.begin() + kLiveSamples / 4);
  }
}

void HistoryRecorder::RecordJobState(const char* kind, JobState state,
                                     const std::string& diagnostics) {
  history::HistoryEvent event;
  event.time_ms = clock_->WallMs();
  event.kind = kind;
  event.state = std::string(ToString(state));
  event.diagnostics = diagnostics;
  RecordEvent(event);
}

void HistoryRecorder::RecordDecision(JobState state, const std::string& diagnostics) {
  RecordJobState(history::kEventDecided, state, diagnostics);
}

void HistoryRecorder::RecordJobEnd(JobState state, const std::string& diagnostics) {
  RecordJobState(history::kEventFinished, state, diagnostics);
}

void HistoryRecorder::AppendOutput(const TaskRef& task, int attempt,
                                   const std::string& container_id, const std::string& stream,
                                   int64_t offset, const std::string& data) {
  if (!writer_ || data.empty()) return;
  int64_t& have = output_offsets_[{container_id, stream}];
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
  writer_->Log(history::LogFileName(task.type, task.index, attempt, stream),
               gap.empty() ? fresh : std::string_view(gap += fresh));
}

absl::StatusOr<std::vector<history::HistoryEvent>> HistoryRecorder::ReadEarlierEvents() {
  if (!options_.fs) return absl::NotFoundError("the job keeps no history");
  std::string path =
      StrCat(options_.dirs.intermediate, "/", options_.app_id, "/", history::kEventsFile);
  absl::StatusOr<std::string> text = options_.fs->Read(path, 0, history::kMaxReadBytes);
  if (absl::IsNotFound(text.status())) {
    // The earlier attempt ended the job and moved its history, then died before the final status
    // was recorded: the finished history says how the job ended.
    const std::string finished =
        StrCat(options_.dirs.finished, "/", options_.app_id, "/", history::kEventsFile);
    if (absl::StatusOr<std::string> moved = options_.fs->Read(finished, 0, history::kMaxReadBytes);
        moved.ok()) {
      path = finished;
      text = std::move(moved);
    }
  }
  if (!text.ok()) return text.status();
  torn_events_ = !text->empty() && text->back() != '\n';
  int bad_lines = 0;
  std::vector<history::HistoryEvent> events = history::ParseEvents(*text, &bad_lines);
  if (bad_lines > 0) {
    spdlog::warn("[{}] {} lines of {} could not be read", options_.app_id, bad_lines, path);
  }
  return events;
}

void HistoryRecorder::ResumeOutput(const TaskRef& task, int attempt,
                                   const std::string& container_id) {
  if (!writer_) return;
  for (const char* stream : {"stdout", "stderr"}) {
    absl::StatusOr<history::HistoryEntry> entry = options_.fs->Stat(
        StrCat(options_.dirs.intermediate, "/", options_.app_id, "/", history::kLogsDir, "/",
               history::LogFileName(task.type, task.index, attempt, stream)));
    if (entry.ok()) output_offsets_[{container_id, stream}] = entry->size;
  }
}

std::string HistoryRecorder::JobJson(const rpc::JobStatus& proto) const {
  Json job = {{"format", history::kFormatVersion},
              {"app_id", options_.app_id},
              {"name", spec_->name},
              {"user", options_.user},
              {"framework", spec_->framework},
              {"backend", options_.backend},
              {"queue", spec_->queue},
              {"am_attempt", options_.am_attempt}};
  if (options_.submitted_ms > 0) job["submitted_ms"] = options_.submitted_ms;
  if (writer_ && writer_->dropped_bytes() > 0)
    job["history_dropped_bytes"] = writer_->dropped_bytes();
  std::string status_text;
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(proto, &status_text, print);
  Json status = Json::parse(status_text, nullptr, /*allow_exceptions=*/false);
  if (status.is_object()) job["status"] = std::move(status);
  return Dump(job);
}

absl::StatusOr<std::string> HistoryRecorder::Close(const std::string& job_json,
                                                   int64_t timeout_ms) {
  if (!writer_) return absl::FailedPreconditionError("the job keeps no history");
  if (absl::Status closed = writer_->Close(job_json, timeout_ms); !closed.ok()) {
    return absl::Status(closed.code(), StrCat("the job's history at ", writer_->dir(),
                                              " is incomplete: ", ToStd(closed.message())));
  }
  return options_.fs->Describe(writer_->dir());
}

}  // namespace tony::am
