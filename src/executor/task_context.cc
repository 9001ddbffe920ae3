#include "executor/task_context.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "common/strings.h"
#include "executor/hadoop_env.h"
#include "rpc/launch_contract.h"

namespace tony::executor {

int AvailableCpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) return std::max(1, CPU_COUNT(&cpus));
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 && online < (1 << 20) ? static_cast<int>(online) : 1;
}

int MathThreads(const ExecutorOptions& options, const config::JobSpec& spec, int cpus) {
  const auto type = spec.job_types.find(options.task.type);
  // The host's environment (a local job's shell; on YARN the container's, as the NodeManager's
  // admin-env or whitelist gives it) decides where it says; torchrun decides for the processes
  // it starts (1 each where it starts several); the job's own variables win over all of these.
  if (type == spec.job_types.end() || type->second.runs_torchrun ||
      std::getenv("OMP_NUM_THREADS") != nullptr) {
    return 0;
  }
  // The cores the task asked for, where they are its own: on YARN, and locally where
  // tony.local.vcores accounts them.
  if (options.on_yarn || spec.local.vcores.has_value()) {
    return std::max(1, type->second.resources.vcores);
  }
  // Locally the job's tasks share the machine's cores, none of them accounted: each its share.
  int tasks = 0;
  for (const auto& [name, job_type] : spec.job_types) tasks += job_type.instances;
  return std::max(1, cpus / std::max(1, tasks));
}

bool OutputsUploaded(const std::string& output_dir) {
  return output_dir.find("://") != std::string::npos && !output_dir.starts_with("file://");
}

std::string LocalOutputDir(const std::string& output_dir, const std::string& working_dir) {
  if (output_dir.empty()) return "";
  if (OutputsUploaded(output_dir)) return StrCat(working_dir, "/tony-outputs");
  if (output_dir.starts_with("file://")) return output_dir.substr(7);
  return output_dir;
}

runtime::TaskContext TaskContextFor(const ExecutorOptions& options, const config::JobSpec& spec,
                                    const rpc::WaitClusterSpecResponse& cluster) {
  runtime::TaskContext context;
  context.preprocessing = spec.preprocess && options.task.type == config::kPreprocessType;
  // The one task of a single-node job, and the preprocessing job, run alone: no framework's
  // cluster variables.
  context.framework = spec.single_node || context.preprocessing ? "standalone" : spec.framework;
  context.model_params = cluster.model_params();
  context.job_type = options.task.type;
  context.task_index = options.task.index;
  for (const auto& [name, list] : cluster.cluster()) {
    context.cluster[name] = {list.addresses().begin(), list.addresses().end()};
  }
  context.num_tracked_tasks = cluster.num_tracked_tasks();
  context.is_chief = cluster.is_chief();
  context.app_id = options.app_id;
  context.distributed_mode = std::string(config::ToString(spec.mode));
  context.session_id = cluster.session_id();
  const size_t colon = options.am_address.rfind(':');
  context.am_host = options.am_address.substr(0, colon);
  context.am_port =
      colon == std::string::npos ? 0 : std::atoi(options.am_address.substr(colon + 1).c_str());
  // The AM's count: a task that runs again in its container (a gang restart) has a new attempt.
  context.attempt_number = cluster.attempt();
  context.restart_count = cluster.restart_count();
  context.rendezvous_address = cluster.rendezvous_address();
  if (const config::JobTypeSpec* elastic = spec.ElasticType();
      elastic != nullptr && elastic->name == options.task.type && !spec.single_node) {
    context.elastic_nnodes = StrCat(elastic->min_instances, ":", elastic->instances);
    // Each loss of another worker costs the survivors one: as many as tony's own bound on gang
    // restarts, or as many as it restarts a task for the cluster's doing.
    context.elastic_max_restarts =
        spec.max_gang_restarts >= 0 ? spec.max_gang_restarts : kElasticDefaultMaxRestarts;
  }
  context.tensorboard_host = options.host;
  context.output_uri = spec.output_dir;
  context.cpu_threads = MathThreads(options, spec, AvailableCpus());
  context.container_envs = spec.container_envs;
  context.execution_envs = spec.execution_envs;
  for (const auto& [name, job_type] : spec.job_types) {
    if (job_type.role == config::JobTypeRole::kSidecar) context.sidecar_types.insert(name);
  }
  return context;
}

SpawnOptions UserProcessSpawn(const ExecutorOptions& options, const std::string& command,
                              const runtime::Environment& environment) {
  const bool on_yarn = options.on_yarn;
  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c", command};
  // On YARN, Hadoop's client configuration and classpath; what the job sets itself wins.
  if (on_yarn) {
    spawn.set_env =
        HadoopTaskEnvironment(std::filesystem::current_path().string(), options.log_dir);
  }
  for (const auto& [key, value] : environment) spawn.set_env[key] = value;
  spawn.unset_env = runtime::ScrubbedVariables();
  // tony's launch contract is for tony's processes; the user's sees none of it.
  for (std::string_view name : rpc::kInternalVariables) spawn.unset_env.emplace_back(name);
  spawn.stdout_path = StrCat(options.log_dir, "/stdout");
  spawn.stderr_path = StrCat(options.log_dir, "/stderr");
  // YARN's NodeManager aggregates a container's logs through the log directory's group.
  spawn.output_mode = on_yarn ? 0640 : 0600;
  // The user's processes share the container's process group: a resource manager that kills the
  // container's group (YARN's NodeManager) reaches them even when the executor is gone, while
  // the executor stops them by walking its own descendants (it is their subreaper).
  spawn.parent_death_signal = SIGKILL;
  return spawn;
}

}  // namespace tony::executor
