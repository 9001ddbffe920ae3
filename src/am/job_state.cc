#include "am/job_state.h"

#include <algorithm>

#include "common/strings.h"

namespace tony::am {

bool IsTerminal(TaskState state) {
  return state == TaskState::kSucceeded || state == TaskState::kFailed ||
         state == TaskState::kFinished;
}

std::string_view ToString(TaskState state) {
  switch (state) {
    case TaskState::kNew:
      return "NEW";
    case TaskState::kRequested:
      return "REQUESTED";
    case TaskState::kAllocated:
      return "ALLOCATED";
    case TaskState::kRegistered:
      return "REGISTERED";
    case TaskState::kRunning:
      return "RUNNING";
    case TaskState::kSucceeded:
      return "SUCCEEDED";
    case TaskState::kFailed:
      return "FAILED";
    case TaskState::kFinished:
      return "FINISHED";
  }
  return "?";
}

std::string_view ToString(JobState state) {
  switch (state) {
    case JobState::kRunning:
      return "RUNNING";
    case JobState::kSucceeded:
      return "SUCCEEDED";
    case JobState::kFailed:
      return "FAILED";
    case JobState::kKilled:
      return "KILLED";
  }
  return "?";
}

JobStateMachine::JobStateMachine(config::JobSpec spec, const Clock* clock)
    : spec_(std::move(spec)), clock_(clock) {
  for (const auto& [name, type] : spec_.job_types) {
    for (int i = 0; i < type.instances; ++i) {
      TaskRecord task;
      task.ref = {name, i};
      task.role = type.role;
      task.stop_on_failure = type.stop_on_failure;
      task.stop_on_failure_reason = type.stop_on_failure_reason;
      task.max_restarts = type.max_restarts;
      task.restart_backoff_ms = type.restart_backoff_ms;
      task.transient_exit_codes = type.transient_exit_codes;
      task.memory_mb = type.resources.memory_mb;
      task.memory_growth = type.memory_growth;
      task.gang = type.restart_policy == config::RestartPolicy::kGang;
      task.elastic_min = type.min_instances;
      task_index_[{name, i}] = tasks_.size();
      tasks_.push_back(std::move(task));
    }
  }
}

Actions JobStateMachine::Start() {
  start_ms_ = clock_->NowMs();
  // A stall is measured from the job's start until the first tick: an AM stopped before it
  // ticked once must not blame the tasks that registered meanwhile.
  last_tick_ms_ = start_ms_;
  gang_formed_ms_ = start_ms_;
  start_wall_ms_ = clock_->WallMs();
  Actions actions;
  for (TaskRecord& task : tasks_) {
    if (StageOf(task.ref.type) > stage_) {
      task.awaiting_stage = true;  // requested once the stages before it succeeded
      continue;
    }
    SetState(task, TaskState::kRequested);
    actions.push_back(RequestContainer{task.ref.type, task.memory_mb});
  }
  Changed();
  return actions;
}

// Called for every task on every event (the AM answers its waiters), so not a linear search.
const TaskRecord* JobStateMachine::Find(const TaskRef& ref) const {
  auto it = task_index_.find({ref.type, ref.index});
  return it == task_index_.end() ? nullptr : &tasks_[it->second];
}

TaskRecord* JobStateMachine::MutableFind(const TaskRef& ref) {
  return const_cast<TaskRecord*>(Find(ref));
}

TaskRecord* JobStateMachine::FindByContainer(const std::string& container_id) {
  auto it = std::find_if(tasks_.begin(), tasks_.end(), [&](const TaskRecord& t) {
    return !container_id.empty() && t.container_id == container_id;
  });
  return it == tasks_.end() ? nullptr : &*it;
}

Actions JobStateMachine::OnContainerAllocated(const std::string& container_id,
                                              const std::string& job_type, const std::string& host,
                                              const std::string& log_dir, int64_t memory_mb) {
  Actions actions;
  TaskRecord* chosen = nullptr;
  TaskRecord* other_size = nullptr;
  if (!decided()) {
    for (TaskRecord& task : tasks_) {
      if (task.ref.type != job_type || task.state != TaskState::kRequested) continue;
      if (memory_mb <= 0 || task.memory_mb == memory_mb) {
        chosen = &task;
        break;
      }
      if (other_size == nullptr) other_size = &task;
    }
  }
  if (chosen == nullptr) chosen = other_size;
  if (chosen == nullptr) {
    actions.push_back(ReleaseContainer{container_id});
    return actions;
  }
  chosen->container_id = container_id;
  chosen->host = host;
  chosen->log_dir = log_dir;
  chosen->allocated_at_ms = clock_->NowMs();
  chosen->start_wall_ms = clock_->WallMs();
  SetState(*chosen, TaskState::kAllocated);
  actions.push_back(LaunchTask{chosen->ref});
  Changed();
  return actions;
}

absl::StatusOr<Actions> JobStateMachine::OnTaskRegistered(const TaskRef& ref,
                                                          const std::string& container_id,
                                                          const std::string& host, int port) {
  TaskRecord* task = MutableFind(ref);
  if (task == nullptr) {
    return absl::NotFoundError(StrCat("no task ", ref.ToString(), " in this job"));
  }
  if (task->container_id != container_id) {
    return absl::FailedPreconditionError(StrCat("task ", ref.ToString(), " runs in container ",
                                                task->container_id, ", not ", container_id));
  }
  if (task->state != TaskState::kAllocated) {
    if (task->state == TaskState::kRegistered || task->state == TaskState::kRunning) {
      return Actions{};  // a retried registration
    }
    return absl::FailedPreconditionError(
        StrCat("task ", ref.ToString(), " cannot register in state ", ToString(task->state)));
  }
  if (port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(StrCat("task ", ref.ToString(), ": invalid port ", port));
  }
  task->host = host;
  task->port = port;
  task->awaiting_in_place = false;
  task->adopted = false;
  SetState(*task, TaskState::kRegistered);
  task->last_heartbeat_ms = clock_->NowMs();
  Actions actions;
  if (decided()) {
    StopTask(*task, actions);
  } else if (gang_released_ || (spec_.mode == config::DistributedMode::kFcfs &&
                                clock_->NowMs() >= gang_hold_until_ms_)) {
    SetState(*task, TaskState::kRunning);
    actions.push_back(SendClusterSpec{task->ref});
  } else {
    ReleaseGangIfComplete(actions);
  }
  Changed();
  return actions;
}

void JobStateMachine::ReleaseGangIfComplete(Actions& actions) {
  const int64_t now = clock_->NowMs();
  if (now < gang_hold_until_ms_) return;  // a gang restart's backoff
  if (spec_.mode == config::DistributedMode::kGang) {
    for (const TaskRecord& task : tasks_) {
      if (task.awaiting_stage) continue;  // the next gang
      // A member still being stopped for a gang restart is not part of the new gang yet.
      const bool ready = task.state == TaskState::kRegistered ||
                         (task.state == TaskState::kRunning && task.gang_restart.empty()) ||
                         IsTerminal(task.state);
      if (!ready) return;
    }
    gang_released_ = true;
  }
  for (TaskRecord& task : tasks_) {
    if (task.state == TaskState::kRegistered) {
      SetState(task, TaskState::kRunning);
      task.last_heartbeat_ms = now;
      actions.push_back(SendClusterSpec{task.ref});
    }
  }
}

bool JobStateMachine::ClusterSpecReleased(const TaskRef& ref) const {
  const TaskRecord* task = Find(ref);
  return task != nullptr && (task->state == TaskState::kRunning || IsTerminal(task->state)) &&
         task->port > 0;
}

std::map<std::string, std::vector<std::string>> JobStateMachine::ClusterSpec() const {
  std::map<std::string, std::vector<std::string>> spec;
  for (const TaskRecord& task : tasks_) {
    // The preprocessing job runs before the others and is never part of their cluster.
    if (spec_.preprocess && task.ref.type == config::kPreprocessType) continue;
    auto& addresses = spec[task.ref.type];
    if (static_cast<int>(addresses.size()) <= task.ref.index) {
      addresses.resize(task.ref.index + 1);
    }
    if (task.port > 0) addresses[task.ref.index] = StrCat(task.host, ":", task.port);
  }
  // A type none of whose tasks has an address yet (a later stage) is not part of the cluster.
  std::erase_if(spec, [](const auto& entry) {
    return std::all_of(entry.second.begin(), entry.second.end(),
                       [](const std::string& address) { return address.empty(); });
  });
  return spec;
}

void JobStateMachine::OnMemorySample(const TaskRef& ref, const std::string& container_id,
                                     int64_t rss_bytes) {
  TaskRecord* task = MutableFind(ref);
  if (task == nullptr || task->container_id != container_id) return;
  if (rss_bytes > task->peak_rss_bytes) {
    task->peak_rss_bytes = rss_bytes;
    Changed();
  }
}

void JobStateMachine::TaskEnded(TaskRecord& task, int exit_code, std::string diagnostics,
                                Actions& actions, bool executor_waits) {
  const TaskState before = task.state;
  if (!task.preempting.empty() && !task.stop_requested) {
    // Stopped ahead of the cluster's preemption: the cluster's doing, whatever its exit code.
    diagnostics = StrCat(task.preempting, " (its process ended with ", ExitText(exit_code), ")");
    exit_code = kExitPreempted;
  }
  if (!task.gang_restart.empty() && !task.stop_requested && !decided()) {
    // Stopped for its gang's restart: that is why it ended, whatever its exit code.
    task.exit_code = kExitGangRestart;
    task.diagnostics =
        StrCat(task.gang_restart, " (its process ended with ", ExitText(exit_code), ")");
    RestartMember(task, executor_waits,
                  StrCat("attempt ", task.attempt, " stopped for ", task.gang_restart), actions);
    return;
  }
  if (!task.hung.empty() && !task.stop_requested && task.preempting.empty()) {
    // Stopped for its hang: that is why it ended, whatever its exit code after the signal.
    exit_code = kExitHung;
    diagnostics = task.hung;
  }
  if (!task.stop_requested && exit_code != 0 && !decided() &&
      !(task.elastic_min > 0 && ElasticDone(task.ref.type))) {
    task.exit_code = exit_code;
    task.diagnostics = diagnostics;
    if (task.gang ? MaybeRestartGang(task, executor_waits, actions) : MaybeRestart(task, actions)) {
      return;
    }
  }
  task.exit_code = exit_code;
  task.end_wall_ms = clock_->WallMs();
  if (task.stop_requested) {
    SetState(task, TaskState::kFinished);
  } else {
    task.diagnostics = std::move(diagnostics);
    SetState(task, exit_code == 0 ? TaskState::kSucceeded : TaskState::kFailed);
  }
  Changed();
  if (!decided()) {
    if (task.state == TaskState::kSucceeded && task.elastic_min > 0) {
      ElasticMemberSucceeded(task, actions);
    }
    if (task.state == TaskState::kFailed) ApplyFailurePolicy(task, before, actions);
    if (!decided()) {
      // In GANG mode a task that ended before the barrier opened can never be waited for.
      if (spec_.mode == config::DistributedMode::kGang) ReleaseGangIfComplete(actions);
      MaybeStartTraining(actions);
      if (!decided()) CheckTrackedDone(actions);
    }
  }
}

void JobStateMachine::ApplyFailurePolicy(const TaskRecord& task, TaskState state_before,
                                         Actions& actions) {
  const std::string what = StrCat(task.ref.ToString(), " failed (", ExitText(*task.exit_code), ")",
                                  task.diagnostics.empty() ? "" : ": ", task.diagnostics);
  if (task.role == config::JobTypeRole::kSidecar) return;
  if (task.elastic_min > 0) {
    ElasticMemberLost(task, actions);
    return;
  }
  if (state_before == TaskState::kRequested || state_before == TaskState::kAllocated) {
    Decide(JobState::kFailed, StrCat("task ", what), actions);
  } else if (IsChief(task.ref)) {
    Decide(JobState::kFailed, StrCat("chief ", what), actions);
  } else if (task.gang) {
    // The rest of a collective cannot go on without a member: they would wait for it until their
    // own timeouts (gloo's is 30 minutes).
    Decide(JobState::kFailed,
           StrCat("task ", what, "; the rest of its gang (tony.", task.ref.type,
                  ".restart-policy = gang) cannot go on without it"),
           actions);
  } else if (task.stop_on_failure) {
    Decide(JobState::kFailed,
           StrCat("task ", what, "; ",
                  task.stop_on_failure_reason.empty()
                      ? StrCat(task.ref.type, " is in tony.application.stop-on-failure-jobtypes")
                      : task.stop_on_failure_reason),
           actions);
  } else if (spec_.fail_on_worker_failure && task.role == config::JobTypeRole::kTracked) {
    Decide(JobState::kFailed,
           StrCat("task ", what, "; tony.application.fail-on-worker-failure-enabled is true"),
           actions);
  }
}

void JobStateMachine::CheckTrackedDone(Actions& actions) {
  std::vector<std::string> failed;
  std::vector<std::string> excused;  // an elastic type's, of which enough succeeded
  std::map<std::string, bool> excused_types;
  for (const TaskRecord& task : tasks_) {
    if (task.role != config::JobTypeRole::kTracked) continue;
    if (!IsTerminal(task.state)) {
      if (task.not_waited_for) continue;
      return;
    }
    if (task.state == TaskState::kFailed) {
      bool excuse = false;
      if (task.elastic_min > 0) {
        // Once per type: the answer is the same for all its members.
        auto known = excused_types.try_emplace(task.ref.type, false);
        if (known.second) known.first->second = ElasticFailuresExcused(task.ref.type);
        excuse = known.first->second;
      }
      (excuse ? excused : failed).push_back(task.ref.ToString());
    }
  }
  if (spec_.chief) {
    // TonY's rule: the chief decides; other tracked failures are reported, not fatal.
    const TaskRecord* chief = Find(*spec_.chief);
    if (chief != nullptr && chief->state != TaskState::kSucceeded) {
      Decide(JobState::kFailed, StrCat("chief ", chief->ref.ToString(), " did not succeed"),
             actions);
      return;
    }
    Decide(JobState::kSucceeded,
           failed.empty() ? "" : StrCat("the chief succeeded; failed tasks: ", Join(failed, ", ")),
           actions);
    return;
  }
  if (!failed.empty()) {
    Decide(JobState::kFailed, StrCat("failed tasks: ", Join(failed, ", ")), actions);
  } else {
    Decide(JobState::kSucceeded,
           excused.empty() ? ""
                           : StrCat("enough elastic workers succeeded (tony.worker.min-instances); "
                                    "failed tasks: ",
                                    Join(excused, ", ")),
           actions);
  }
}

void JobStateMachine::Decide(JobState state, std::string diagnostics, Actions& actions) {
  if (decided()) return;  // the first final status wins
  state_ = state;
  diagnostics_ = std::move(diagnostics);
  end_wall_ms_ = clock_->WallMs();
  for (TaskRecord& task : tasks_) {
    if (!IsTerminal(task.state)) StopTask(task, actions);
  }
  actions.push_back(JobDecided{});
  Changed();
}

void JobStateMachine::SetState(TaskRecord& task, TaskState state) {
  TaskTransition transition{
      task.ref,          task.attempt, task.state, state,        clock_->WallMs(),
      task.container_id, task.host,    task.port,  std::nullopt, ""};
  if (IsTerminal(state)) {
    transition.exit_code = task.exit_code;
    transition.diagnostics = task.diagnostics;
  }
  task.state = state;
  AddTransition(std::move(transition));
}

void JobStateMachine::StopTask(TaskRecord& task, Actions& actions) {
  if (task.stop_requested || IsTerminal(task.state)) return;
  task.stop_requested = true;
  if (task.container_id.empty()) {
    // Never got a container: nothing runs, so it is finished at once.
    task.end_wall_ms = clock_->WallMs();
    SetState(task, TaskState::kFinished);
  } else {
    actions.push_back(StopContainer{task.container_id});
  }
  Changed();
}

Actions JobStateMachine::OnTick() {
  Actions actions;
  if (decided()) return actions;
  const int64_t now = clock_->NowMs();
  // Ticks come every fraction of a heartbeat interval. A gap of several intervals means the AM
  // itself did not run (stopped, starved, or its clock jumped): the heartbeats that arrived
  // meanwhile still wait in its queue, so no task is blamed for the AM's stall; their deadlines
  // start again now.
  const int64_t stall_ms = last_tick_ms_ > 0 ? now - last_tick_ms_ : 0;
  last_tick_ms_ = now;
  if (stall_ms > std::max<int64_t>(kMinStallMs, 2 * spec_.heartbeat_interval_ms)) {
    last_stall_ms_ = stall_ms;
    for (TaskRecord& task : tasks_) {
      if (task.state == TaskState::kRunning)
        task.last_heartbeat_ms = std::max(task.last_heartbeat_ms, now);
    }
  }
  const int64_t elapsed = now - start_ms_;
  const int64_t gang_elapsed = now - gang_formed_ms_;
  if (spec_.application_timeout_ms > 0 && elapsed >= spec_.application_timeout_ms) {
    Decide(JobState::kFailed,
           StrCat("the application timed out after ", spec_.application_timeout_ms,
                  " ms (tony.application.timeout)"),
           actions);
    return actions;
  }
  CheckDependencyTimeouts(now, actions);
  if (decided()) return actions;
  FindStragglers();
  ResolveOverdueResults(now, actions);
  if (decided()) return actions;
  for (TaskRecord& task : tasks_) {
    if (task.state == TaskState::kNew && task.restart_at_ms > 0 && now >= task.restart_at_ms) {
      task.restart_at_ms = 0;
      SetState(task, TaskState::kRequested);
      actions.push_back(RequestContainer{task.ref.type, task.memory_mb});
      Changed();
    }
  }
  // A gang restart's backoff has passed: the members that registered again may go.
  if (gang_restarts_ > 0 && !gang_released_ && now >= gang_hold_until_ms_) {
    ReleaseGangIfComplete(actions);
  }
  if (spec_.mode == config::DistributedMode::kGang && !gang_released_ &&
      spec_.allocation_timeout_ms >= 0 && gang_elapsed >= spec_.allocation_timeout_ms) {
    std::vector<std::string> missing;
    for (const TaskRecord& task : tasks_) {
      if (task.state == TaskState::kRequested) {
        const config::JobTypeSpec* type = spec_.Find(task.ref.type);
        const std::string& placement = type != nullptr && !type->placement.empty()
                                           ? type->placement
                                           : spec_.application_placement;
        missing.push_back(StrCat(task.ref.ToString(), " (no container",
                                 placement.empty() ? "" : StrCat("; placement ", placement), ")"));
      } else if (task.state == TaskState::kAllocated) {
        missing.push_back(
            StrCat(task.ref.ToString(), " (container ", task.container_id, " not registered)"));
      }
    }
    if (!missing.empty()) {
      Decide(JobState::kFailed,
             StrCat("not every task registered within ", spec_.allocation_timeout_ms,
                    " ms (tony.container.allocation.timeout); missing: ", Join(missing, ", ")),
             actions);
      return actions;
    }
  }
  for (TaskRecord& task : tasks_) {
    if (decided()) break;
    if (task.state == TaskState::kAllocated && !task.stop_requested &&
        spec_.registration_timeout_ms >= 0 &&
        now - task.allocated_at_ms >= spec_.registration_timeout_ms) {
      Decide(JobState::kFailed,
             StrCat("task ", task.ref.ToString(), " (container ", task.container_id,
                    ") did not register within ", spec_.registration_timeout_ms,
                    " ms (tony.container.registration.timeout)"),
             actions);
    } else if (task.state == TaskState::kRunning && !task.stop_requested &&
               !task.pending_result.has_value()) {
      const int64_t limit = spec_.heartbeat_interval_ms * spec_.max_missed_heartbeats;
      if (now - task.last_heartbeat_ms > limit) {
        const std::string container = task.container_id;
        TaskEnded(
            task, kExitLostHeartbeat,
            StrCat("no heartbeat for ", now - task.last_heartbeat_ms, " ms (",
                   spec_.max_missed_heartbeats, " x ", spec_.heartbeat_interval_ms, " ms allowed)"),
            actions);
        actions.push_back(StopContainer{container});
      }
    }
  }
  return actions;
}

Actions JobStateMachine::Kill(const std::string& reason) {
  Actions actions;
  Decide(JobState::kKilled, reason, actions);
  return actions;
}

Actions JobStateMachine::Fail(const std::string& reason) {
  Actions actions;
  Decide(JobState::kFailed, reason, actions);
  return actions;
}

void JobStateMachine::FinishRemaining() {
  for (TaskRecord& task : tasks_) {
    if (IsTerminal(task.state)) continue;
    task.end_wall_ms = clock_->WallMs();
    SetState(task, TaskState::kFinished);
  }
  Changed();
}

}  // namespace tony::am
