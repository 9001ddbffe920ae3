// The two reports of a task's end: its executor's, and the backend's of its container. The
// backend's is authoritative where they differ in substance (YARN's over-memory, preemption and
// lost-node statuses); the executor's carries the user process's own exit code and stderr.

#include "am/job_state.h"
#include "common/strings.h"

namespace tony::am {

Actions JobStateMachine::OnExecutorResult(const TaskRef& ref, const std::string& container_id,
                                          int exit_code, const std::string& diagnostics,
                                          bool provisional, bool executor_stopping, int attempt) {
  Actions actions;
  TaskRecord* task = MutableFind(ref);
  if (task == nullptr || task->container_id != container_id || IsTerminal(task->state) ||
      (attempt >= 0 && attempt < task->attempt)) {
    return actions;
  }
  if (provisional && !task->stop_requested && exit_code != 0) {
    task->pending_result = {exit_code, diagnostics};
    task->pending_result_until_ms = clock_->NowMs() + kProvisionalResultWaitMs;
    task->pending_executor_stopping = executor_stopping;
    return actions;
  }
  TaskEnded(*task, exit_code, diagnostics, actions, /*executor_waits=*/!executor_stopping);
  return actions;
}

Actions JobStateMachine::OnContainerCompleted(const std::string& container_id, int exit_code,
                                              const std::string& diagnostics, bool launch_failed) {
  Actions actions;
  TaskRecord* task = FindByContainer(container_id);
  if (task == nullptr || IsTerminal(task->state)) return actions;
  if (task->awaiting_in_place && !task->stop_requested && !decided()) {
    // It was to run again here, but its executor went first: a new container, which uses no
    // restart (the attempt that failed was counted).
    task->awaiting_in_place = false;
    task->container_id.clear();
    task->log_dir.clear();
    SetState(*task, TaskState::kRequested);
    actions.push_back(RequestContainer{task->ref.type, task->memory_mb});
    Changed();
    return actions;
  }
  if (task->pending_result.has_value()) {
    // The resource manager's own status (over memory, preempted, lost: negative codes) says why
    // the container was ended; a plain exit code adds nothing to the executor's result.
    auto [code, why] = *std::move(task->pending_result);
    task->pending_result.reset();
    if (exit_code < 0) {
      TaskEnded(*task, exit_code, diagnostics, actions);
    } else {
      TaskEnded(*task, code, why, actions);
    }
    return actions;
  }
  std::string why = diagnostics;
  if (task->state == TaskState::kAllocated && !launch_failed && !task->stop_requested) {
    why = StrCat("container ", container_id, " exited before its executor registered (",
                 ExitText(exit_code), ")", diagnostics.empty() ? "" : ": ", diagnostics);
  }
  TaskEnded(*task, exit_code == 0 && task->state != TaskState::kRunning ? 1 : exit_code, why,
            actions);
  return actions;
}

Actions JobStateMachine::OnPreemptionNotice(const std::string& container_id) {
  TaskRecord* task = FindByContainer(container_id);
  if (task == nullptr || IsTerminal(task->state) || task->stop_requested ||
      !task->preempting.empty() || decided()) {
    return {};
  }
  task->preempting = StrCat("the cluster preempts its container ", container_id,
                            "; the task was stopped first so that it could checkpoint");
  events_.push_back({"PREEMPTING", task->ref, task->attempt, clock_->WallMs(), task->preempting});
  AddNotice(events_.back());
  Changed();
  return {};
}

void JobStateMachine::ResolveOverdueResults(int64_t now, Actions& actions) {
  for (TaskRecord& task : tasks_) {
    if (decided()) break;
    if (task.pending_result.has_value() && now >= task.pending_result_until_ms) {
      auto [code, why] = *std::move(task.pending_result);
      task.pending_result.reset();
      // The container did not end: its executor is still there, waiting for the answer (unless
      // it was itself told to stop).
      TaskEnded(task, code, why, actions, /*executor_waits=*/!task.pending_executor_stopping);
    }
  }
}

}  // namespace tony::am
