#pragma once
// Stages a job into its directory: the resolved configuration, the job's credentials, the zipped
// source directory, the venv and declared resources. The directory is 0700 and every file the
// user alone can read, whatever the umask. Any thread; touches only that directory.

#include <string>

#include "absl/status/status.h"
#include "config/configuration.h"
#include "config/job_spec.h"
#include "rpc/job_credentials.h"

namespace tony::client {

[[nodiscard]] absl::Status StageJob(const config::Configuration& conf, const config::JobSpec& spec,
                                    const std::string& working_dir, const std::string& job_dir,
                                    const rpc::JobCredentials& credentials);

}  // namespace tony::client
