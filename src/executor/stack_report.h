#pragma once
// The stacks of a task's processes, for the task's log when the task (or a member of its gang)
// hangs: for each process and thread its state, the kernel function it waits in (wchan) and the
// kernel's stack where it may be read, then Python's stacks by py-spy for the Python processes
// when py-spy is on the executor's PATH, and the signal that makes a process that uses the
// tony_task helper write its own Python stacks (faulthandler) to the log (docs/running-jobs.md,
// "Progress and hangs").
//
// Thread: any; it blocks for at most its budget.

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>

namespace tony::executor {

// The most a report may take, py-spy and the processes' own handlers included.
inline constexpr int64_t kMaxStacksMs = 10000;

// Appends the report on the processes of `root`'s tree (below it only, with `below_root`: a
// sandbox's init is tony's) to the file open as `out_fd` (appending), headed by `title`, within
// `budget_ms`. The processes of the tree whose pid as they see it (in the task's PID namespace, if
// it has one) is in `faulthandler_pids`, and that catch `stacks_signal`, get it; a process outside
// the tree, or one whose pid was reused since the tree was read, never does.
void WriteStacks(pid_t root, bool below_root, const std::string& title, int out_fd,
                 int64_t budget_ms, const std::set<pid_t>& faulthandler_pids = {},
                 int stacks_signal = 0);

// The pid a process has in its innermost PID namespace (the last of NSpid in /proc/<pid>/status):
// what the process itself calls getpid(); `pid` where that cannot be read.
pid_t InnermostPid(pid_t pid);

}  // namespace tony::executor
