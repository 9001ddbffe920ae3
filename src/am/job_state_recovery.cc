// JobStateMachine::Recover: an AM attempt that adopts the running tasks of an earlier one takes
// the job up where the history of that attempt left it (am/job_recovery.h).

#include <algorithm>

#include "am/job_recovery.h"
#include "am/job_state.h"
#include "common/strings.h"

namespace tony::am {

Actions JobStateMachine::Recover(const RecoveredJob& job,
                                 const std::map<std::string, std::string>& live_containers) {
  const int64_t now = clock_->NowMs();
  start_wall_ms_ = clock_->WallMs();
  // The job started with the first attempt (tony.application.timeout counts from there).
  if (job.started_wall_ms > 0 && job.started_wall_ms < start_wall_ms_) {
    start_wall_ms_ = job.started_wall_ms;
  }
  start_ms_ = now - (clock_->WallMs() - start_wall_ms_);
  last_tick_ms_ = now;
  gang_formed_ms_ = now;
  gang_restarts_ = job.gang_restarts;
  counted_gang_restarts_ = job.gang_restarts;
  Actions actions;
  std::set<std::string> claimed;
  std::vector<TaskRecord*> lost;
  std::set<const TaskRecord*> lost_set;
  model_params_ = job.model_params;
  // The stages the earlier attempts passed: each whose gate's tasks had all succeeded.
  int last_stage = 0;
  for (const TaskRecord& task : tasks_) last_stage = std::max(last_stage, StageOf(task.ref.type));
  auto gate_passed = [&](int stage) {
    const std::vector<std::string> gate = StageGate(stage);
    for (const TaskRecord& task : tasks_) {
      if (std::find(gate.begin(), gate.end(), task.ref.type) == gate.end()) continue;
      auto recovered = job.tasks.find(task.ref.ToString());
      if (recovered == job.tasks.end() || recovered->second.state != TaskState::kSucceeded) {
        return false;
      }
    }
    return true;
  };
  while (stage_ < last_stage && gate_passed(stage_)) ++stage_;
  // Elastic types one of whose members had succeeded: done, so nothing of them is asked for again.
  std::set<std::string> elastic_done;
  for (const TaskRecord& task : tasks_) {
    auto recovered = job.tasks.find(task.ref.ToString());
    if (task.elastic_min > 0 && recovered != job.tasks.end() &&
        recovered->second.state == TaskState::kSucceeded) {
      elastic_done.insert(task.ref.type);
    }
  }
  for (TaskRecord& task : tasks_) {
    auto recovered = job.tasks.find(task.ref.ToString());
    if (recovered == job.tasks.end()) {
      // Never asked for: as Start would.
      if (StageOf(task.ref.type) > stage_) {
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
    if ((r.container_id.empty() || r.state == TaskState::kNew ||
         r.state == TaskState::kRequested) &&
        elastic_done.contains(task.ref.type)) {
      task.stop_requested = true;
      task.end_wall_ms = clock_->WallMs();
      SetState(task, TaskState::kFinished);
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
    task.allocated_at_ms = now;
    task.adopted = true;
    task.last_heartbeat_ms = now;
    // Restarted in this container by its gang's restart, its executor waiting to run it again.
    task.awaiting_in_place = r.state == TaskState::kAllocated && !r.previous_attempts.empty() &&
                             r.previous_attempts.back().container_id == r.container_id;
    // A task that had its cluster spec runs on and heartbeats; one that had not registers again
    // with this attempt, whose gang barrier then decides.
    task.state = r.state == TaskState::kRunning ? TaskState::kRunning : TaskState::kAllocated;
    if (task.state == TaskState::kRunning) gang_released_ = true;
    if (auto live = live_containers.find(r.container_id); live != live_containers.end()) {
      claimed.insert(r.container_id);
      task.log_dir = live->second;
    } else {
      lost.push_back(&task);
      lost_set.insert(&task);
    }
  }
  // A gang restart the earlier attempt began and did not finish: a member still running an
  // attempt older than another member's is stopped for it, as that attempt would have, and the
  // gang forms anew.
  int newest_attempt = -1;
  for (const TaskRecord& task : tasks_) {
    if (task.gang && !IsTerminal(task.state))
      newest_attempt = std::max(newest_attempt, task.attempt);
  }
  for (TaskRecord& task : tasks_) {
    if (task.gang && task.state == TaskState::kRunning && task.attempt < newest_attempt &&
        !lost_set.contains(&task)) {
      task.gang_restart =
          StrCat("gang restart ", gang_restarts_, " (begun by the earlier AM attempt)");
      gang_released_ = false;
    }
  }
  Changed();
  if (!job.decided_state.empty()) {
    // The earlier attempt decided the job: so does this one, stopping what runs.
    Decide(job.decided_state == "SUCCEEDED" ? JobState::kSucceeded
           : job.decided_state == "KILLED"  ? JobState::kKilled
                                            : JobState::kFailed,
           job.decided_diagnostics, actions);
  }
  for (TaskRecord* task : lost) {
    TaskEnded(*task, kExitAborted,
              StrCat("its container ", task->container_id, " ended while no AM ran"), actions);
  }
  for (const auto& [container, log_dir] : live_containers) {
    if (!claimed.contains(container)) actions.push_back(StopContainer{container});
  }
  // An elastic group that was done still needs no replacement.
  for (const TaskRecord& task : tasks_) {
    if (decided()) break;
    if (task.elastic_min > 0 && task.state == TaskState::kSucceeded) {
      ElasticMemberSucceeded(task, actions);
    }
  }
  if (!decided()) MaybeStartTraining(actions);
  if (!decided()) CheckTrackedDone(actions);
  return actions;
}

}  // namespace tony::am
