#pragma once
// Reads jobs' histories (history_format.h) for `tony logs` and `tony history`. Every file may be
// partial (a job whose AM was killed mid-write) or damaged: readers skip what they cannot parse
// and say so, and never fail on it. The lines of events.jsonl and metrics.jsonl are typed here
// once, for the AM's writing (EventLine, MetricLine) and everyone's reading (ParseEvents,
// ParseMetrics).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "history/history_format.h"
#include "history/history_fs.h"

namespace tony::history {

struct JobLocation {
  std::string dir;        // the job's history directory
  bool finished = false;  // in the finished directory: the AM recorded the job's end
};

// One task attempt's row of job.json's task table (the JobStatus of src/rpc/tony.proto in
// protobuf's JSON mapping), with the fields the history shows.
struct TaskRow {
  std::string type;
  int index = 0;
  std::string state;  // "SUCCEEDED", "FAILED", "STOPPED", "RUNNING", ...
  int attempt = 0;    // the last one
  std::string host;
  int port = 0;
  std::optional<int> exit_code;
  std::string diagnostics;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  int64_t peak_rss_bytes = 0;
  std::optional<int64_t> step;  // the last progress it reported
  int64_t total = 0;            // 0: it said none
  std::string log_dir;  // where the backend keeps its logs: a path, or a URL (YARN's NodeManager)
  int64_t heartbeats = 0;                // taken by the AM from its executors
  std::vector<int> previous_exit_codes;  // of the attempts that ended and were restarted
  std::string Task() const { return type + ":" + std::to_string(index); }
};

// A job as its job.json says. Damaged or partial files give what could be read and a problem.
struct JobInfo {
  std::string app_id;
  std::string name;
  std::string user;
  std::string framework;
  std::string backend;
  std::string queue;
  std::string output_dir;  // where the tasks' outputs stay (JobStatus::output_dir); "" if unknown
  std::string state;       // "SUCCEEDED", "FAILED", "KILLED", "RUNNING"
  std::string diagnostics;
  int64_t submitted_ms = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  bool complete = false;  // the AM wrote the job's end
  bool finished = false;  // in the finished directory
  std::vector<TaskRow> tasks;
  std::vector<std::string> problems;  // what could not be read, for the reader to show
};

// job.json's text as a JobInfo; never fails (a problem is recorded instead).
JobInfo ParseJob(std::string_view text);

// One line of events.jsonl. Which fields each kind (history_format.h) carries: every one
// time_ms and kind; task events task and attempt; TASK_ALLOCATED container and host;
// TASK_REGISTERED container and address; TASK_STARTED container; TASK_FINISHED state, container,
// exit_code and diagnostics (those it has); TASK_RESTARTED diagnostics; APPLICATION_SUBMITTED
// user and name; AM_STARTED attempt (the AM's), host and tracking_url; APPLICATION_FINISHED state
// and diagnostics.
struct HistoryEvent {
  int64_t time_ms = 0;
  std::string kind;
  std::string task;  // "worker:1", or "" for the job's own
  int attempt = 0;
  std::string user;
  std::string name;
  std::string state;
  std::string container;
  std::string host;  // written as "host"
  // Written as "address" (host:port); read from "address", else from "host".
  std::string address;
  std::string tracking_url;
  std::optional<int> exit_code;
  std::string diagnostics;
};

struct MetricSample {
  int64_t time_ms = 0;
  std::string task;
  int attempt = 0;
  double cpu_seconds = 0;
  int64_t rss_bytes = 0;
  std::optional<double> gpu_utilization;  // percent
  std::optional<int64_t> gpu_memory_bytes;
  // What the task reported of its progress (tony.<type>.progress-pattern, the tony_task helper):
  // its step, the total when it said one, and its metrics (e.g. loss).
  std::optional<int64_t> step;
  int64_t total = 0;
  std::map<std::string, double> values;
};

// One line of events.jsonl / metrics.jsonl (no newline): the fields that are set, in a fixed
// order; text that is not UTF-8 is replaced.
std::string EventLine(const HistoryEvent& event);
std::string MetricLine(const MetricSample& sample);

// The lines of events.jsonl / metrics.jsonl; `bad_lines` counts those that could not be read (a
// job killed mid-write leaves a partial last line).
std::vector<HistoryEvent> ParseEvents(std::string_view text, int* bad_lines);
std::vector<MetricSample> ParseMetrics(std::string_view text, int* bad_lines);

struct ConfigRow {
  std::string key, value, source;
};
std::vector<ConfigRow> ParseConfig(std::string_view text, std::string* problem);

// Where `app_id`'s history is: the finished directory first. kNotFound names both directories.
absl::StatusOr<JobLocation> FindJob(HistoryFs& fs, const HistoryDirs& dirs,
                                    const std::string& app_id);

// Every job in both directories (finished first when a job is in both), each from its job.json
// (damaged ones with their problems), newest first. A directory that does not exist is empty.
absl::StatusOr<std::vector<JobInfo>> ListJobs(HistoryFs& fs, const HistoryDirs& dirs);

// The largest history file a reader reads whole; a larger one is read in part.
inline constexpr int64_t kMaxReadBytes = int64_t{64} << 20;

// An ended job's history past the retention (tony.history.retention-sec).
struct ExpiredHistory {
  std::string app_id;
  std::string dir;
  int64_t age_ms = 0;  // since its job.json (else its directory) was last written
};

// The jobs in the finished directory whose history is older than `retention_sec` (none when it is
// <= 0). A job in the intermediate directory is running, or its AM died before it could move
// it: it expires only when `ended` (if given) says, for its application id, that the job has
// ended, e.g. that the local job's AM is gone. A missing directory has none.
absl::StatusOr<std::vector<ExpiredHistory>> FindExpiredHistory(
    HistoryFs& fs, const HistoryDirs& dirs, int64_t retention_sec, int64_t now_ms,
    const std::function<bool(const std::string& app_id)>& ended = nullptr);

// One task attempt's log file.
struct LogFile {
  std::string type;
  int index = 0;
  int attempt = 0;
  std::string stream;  // "stdout" or "stderr"
  std::string name;    // LogFileName(type, index, attempt, stream)
  int64_t size = 0;
  std::string Task() const { return type + ":" + std::to_string(index); }
};

// "worker-1-0.stdout" as a LogFile (size 0); nullopt for any other name. Task types may hold
// '-': the index and attempt are the last two fields.
std::optional<LogFile> ParseLogName(std::string_view name);

// The job's log files, by task type, index, attempt, then stdout before stderr. A job that has
// printed nothing yet has none.
absl::StatusOr<std::vector<LogFile>> ListLogs(HistoryFs& fs, const std::string& job_dir);

}  // namespace tony::history
