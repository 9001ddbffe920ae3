#pragma once
// `tony config`: prints the resolved configuration of a job, optionally with each value's source.

#include <optional>

#include "cli/submit_options.h"
#include "config/job_spec.h"

namespace tony::cli {

// Returns the process exit code: 0 when the configuration is valid, 2 when it is not.
int RunConfigCommand(const SubmitOptions& options);

// Shared by config and submit: resolves and validates, printing warnings and the error.
// Returns nullopt (after printing "tony: error: ...") when the input is invalid.
struct ValidatedJob {
  config::ResolvedConfig resolved;
  config::JobSpec spec;
};
std::optional<ValidatedJob> ResolveAndValidate(const SubmitOptions& options);

}  // namespace tony::cli
