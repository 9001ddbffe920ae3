#pragma once
// What the client prints about a job: a progress line per job type while it runs, and the final
// table of tasks with, for each failed task, why. Pure functions of a JobStatus.

#include <cstdint>
#include <string>
#include <vector>

#include "rpc/tony.pb.h"

namespace tony::client {

// "worker: 2 running, 1 succeeded | ps: 1 running"; counts in the order waiting (no container
// asked for yet: a later stage's tasks), requested, starting (a container, the executor not yet
// running the task), running, succeeded, failed, stopped; zero counts left out.
std::string ProgressLine(const rpc::JobStatus& status);

// How long tracked tasks may outlive a succeeded chief before LingeringTasksHint speaks up.
inline constexpr int64_t kLingeringHintAfterMs = 30000;

// For a running job whose chief:0 succeeded at least `after_ms` before `now_wall_ms` while tracked
// tasks keep it running (TensorFlow's ParameterServerStrategy: the workers and ps serve until
// stopped), one line naming them and the key that lets the job end without them; "" otherwise.
std::string LingeringTasksHint(const rpc::JobStatus& status, int64_t now_wall_ms,
                               int64_t after_ms = kLingeringHintAfterMs);

// A task's progress for a table: "7/100 loss=0.25", "step 7", or "-".
std::string ProgressText(const rpc::TaskProgress& progress);

// The final report: a header line with the job's state, a table (task, state, host:port, exit
// code, duration, progress when a task reports it, logs), each hung task's line, the diagnostics of
// each failed task, indented, and the last lines the leading task printed (chief:0, else worker:0),
// made TerminalSafe.
std::string Summary(const rpc::JobStatus& status);

// Text a task printed, made safe for a terminal: control characters (escape sequences included)
// and bytes that are not UTF-8 become '?', tabs become spaces, and each line is cut after
// `max_line` characters with "...".
std::string TerminalSafe(std::string_view text, size_t max_line = 300);

// Rows as aligned columns, two spaces apart; the first row is the header.
std::string FormatTable(const std::vector<std::vector<std::string>>& rows);

std::string_view ToString(rpc::JobState state);
std::string_view ToString(rpc::TaskState state);

}  // namespace tony::client
