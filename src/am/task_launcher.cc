#include "am/task_launcher.h"

#include "cluster/staging.h"
#include "rpc/launch_contract.h"

namespace tony::am {

const cluster::Container* TaskLauncher::Find(const std::string& container_id) const {
  auto it = containers_.find(container_id);
  return it != containers_.end() ? &it->second : nullptr;
}

cluster::LaunchSpec TaskLauncher::Build(const config::TaskRef& task, int attempt,
                                        const cluster::Container& container) const {
  const config::JobTypeSpec* type = spec_->Find(task.type);
  cluster::LaunchSpec launch;
  launch.argv = {options_.executable, "executor"};
  launch.env = options_.task_env;
  for (const auto& [key, value] : spec_->container_envs) launch.env[key] = value;
  for (const auto& [key, value] : container.env) launch.env[key] = value;
  if (type != nullptr) {
    for (const auto& [key, value] : type->docker_env) launch.env[key] = value;
  }
  rpc::ExecutorLaunch contract;
  contract.app_id = options_.app_id;
  contract.am_address = am_address_;
  contract.conf_file = options_.conf_file;
  contract.task_type = task.type;
  contract.task_index = task.index;
  contract.attempt = attempt;
  contract.container_id = container.id;
  contract.on_yarn = options_.on_yarn;
  // On YARN, container.log_dir is the NodeManager's page of the logs; the executor asks YARN.
  if (!contract.on_yarn) contract.log_dir = container.log_dir;
  contract.host = container.host;
  contract.am_address_file = options_.am_address_file;
  contract.am_address_webhdfs = options_.am_address_webhdfs;
  contract.am_address_webhdfs_token = options_.am_address_webhdfs_token;
  if (!options_.checkpoint_dir.empty()) {
    launch.env[rpc::kEnvCheckpointDir] = options_.checkpoint_dir;
  }
  for (std::string_view name : rpc::ExecutorLaunch::kVariables) launch.env.erase(std::string(name));
  for (auto& [key, value] : contract.ToEnv()) launch.env[key] = std::move(value);
  launch.secrets[rpc::kTaskCredentialAlias] =
      rpc::TaskCredential(options_.credentials.secret, task.type, task.index, container.id);
  if (options_.credentials.tls()) {
    launch.secrets[rpc::kAmCertAlias] = options_.credentials.am_cert_pem;
  }
  if (!options_.webhdfs_ca.empty()) {
    launch.secrets[rpc::kWebHdfsCaAlias] = options_.webhdfs_ca;
  }
  launch.resources = cluster::ContainerResources(
      options_.staging_dir, options_.has_src, options_.venv_source,
      type != nullptr ? type->localized_resources : std::vector<std::string>{});
  launch.resources.insert(launch.resources.end(), options_.task_resources.begin(),
                          options_.task_resources.end());
  return launch;
}

}  // namespace tony::am
