#pragma once
// The stacks of a task's processes, for the task's log when the task (or a member of its gang)
// hangs: for each process and thread its state, the kernel function it waits in (wchan) and the
// kernel's stack where it may be read, then Python's stacks by py-spy for the Python processes
// when py-spy is on the executor's PATH (docs/running-jobs.md, "Progress and hangs").
//
// Thread: any; it blocks while py-spy runs (at most kPySpyTimeoutMs a process).

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace tony::executor {

inline constexpr int64_t kPySpyTimeoutMs = 10000;

// Appends the report on the processes of `root`'s tree (below it only, with `below_root`: a
// sandbox's init is tony's) to the file at `path`, headed by `title`.
void WriteStacks(pid_t root, bool below_root, const std::string& title, const std::string& path);

}  // namespace tony::executor
