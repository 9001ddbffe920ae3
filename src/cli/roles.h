#pragma once
// Entry points of tony's roles, wiring the concrete implementations together.

#include "cli/submit_options.h"

namespace tony::cli {

// `tony submit`: returns the process exit code.
int RunSubmit(SubmitOptions& options);
// `tony am`: the ApplicationMaster, started by a backend in the AM container.
int RunAm();
// `tony executor`: the TaskExecutor, started by the AM in a task container.
int RunExecutor();

// The path of the running tony binary.
std::string SelfExecutable();

}  // namespace tony::cli
