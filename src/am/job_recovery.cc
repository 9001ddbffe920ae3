#include "am/job_recovery.h"

#include <cstdlib>

#include "history/history_format.h"

namespace tony::am {

RecoveredJob RecoverFromHistory(const std::vector<history::HistoryEvent>& events) {
  RecoveredJob job;
  for (const history::HistoryEvent& event : events) {
    if (event.kind == history::kEventAmStarted) {
      if (job.am_attempts++ == 0) job.started_wall_ms = event.time_ms;
      continue;
    }
    if (event.kind == history::kEventDecided || event.kind == history::kEventFinished) {
      job.ended = job.ended || event.kind == history::kEventFinished;
      if (job.decided_state.empty()) {
        job.decided_state = event.state;
        job.decided_diagnostics = event.diagnostics;
      }
      continue;
    }
    if (event.kind == history::kEventGangRestarted) {
      ++job.gang_restarts;
      continue;
    }
    if (event.kind == history::kEventModelParams) {
      job.model_params = event.diagnostics;
      continue;
    }
    if (event.task.empty()) continue;
    RecoveredTask& task = job.tasks[event.task];
    if (event.kind == history::kEventTaskRestarted) {
      task.previous_attempts.push_back({task.attempt, task.container_id, task.exit_code.value_or(0),
                                        task.diagnostics, task.end_wall_ms});
      task.attempt = event.attempt;
      task.state = TaskState::kNew;
      task.exit_code.reset();
      task.diagnostics.clear();
      task.start_wall_ms = 0;
      task.end_wall_ms = 0;
      continue;
    }
    if (event.kind == history::kEventTaskRequested) {
      task.attempt = event.attempt;
      task.state = TaskState::kRequested;
      task.container_id.clear();
      task.host.clear();
      task.port = 0;
    } else if (event.kind == history::kEventTaskAllocated) {
      task.attempt = event.attempt;
      task.state = TaskState::kAllocated;
      task.container_id = event.container;
      task.host = event.host;
    } else if (event.kind == history::kEventTaskRegistered) {
      task.state = TaskState::kRegistered;
      const size_t colon = event.address.rfind(':');
      if (colon != std::string::npos) {
        task.host = event.address.substr(0, colon);
        task.port = std::atoi(event.address.substr(colon + 1).c_str());
      }
    } else if (event.kind == history::kEventTaskStarted) {
      task.state = TaskState::kRunning;
      task.start_wall_ms = event.time_ms;
    } else if (event.kind == history::kEventTaskFinished) {
      task.state = event.state == "SUCCEEDED" ? TaskState::kSucceeded
                   : event.state == "FAILED"  ? TaskState::kFailed
                                              : TaskState::kFinished;
      task.exit_code = event.exit_code;
      task.diagnostics = event.diagnostics;
      task.end_wall_ms = event.time_ms;
    }
  }
  return job;
}

}  // namespace tony::am
