#pragma once
// The layout of a job's history (docs/history.md describes it for other tools):
//
//   <intermediate>/<app_id>/      while the job runs (and if its AM died before the end)
//   <finished>/<app_id>/          once the AM recorded the end
//     job.json        the job: id, name, user, framework, backend, times, and its status (state,
//                     diagnostics, the task table) as of the last write; rewritten at the end
//     config.json     the resolved configuration: [{"key", "value", "source"}], by key
//     events.jsonl    one JSON object per line, in order: {"time_ms", "kind", ...}
//     metrics.jsonl   one sample per line: {"time_ms", "task", "attempt", "cpu_seconds",
//                     "rss_bytes", and where GPUs are: "gpu_utilization", "gpu_memory_bytes"}
//     logs/<type>-<index>-<attempt>.stdout|.stderr   each task attempt's output, as it printed it
//
// Every file is UTF-8 JSON except the logs, which are the task's bytes.

#include <memory>
#include <string>

#include "common/strings.h"
#include "history/history_fs.h"

namespace tony::history {

inline constexpr int kFormatVersion = 1;
inline constexpr char kJobFile[] = "job.json";
inline constexpr char kConfigFile[] = "config.json";
inline constexpr char kEventsFile[] = "events.jsonl";
inline constexpr char kMetricsFile[] = "metrics.jsonl";
inline constexpr char kLogsDir[] = "logs";

// Event kinds, in the order a job's life produces them.
inline constexpr char kEventSubmitted[] = "APPLICATION_SUBMITTED";
inline constexpr char kEventAmStarted[] = "AM_STARTED";
inline constexpr char kEventTaskRequested[] = "TASK_REQUESTED";
inline constexpr char kEventTaskAllocated[] = "TASK_ALLOCATED";
inline constexpr char kEventTaskRegistered[] = "TASK_REGISTERED";
inline constexpr char kEventTaskStarted[] = "TASK_STARTED";
inline constexpr char kEventTaskFinished[] = "TASK_FINISHED";
inline constexpr char kEventTaskRestarted[] = "TASK_RESTARTED";
inline constexpr char kEventTaskHung[] = "TASK_HUNG";              // diagnostics: why
inline constexpr char kEventTaskStraggling[] = "TASK_STRAGGLING";  // diagnostics: by how much
inline constexpr char kEventGangRestarted[] = "GANG_RESTARTED";    // diagnostics: why, who
inline constexpr char kEventTaskPreempting[] = "TASK_PREEMPTING";  // diagnostics: the container
// diagnostics: the parameters the preprocessing job handed on (tony.application.enable-preprocess)
inline constexpr char kEventModelParams[] = "MODEL_PARAMS";
// The job's end is decided (state, diagnostics); its tasks are being stopped.
inline constexpr char kEventDecided[] = "APPLICATION_DECIDED";
inline constexpr char kEventFinished[] = "APPLICATION_FINISHED";

// Where a job's history lives.
struct HistoryDirs {
  std::string intermediate;  // running jobs
  std::string finished;      // ended jobs
};

// A file system and the history directories on it.
struct HistoryStore {
  std::shared_ptr<HistoryFs> fs;
  HistoryDirs dirs;
};

// The directories of `location` (tony.history.location) where tony.history.intermediate and
// tony.history.finished ("" each) do not say otherwise.
inline HistoryDirs DirsAt(const std::string& location, const std::string& intermediate,
                          const std::string& finished) {
  return {intermediate.empty() ? StrCat(location, "/intermediate") : intermediate,
          finished.empty() ? StrCat(location, "/finished") : finished};
}

// "worker-1-0.stdout": the log file of one attempt's stream ("stdout" or "stderr").
inline std::string LogFileName(const std::string& type, int index, int attempt,
                               const std::string& stream) {
  return StrCat(type, "-", index, "-", attempt, ".", stream);
}

}  // namespace tony::history
