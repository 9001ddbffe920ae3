#pragma once
// What the client prints about a job: a progress line per job type while it runs, and the final
// table of tasks with, for each failed task, why. Pure functions of a JobStatus.

#include <string>
#include <vector>

#include "rpc/tony.pb.h"

namespace tony::client {

// "worker: 2 running, 1 succeeded | ps: 1 running"; counts in the order requested, running,
// succeeded, failed, stopped, zero counts left out.
std::string ProgressLine(const rpc::JobStatus& status);

// The final report: a header line with the job's state, a table (task, state, host:port, exit
// code, duration, logs) and the diagnostics of each failed task, indented.
std::string Summary(const rpc::JobStatus& status);

// Rows as aligned columns, two spaces apart; the first row is the header.
std::string FormatTable(const std::vector<std::vector<std::string>>& rows);

std::string_view ToString(rpc::JobState state);
std::string_view ToString(rpc::TaskState state);

}  // namespace tony::client
