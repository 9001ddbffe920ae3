#pragma once
// The tony_task Python module, which the executor puts beside each task so that its code can
// report progress without a dependency: `import tony_task; tony_task.progress(step, total=...,
// loss=...)`. It appends one line a report to the file named by TONY_PROGRESS_FILE (the format
// ProgressTracker reads; docs/running-jobs.md, "Progress and hangs"), and registers Python's
// faulthandler on the stacks signal when nothing else uses that signal.
//
// Thread: the executor's main thread, before the user process starts.

#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace tony::executor {

// The module's source.
extern const char kTonyTaskModule[];

// Writes the module into `dir` (created 0700) and returns what the task's environment gains:
// TONY_PROGRESS_FILE, and PYTHONPATH with `dir` first, before `pythonpath` (the task's own, if
// any).
absl::StatusOr<std::map<std::string, std::string>> InstallTaskHelper(const std::string& dir,
                                                                     const std::string& pythonpath);

}  // namespace tony::executor
