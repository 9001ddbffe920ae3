#pragma once
// `tony logs APP`: what a job's tasks printed, from the job's history (history/history_format.h),
// which the AM writes as the tasks print (within about a heartbeat and a second) and keeps after
// the job. One mechanism for both backends, during and after the job, and after a YARN AM is gone.
//
// Without --task, every task's output, each under a header; --follow prints new output as it
// comes, each line prefixed with its task ("[worker:1] ..."), until the job's history is finished.
// Bytes that could upset a terminal (control characters, invalid UTF-8) are shown escaped.

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "config/job_spec.h"
#include "history/history_format.h"
#include "history/history_fs.h"

namespace tony::client {

struct LogsOptions {
  std::string app_id;
  std::optional<config::TaskRef> task;  // all tasks if unset
  bool stdout_stream = true;
  bool stderr_stream = false;
  bool follow = false;
  int64_t poll_ms = 500;  // --follow: how often to look for new output
  // --follow for a job just submitted: wait for its history to appear instead of failing.
  bool wait_for_history = false;
  // --follow: lines longer than this are cut (with "..."), so that no line floods a terminal.
  size_t max_line = 4096;
};

// "worker:1" as a TaskRef; InvalidArgument naming the text otherwise.
absl::StatusOr<config::TaskRef> ParseTaskFlag(const std::string& text);

// Prints the logs; returns the exit code: 0, 2 for a job without history or a task without
// output (one line on `err`), 1 when the history cannot be read. `interrupted` ends --follow.
int ShowLogs(
    history::HistoryFs& fs, const history::HistoryDirs& dirs, const LogsOptions& options,
    std::ostream& out, std::ostream& err,
    const std::function<bool()>& interrupted = [] { return false; });

}  // namespace tony::client
