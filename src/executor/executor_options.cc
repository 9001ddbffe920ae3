// The executor's side of the launch contract: what the AM set in the task's container.

#include <cstdlib>
#include <string>

#include "common/net.h"
#include "common/strings.h"
#include "executor/task_executor.h"
#include "rpc/launch_contract.h"

namespace tony::executor {

absl::StatusOr<ExecutorOptions> ExecutorOptionsFromEnvironment() {
  ExecutorOptions options;
  std::string missing;
  auto get = [&](const char* name) -> std::string {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') {
      if (missing.empty()) missing = name;
      return "";
    }
    return value;
  };
  options.app_id = get(rpc::kEnvAppId);
  options.am_address = get(rpc::kEnvAmAddress);
  options.conf_file = get(rpc::kEnvConfFile);
  options.task.type = get(rpc::kEnvTaskType);
  const std::string index = get(rpc::kEnvTaskIndex);
  options.container_id = get(rpc::kEnvContainerId);
  // YARN names the container's log directories in LOG_DIRS.
  if (const char* dir = std::getenv(rpc::kEnvLogDir); dir != nullptr && dir[0] == '/') {
    options.log_dir = dir;
  } else if (const char* dirs = std::getenv("LOG_DIRS"); dirs != nullptr && *dirs != '\0') {
    options.log_dir = std::string(Split(dirs, ',')[0]);
  } else {
    options.log_dir = get(rpc::kEnvLogDir);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(StrCat("environment variable ", missing,
                                             " is not set; tony executor runs inside a "
                                             "container started by tony's AM"));
  }
  options.task.index = std::atoi(index.c_str());
  if (const char* attempt = std::getenv(rpc::kEnvTaskAttempt)) options.attempt = std::atoi(attempt);
  options.host = AdvertisedHost();
  return options;
}

}  // namespace tony::executor
