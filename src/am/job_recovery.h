#pragma once
// What an AM attempt that adopts the running tasks of an earlier one (tony.am.retry-count) learns
// of the job from the history that attempt wrote (history/history_format.h): each task's attempt,
// state, container and address, and how its earlier attempts ended. The history is written behind
// the job by a thread of its own, so its last moments may be missing; what the executors report
// to the new attempt settles the rest.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "am/job_state.h"
#include "history/history_reader.h"

namespace tony::am {

struct RecoveredTask {
  int attempt = 0;
  TaskState state = TaskState::kNew;
  std::string container_id;
  std::string host;
  int port = 0;
  std::optional<int> exit_code;  // terminal states
  std::string diagnostics;
  int64_t start_wall_ms = 0;
  int64_t end_wall_ms = 0;
  std::vector<AttemptRecord> previous_attempts;
};

struct RecoveredJob {
  std::map<std::string, RecoveredTask> tasks;  // by "type:index"
  int gang_restarts = 0;
  int am_attempts = 0;          // AM_STARTED events
  int64_t started_wall_ms = 0;  // the first AM_STARTED's time; 0: none
  bool ended = false;           // an earlier attempt recorded the job's end
  // An earlier attempt decided the job (APPLICATION_DECIDED or _FINISHED): its state
  // ("SUCCEEDED", "FAILED", "KILLED") and diagnostics; "" while it runs.
  std::string decided_state;
  std::string decided_diagnostics;
  std::string model_params;  // the preprocessing job's (MODEL_PARAMS), once it succeeded
};

// Replays the history's events; events of tasks the job does not have are the caller's to ignore.
RecoveredJob RecoverFromHistory(const std::vector<history::HistoryEvent>& events);

}  // namespace tony::am
