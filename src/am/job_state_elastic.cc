// An elastic PyTorch job's workers (tony.worker.min-instances): torchrun's agents meet in the AM's
// c10d store and re-form their group by themselves when one is lost, so tony replaces a lost
// worker alone (restart policy task) and the others go on. The job goes on while at least
// min-instances workers are running, waiting for their replacement, or succeeded. Once one worker
// succeeded, the group is done: no member is replaced any more, replacements that have not
// started are not needed, and the failed members are excused if at least min-instances succeeded
// (a replacement that joins too late finds the rendezvous closed and fails).

#include <algorithm>

#include "am/job_state.h"
#include "common/strings.h"

namespace tony::am {

bool JobStateMachine::ElasticDone(const std::string& type) const {
  return std::any_of(tasks_.begin(), tasks_.end(), [&](const TaskRecord& task) {
    return task.ref.type == type && task.state == TaskState::kSucceeded;
  });
}

void JobStateMachine::ElasticMemberSucceeded(const TaskRecord& task, Actions& actions) {
  for (TaskRecord& member : tasks_) {
    if (member.ref.type != task.ref.type) continue;
    // Its user process has not started: waiting out a restart's backoff, for a container, or for
    // its executor.
    if (member.state == TaskState::kNew || member.state == TaskState::kRequested ||
        member.state == TaskState::kAllocated) {
      StopTask(member, actions);
    }
  }
}

void JobStateMachine::ElasticMemberLost(const TaskRecord& task, Actions& actions) {
  if (ElasticDone(task.ref.type)) return;  // excused or not at the job's end
  int left = 0;
  for (const TaskRecord& member : tasks_) {
    if (member.ref.type == task.ref.type &&
        (!IsTerminal(member.state) || member.state == TaskState::kSucceeded)) {
      ++left;
    }
  }
  if (left >= task.elastic_min) return;
  Decide(JobState::kFailed,
         StrCat("task ", task.ref.ToString(), " failed (", ExitText(*task.exit_code), ")",
                task.diagnostics.empty() ? "" : ": ", task.diagnostics, "; ", left, " of its ",
                task.ref.type, "s are left, fewer than tony.", task.ref.type,
                ".min-instances = ", task.elastic_min),
         actions);
}

bool JobStateMachine::ElasticFailuresExcused(const std::string& type) const {
  int succeeded = 0;
  int min = 0;
  for (const TaskRecord& task : tasks_) {
    if (task.ref.type != type) continue;
    min = task.elastic_min;
    succeeded += task.state == TaskState::kSucceeded;
  }
  return min > 0 && succeeded >= min;
}

}  // namespace tony::am
