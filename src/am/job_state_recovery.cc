// JobStateMachine::Recover: an AM attempt that adopts the running tasks of an earlier one takes
// the job up where the history of that attempt left it (am/job_recovery.h).

#include <algorithm>

#include "am/job_recovery.h"
#include "am/job_state.h"
#include "common/strings.h"

namespace tony::am {

Actions JobStateMachine::Recover(const RecoveredJob& job,
                                 const std::map<std::string, std::string>& live_containers) {
  start_ms_ = clock_->NowMs();
  last_tick_ms_ = start_ms_;
  gang_formed_ms_ = start_ms_;
  start_wall_ms_ = clock_->WallMs();
  gang_restarts_ = job.gang_restarts;
  counted_gang_restarts_ = job.gang_restarts;
  Actions actions;
  std::set<std::string> claimed;
  std::vector<TaskRecord*> lost;
  const auto& training = spec_.training_stage;
  for (TaskRecord& task : tasks_) {
    auto recovered = job.tasks.find(task.ref.ToString());
    if (recovered == job.tasks.end()) {
      // Never asked for: as Start would.
      if (std::find(training.begin(), training.end(), task.ref.type) != training.end()) {
        task.awaiting_stage = true;
        continue;
      }
      SetState(task, TaskState::kRequested);
      actions.push_back(RequestContainer{task.ref.type, task.memory_mb});
      continue;
    }
    const RecoveredTask& r = recovered->second;
    task.attempt = r.attempt;
    task.previous_attempts = r.previous_attempts;
    for (const AttemptRecord& previous : r.previous_attempts) {
      if (previous.exit_code == kExitGangRestart) continue;  // the gang's, counted there
      ++(ExitCountsAgainstRestarts(previous.exit_code, task.transient_exit_codes)
             ? task.restarts_used
             : task.free_restarts);
    }
    task.start_wall_ms = r.start_wall_ms;
    if (IsTerminal(r.state)) {
      // The history has its end already: no transition.
      task.state = r.state;
      task.container_id = r.container_id;
      task.host = r.host;
      task.port = r.port;
      task.exit_code = r.exit_code;
      task.diagnostics = r.diagnostics;
      task.end_wall_ms = r.end_wall_ms;
      continue;
    }
    if (r.container_id.empty() || r.state == TaskState::kNew || r.state == TaskState::kRequested) {
      SetState(task, TaskState::kRequested);
      actions.push_back(RequestContainer{task.ref.type, task.memory_mb});
      continue;
    }
    task.container_id = r.container_id;
    task.host = r.host;
    task.port = r.port;
    task.allocated_at_ms = start_ms_;
    task.last_heartbeat_ms = start_ms_;
    // A task that had its cluster spec runs on and heartbeats; one that had not registers again
    // with this attempt, whose gang barrier then decides.
    task.state = r.state == TaskState::kRunning ? TaskState::kRunning : TaskState::kAllocated;
    if (task.state == TaskState::kRunning) gang_released_ = true;
    if (auto live = live_containers.find(r.container_id); live != live_containers.end()) {
      claimed.insert(r.container_id);
      task.log_dir = live->second;
    } else {
      lost.push_back(&task);
    }
  }
  Changed();
  for (TaskRecord* task : lost) {
    TaskEnded(*task, kExitAborted,
              StrCat("its container ", task->container_id, " ended while no AM ran"), actions);
  }
  for (const auto& [container, log_dir] : live_containers) {
    if (!claimed.contains(container)) actions.push_back(StopContainer{container});
  }
  if (!decided()) MaybeStartTraining(actions);
  if (!decided()) CheckTrackedDone(actions);
  return actions;
}

}  // namespace tony::am
