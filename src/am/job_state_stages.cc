// JobStateMachine's rules for prepare/training stages and group dependency timeouts
// (tony.application.prepare-stage, training-stage, group.<G>, dependency.<t>.timeout.after.<G>).

#include <algorithm>

#include "am/job_state.h"
#include "common/strings.h"

namespace tony::am {

int JobStateMachine::StageOf(const std::string& type) const {
  const auto& training = spec_.training_stage;
  const int training_step =
      std::find(training.begin(), training.end(), type) != training.end() ? 1 : 0;
  if (!spec_.preprocess) return training_step;
  return type == config::kPreprocessType ? 0 : 1 + training_step;
}

std::vector<std::string> JobStateMachine::StageGate(int stage) const {
  if (spec_.preprocess && stage == 0) return {config::kPreprocessType};
  return spec_.prepare_stage;
}

void JobStateMachine::MaybeStartTraining(Actions& actions) {
  while (true) {
    bool waiting = false;
    for (const TaskRecord& task : tasks_) waiting = waiting || task.awaiting_stage;
    if (!waiting) return;
    const std::vector<std::string> gate = StageGate(stage_);
    for (const TaskRecord& task : tasks_) {
      if (std::find(gate.begin(), gate.end(), task.ref.type) == gate.end()) continue;
      if (task.state == TaskState::kFailed) {
        Decide(JobState::kFailed,
               task.ref.type == config::kPreprocessType && spec_.preprocess
                   ? StrCat("the preprocessing job ", task.ref.ToString(),
                            " failed, so no other task starts")
                   : StrCat("prepare-stage task ", task.ref.ToString(),
                            " failed, so the training stage cannot start"),
               actions);
        return;
      }
      if (task.state != TaskState::kSucceeded) return;
    }
    // The next stage: a new gang, whose tasks get the cluster spec once all of them registered,
    // and whose allocation timeout counts from now.
    ++stage_;
    gang_released_ = false;
    gang_formed_ms_ = clock_->NowMs();
    for (TaskRecord& task : tasks_) {
      if (!task.awaiting_stage || StageOf(task.ref.type) > stage_) continue;
      task.awaiting_stage = false;
      SetState(task, TaskState::kRequested);
      actions.push_back(RequestContainer{task.ref.type, task.memory_mb});
    }
    Changed();
  }
}

void JobStateMachine::SetModelParams(const TaskRef& ref, const std::string& container_id,
                                     int attempt, std::string params) {
  const TaskRecord* task = Find(ref);
  if (task == nullptr || !spec_.preprocess || ref.type != config::kPreprocessType ||
      task->container_id != container_id || task->attempt != attempt || IsTerminal(task->state) ||
      params == model_params_) {
    return;
  }
  model_params_ = std::move(params);
  AddNotice({"MODEL_PARAMS", ref, task->attempt, clock_->WallMs(), model_params_});
  Changed();
}

void JobStateMachine::CheckDependencyTimeouts(int64_t now, Actions& actions) {
  for (const config::GroupDependency& dependency : spec_.dependencies) {
    const std::vector<std::string>& group = spec_.groups.at(dependency.group);
    auto done_at = group_done_at_ms_.find(dependency.group);
    if (done_at == group_done_at_ms_.end()) {
      bool done = true;
      for (const TaskRecord& task : tasks_) {
        if (std::find(group.begin(), group.end(), task.ref.type) != group.end()) {
          done = done && IsTerminal(task.state);
        }
      }
      if (done) group_done_at_ms_[dependency.group] = now;
      continue;
    }
    if (now - done_at->second < dependency.timeout_ms) continue;
    std::vector<std::string> late;
    for (const TaskRecord& task : tasks_) {
      if (task.ref.type == dependency.type && !IsTerminal(task.state) && !task.stop_requested &&
          !task.not_waited_for) {
        late.push_back(task.ref.ToString());
      }
    }
    if (late.empty()) continue;
    const std::string what = StrCat(Join(late, ", "), " still ran ", dependency.timeout_ms / 1000,
                                    " s after group ", dependency.group, " (", Join(group, ", "),
                                    ") finished (tony.application.dependency.", dependency.type,
                                    ".timeout.after.", dependency.group, ")");
    if (!dependency.ignored) {
      Decide(JobState::kFailed, what, actions);
      return;
    }
    // TonY's `.ignored`: the job stops waiting for them; they run on until it ends.
    for (TaskRecord& task : tasks_) {
      if (task.ref.type == dependency.type && !IsTerminal(task.state)) {
        events_.push_back({"DEPENDENCY_TIMEOUT", task.ref, task.attempt, clock_->WallMs(),
                           StrCat("no longer waited for: ", what)});
        task.not_waited_for = true;
      }
    }
    Changed();
    CheckTrackedDone(actions);
    if (decided()) return;
  }
}

}  // namespace tony::am
