#pragma once
// The task's own files as the executor reads them while the task runs: opened once, before the
// task starts, never through a link nor blocking on a FIFO; read by descriptor, so that the task
// can rename or replace what is at the name but never the file the executor holds. What they add
// goes to the task's ProgressTracker.
//
// Threads: plain functions; one thread per descriptor.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "executor/progress_tracker.h"

namespace tony::executor {

// How much new output FeedTaskFile reads in one call; more is skipped (a task that prints this
// fast is not quiet, and its latest lines are what say its step). Also the size past which the
// reports file starts again.
inline constexpr int64_t kMaxProgressReadBytes = 1 << 20;

// Opens (creating it) the task's file at `path` with `flags` and `mode`: the descriptor, or -1
// (logged) if it cannot be opened or is not a regular file.
int OpenTaskFile(const std::string& path, int flags, mode_t mode);

// Feeds what was appended to the task's file `fd` since `*offset` to `tracker` as `stream`,
// advancing `*offset`. A file that shrank was written over: it is read from its start (the
// tracker is told). Past kMaxProgressReadBytes of new bytes, only the last that many are read (the
// tracker is told). The reports file, once that much of it was read, is emptied and starts
// again, so that a task reporting every step for days does not fill the disk. fd < 0: nothing.
void FeedTaskFile(int fd, ProgressTracker::Stream stream, int64_t* offset,
                  ProgressTracker& tracker);

// The most the preprocessing job may hand on (its line's text after the marker).
inline constexpr size_t kMaxModelParamsBytes = size_t{32} * 1024;

// The preprocessing job's parameters: what follows the first `marker` (config::kModelParamsMarker)
// in the task's stdout `fd`, read from its start, to the end of that line ("\r" dropped); "" when
// no line has it. An error when there is more than kMaxModelParamsBytes of it, or the file cannot
// be read.
[[nodiscard]] absl::StatusOr<std::string> FindModelParams(int fd, std::string_view marker);

}  // namespace tony::executor
