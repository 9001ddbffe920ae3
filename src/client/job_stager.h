#pragma once
// Stages a job into its directory: the resolved configuration, the secret, the zipped source
// directory, the venv and declared resources. Any thread; touches only that directory.

#include <string>

#include "absl/status/status.h"
#include "config/configuration.h"
#include "config/job_spec.h"

namespace tony::client {

[[nodiscard]] absl::Status StageJob(const config::Configuration& conf, const config::JobSpec& spec,
                                    const std::string& working_dir, const std::string& job_dir,
                                    const std::string& secret);

}  // namespace tony::client
