// What tasks report of their progress, as the state machine keeps it: the latest step of each
// task, hung tasks (tony.task.hang-timeout-ms), stragglers (tony.task.straggler-steps) and the
// job's overall progress.

#include <algorithm>

#include "am/job_state.h"
#include "common/strings.h"

namespace tony::am {

void JobStateMachine::FindStragglers() {
  if (spec_.straggler_steps <= 0) return;
  std::map<std::string, std::vector<int64_t>> steps;  // of each type's running tasks
  for (const TaskRecord& task : tasks_) {
    if (task.state == TaskState::kRunning && task.progress.has_step) {
      steps[task.ref.type].push_back(task.progress.step);
    }
  }
  for (auto& [type, values] : steps) {
    std::sort(values.begin(), values.end());
  }
  for (TaskRecord& task : tasks_) {
    const auto type = steps.find(task.ref.type);
    if (task.state != TaskState::kRunning || !task.progress.has_step || type == steps.end() ||
        type->second.size() < 2) {
      task.straggler.clear();
      task.straggler_reported = false;
      continue;
    }
    const std::vector<int64_t>& sorted = type->second;
    const int64_t median = sorted[sorted.size() / 2];
    const int64_t lag = median - task.progress.step;
    if (lag <= spec_.straggler_steps) {
      if (!task.straggler.empty()) Changed();
      task.straggler.clear();
      continue;
    }
    // Said once an attempt: a task that hovers at the bound must not grow the job's status.
    const bool newly = task.straggler.empty() && !task.straggler_reported;
    if (task.straggler.empty()) Changed();
    task.straggler = StrCat(task.ref.ToString(), " is a straggler: at step ", task.progress.step,
                            ", ", lag, " behind the median of the running ", task.ref.type,
                            " tasks (tony.task.straggler-steps = ", spec_.straggler_steps, ")");
    if (newly) {
      task.straggler_reported = true;
      events_.push_back({"STRAGGLER", task.ref, task.attempt, clock_->WallMs(), task.straggler});
      AddNotice(events_.back());
    }
  }
}

float JobStateMachine::Progress() const {
  if (decided()) return 1.0f;
  double sum = 0;
  double ended = 0;
  int tracked = 0;
  bool totals = false;
  for (const TaskRecord& task : tasks_) {
    if (task.role != config::JobTypeRole::kTracked) continue;
    ++tracked;
    if (IsTerminal(task.state)) {
      sum += 1;
      ended += 1;
    } else if (task.progress.has_step && task.progress.total > 0) {
      totals = true;
      sum += std::clamp(
          static_cast<double>(task.progress.step) / static_cast<double>(task.progress.total), 0.0,
          1.0);
    }
  }
  if (tracked == 0) return 0.0f;
  return static_cast<float>((totals ? sum : ended) / tracked);
}

HeartbeatAnswer JobStateMachine::OnHeartbeat(const TaskRef& ref, const std::string& container_id,
                                             const HeartbeatReport& report) {
  HeartbeatAnswer answer;
  TaskRecord* task = MutableFind(ref);
  if (task == nullptr || task->container_id != container_id) {
    answer.stop = true;
    return answer;
  }
  task->last_heartbeat_ms = clock_->NowMs();
  ++task->heartbeats;
  // Sent before a result the executor reported since (it does not wait for a heartbeat's
  // answer, which comes at the AM's next tick): an earlier attempt's, or one that a result
  // awaiting the container's end overtook. What it says is older than what the AM knows.
  const bool overtaken =
      (report.attempt >= 0 && report.attempt < task->attempt) || task->pending_result.has_value();
  if (overtaken) {
    answer.stop = task->stop_requested || IsTerminal(task->state);
    return answer;
  }
  if (task->adopted &&
      (task->state == TaskState::kAllocated || task->state == TaskState::kRegistered)) {
    // Only a task with its cluster spec heartbeats: the earlier AM attempt released it, and died
    // before its history said so.
    task->adopted = false;
    SetState(*task, TaskState::kRunning);
    gang_released_ = true;
    Changed();
  }
  OnMemorySample(ref, container_id, report.rss_bytes);
  const int64_t now_wall = clock_->WallMs();
  if (report.progress.has_step &&
      (!task->progress.has_step || task->progress.step != report.progress.step)) {
    Changed();
  }
  task->progress = report.progress;
  task->progress_wall_ms = now_wall - std::max<int64_t>(report.quiet_ms, 0);
  if (!task->dump_stacks_reason.empty()) {
    answer.dump_stacks = true;
    answer.reason = std::exchange(task->dump_stacks_reason, "");
  }
  if (task->state == TaskState::kRunning && !task->stop_requested && task->hung.empty() &&
      task->gang_restart.empty() && !decided() && spec_.hang_timeout_ms > 0 &&
      report.quiet_ms >= spec_.hang_timeout_ms) {
    task->hung = StrCat(ref.ToString(), " is hung: no progress for ", report.quiet_ms,
                        " ms (tony.task.hang-timeout-ms = ", spec_.hang_timeout_ms, ")",
                        task->progress.has_step ? StrCat(", at step ", task->progress.step) : "");
    events_.push_back({"HUNG", ref, task->attempt, now_wall, task->hung});
    AddNotice(events_.back());
    // The rest of the gang's stacks too: a hang is often a wait on another member.
    for (TaskRecord& other : tasks_) {
      if (&other != task && other.state == TaskState::kRunning && !other.stop_requested) {
        other.dump_stacks_reason = task->hung;
      }
    }
    answer.dump_stacks = true;
    answer.reason = task->hung;
    Changed();
  }
  answer.stop = task->stop_requested || IsTerminal(task->state) || !task->hung.empty() ||
                !task->gang_restart.empty() || !task->preempting.empty();
  if (answer.stop && answer.reason.empty()) {
    answer.reason = !task->hung.empty()         ? task->hung
                    : !task->preempting.empty() ? task->preempting
                                                : task->gang_restart;
  }
  return answer;
}

}  // namespace tony::am
