// The executor's side of the launch contract: what the AM set in the task's container.

#include "common/net.h"
#include "executor/task_executor.h"
#include "rpc/launch_contract.h"

namespace tony::executor {

absl::StatusOr<ExecutorOptions> ExecutorOptionsFromEnvironment() {
  absl::StatusOr<rpc::ExecutorLaunch> launch = rpc::ReadExecutorLaunch();
  if (!launch.ok()) return launch.status();
  ExecutorOptions options;
  options.app_id = launch->app_id;
  options.am_address = launch->am_address;
  options.am_address_file = launch->am_address_file;
  options.am_address_webhdfs = launch->am_address_webhdfs;
  options.am_address_webhdfs_token = launch->am_address_webhdfs_token;
  options.conf_file = launch->conf_file;
  options.task.type = launch->task_type;
  options.task.index = launch->task_index;
  options.attempt = launch->attempt;
  options.container_id = launch->container_id;
  options.log_dir = launch->log_dir;
  options.on_yarn = launch->on_yarn;
  options.host = launch->host.empty() ? AdvertisedHost() : launch->host;
  return options;
}

}  // namespace tony::executor
