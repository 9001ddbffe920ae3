// Restarts after a task's failure or hang. Under restart policy `task` the task alone is started
// again in a new container, after its type's backoff. Under `gang` every running member of the
// gang (the tasks of the types whose policy is gang) is stopped too, and all start again together
// with a fresh rendezvous: the gang barrier closes until each has registered anew. A member whose
// executor is still there (it reported its result and waits for the answer) runs again in the
// container it has; only a member whose container is gone gets a new one.

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "am/job_state.h"
#include "common/strings.h"

namespace tony::am {
namespace {

// The longest wait between two gang restarts.
constexpr int64_t kMaxGangBackoffMs = 60000;

}  // namespace

bool ExitCountsAgainstRestarts(int exit_code, const std::set<int>& transient_exit_codes) {
  switch (exit_code) {
    case kExitAborted:
    case kExitDisksFailed:
    case kExitPreempted:
      return false;
    default:
      return !transient_exit_codes.contains(exit_code);
  }
}

void JobStateMachine::EndAttempt(TaskRecord& task, const std::string& detail, TaskState next) {
  task.adopted = false;
  const int64_t now_wall = clock_->WallMs();
  task.previous_attempts.push_back(
      {task.attempt, task.container_id, *task.exit_code, task.diagnostics, now_wall});
  AddTransition({task.ref, task.attempt, task.state, TaskState::kFailed, now_wall,
                 task.container_id, task.host, task.port, task.exit_code, task.diagnostics});
  task.attempt += 1;
  // The old address stays in the cluster spec until the new attempt registers its own.
  task.exit_code.reset();
  task.diagnostics.clear();
  task.hung.clear();
  task.gang_restart.clear();
  task.preempting.clear();
  task.dump_stacks_reason.clear();
  task.straggler.clear();
  task.straggler_reported = false;
  task.progress = {};
  task.progress_wall_ms = 0;
  task.pending_result.reset();
  task.awaiting_in_place = false;
  events_.push_back({"RESTARTED", task.ref, task.attempt, now_wall, detail});
  if (next == TaskState::kNew) {
    // It gets a new container.
    task.container_id.clear();
    task.log_dir.clear();
  }
  task.state = TaskState::kFailed;  // as the ended attempt left it
  SetState(task, next);
  transitions_.back().diagnostics = detail;
  Changed();
}

bool JobStateMachine::GrowMemory(TaskRecord& task) {
  const int code = *task.exit_code;
  if ((code != kExitOverPhysicalMemory && code != kExitOverVirtualMemory) ||
      task.memory_growth <= 1 || task.memory_grown || task.memory_mb <= 0) {
    return false;
  }
  task.memory_grown = true;
  const int64_t before = task.memory_mb;
  task.memory_mb =
      static_cast<int64_t>(std::ceil(static_cast<double>(before) * task.memory_growth));
  task.diagnostics =
      StrCat(task.diagnostics, task.diagnostics.empty() ? "" : "; ", "restarted with ",
             task.memory_mb, " MB instead of ", before, " MB (tony.", task.ref.type,
             ".memory-growth = ", absl::StrCat(task.memory_growth), ")");
  return true;
}

bool JobStateMachine::MaybeRestart(TaskRecord& task, Actions& actions) {
  // Past kMaxFreeRestarts, the cluster's ends and the transient codes count as any other.
  const bool grown = GrowMemory(task);
  const bool counts =
      !grown && (ExitCountsAgainstRestarts(*task.exit_code, task.transient_exit_codes) ||
                 task.free_restarts >= kMaxFreeRestarts);
  if (counts && task.restarts_used >= task.max_restarts) return false;
  ++(counts ? task.restarts_used : task.free_restarts);
  const std::string old_container = task.container_id;
  EndAttempt(
      task,
      StrCat("attempt ", task.attempt, " failed (", ExitText(*task.exit_code), "); restarting in ",
             task.restart_backoff_ms, " ms",
             grown
                 ? StrCat(" with ", task.memory_mb, " MB (tony.", task.ref.type, ".memory-growth)")
             : counts ? ""
                      : StrCat(" (not counted against tony.", task.ref.type, ".max-restarts)")),
      TaskState::kNew);
  // The old container may still be winding down; it must not linger. The new one is requested
  // at once without a backoff, else by OnTick once the backoff has passed.
  if (!old_container.empty()) actions.push_back(StopContainer{old_container});
  if (task.restart_backoff_ms <= 0) {
    task.restart_at_ms = 0;
    SetState(task, TaskState::kRequested);
    actions.push_back(RequestContainer{task.ref.type, task.memory_mb});
  } else {
    task.restart_at_ms = clock_->NowMs() + task.restart_backoff_ms;
  }
  return true;
}

bool JobStateMachine::MaybeRestartGang(TaskRecord& failed, bool executor_waits, Actions& actions) {
  // A gang with a member that has ended for good cannot meet again.
  for (const TaskRecord& member : tasks_) {
    if (member.gang && IsTerminal(member.state)) return false;
  }
  const bool grown = GrowMemory(failed);
  const bool counts =
      !grown && (ExitCountsAgainstRestarts(*failed.exit_code, failed.transient_exit_codes) ||
                 failed.free_restarts >= kMaxFreeRestarts);
  const bool job_limit = spec_.max_gang_restarts >= 0;
  if (counts) {
    if (job_limit ? counted_gang_restarts_ >= spec_.max_gang_restarts
                  : failed.restarts_used >= failed.max_restarts) {
      return false;
    }
    ++counted_gang_restarts_;
    ++failed.restarts_used;
  } else if (!grown) {
    ++failed.free_restarts;
  }
  ++gang_restarts_;
  int64_t backoff = std::max<int64_t>(failed.restart_backoff_ms, 0);
  for (int i = 1; i < counted_gang_restarts_ && backoff < kMaxGangBackoffMs; ++i) backoff *= 2;
  backoff = std::min(backoff, kMaxGangBackoffMs);
  const int64_t now = clock_->NowMs();
  gang_hold_until_ms_ = now + backoff;
  gang_formed_ms_ = gang_hold_until_ms_;
  gang_released_ = false;

  const std::string why =
      StrCat(failed.ref.ToString(), " failed (", ExitText(*failed.exit_code), ")");
  const std::string reason = StrCat("gang restart ", gang_restarts_, ": ", why);
  std::vector<std::string> stopped;
  for (TaskRecord& member : tasks_) {
    if (&member == &failed || !member.gang || IsTerminal(member.state) || member.stop_requested) {
      continue;
    }
    // A member that has not started its user process yet joins the new rendezvous as it is.
    if (member.state == TaskState::kRunning && member.gang_restart.empty()) {
      member.gang_restart = reason;
      stopped.push_back(member.ref.ToString());
    }
  }
  const std::string limit =
      grown     ? StrCat(" (not counted: it restarts with ", failed.memory_mb, " MB, tony.",
                         failed.ref.type, ".memory-growth)")
      : !counts ? " (not counted: the cluster's doing, or a transient exit code)"
      : job_limit
          ? StrCat(" (", counted_gang_restarts_,
                   " of tony.application.max-gang-restarts = ", spec_.max_gang_restarts, ")")
          : StrCat(" (", failed.restarts_used, " of tony.", failed.ref.type,
                   ".max-restarts = ", failed.max_restarts, ")");
  const std::string detail =
      StrCat(why, "; restarting the gang in ", backoff, " ms", limit,
             stopped.empty() ? "" : StrCat(", stopping ", Join(stopped, ", ")));
  events_.push_back({"GANG_RESTART", failed.ref, failed.attempt + 1, clock_->WallMs(), detail});
  AddNotice(events_.back());
  RestartMember(
      failed, executor_waits,
      StrCat("attempt ", failed.attempt, " failed (", ExitText(*failed.exit_code), "); ", reason),
      actions);
  return true;
}

void JobStateMachine::RestartMember(TaskRecord& task, bool executor_waits,
                                    const std::string& detail, Actions& actions) {
  const std::string old_container = task.container_id;
  // Not where the cluster is taking the container back.
  const bool in_place = executor_waits && !old_container.empty() && task.preempting.empty();
  EndAttempt(task, StrCat(detail, in_place ? "; again in its container" : "; in a new container"),
             in_place ? TaskState::kAllocated : TaskState::kNew);
  if (in_place) {
    // Its executor runs the user's command again once it has registered anew.
    task.allocated_at_ms = clock_->NowMs();
    task.awaiting_in_place = true;
    return;
  }
  if (!old_container.empty()) actions.push_back(StopContainer{old_container});
  task.restart_at_ms = 0;
  SetState(task, TaskState::kRequested);
  actions.push_back(RequestContainer{task.ref.type, task.memory_mb});
}

}  // namespace tony::am
