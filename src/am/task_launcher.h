#pragma once
// What the AM starts in each granted container: the executor (`tony executor`), with the launch
// contract (rpc::ExecutorLaunch) over the job's variables, the task's own credential (and the
// AM's certificate with TLS) as secrets, never in a variable, and the job type's files. Keeps the
// granted containers until they are released.
//
// Threads: the AM's loop only.

#include <map>
#include <string>
#include <vector>

#include "cluster/container_allocator.h"
#include "config/job_spec.h"
#include "rpc/job_credentials.h"

namespace tony::am {

struct TaskLauncherOptions {
  std::string app_id;
  std::string executable;  // the tony binary executors run
  std::string conf_file;   // tony-final.xml, as executors read it
  rpc::JobCredentials credentials;
  bool on_yarn = false;
  std::string staging_dir;
  bool has_src = false;
  std::string venv_source;  // "" = none
  // What every task container gets besides its job type's files and variables.
  std::vector<cluster::LocalResource> task_resources;
  std::map<std::string, std::string> task_env;
  std::string checkpoint_dir;  // TONY_CHECKPOINT_DIR of every task; "": none
  // Where every AM attempt writes its address when a later one adopts the running tasks
  // (rpc::ExecutorLaunch::am_address_file); "": none will.
  std::string am_address_file;
  // YARN: how executors read it (AmOptions::am_address_webhdfs and the rest).
  std::string am_address_webhdfs;
  std::string am_address_webhdfs_token;
  std::string webhdfs_ca;  // AmOptions::webhdfs_ca
};

class TaskLauncher {
 public:
  TaskLauncher(TaskLauncherOptions options, const config::JobSpec* spec)
      : options_(std::move(options)), spec_(spec) {}

  // Where executors reach the AM (host:port), once its server listens.
  void SetAmAddress(std::string address) { am_address_ = std::move(address); }
  void Add(const cluster::Container& container) { containers_[container.id] = container; }
  void Forget(const std::string& container_id) { containers_.erase(container_id); }
  // A granted container, or nullptr.
  const cluster::Container* Find(const std::string& container_id) const;

  // What runs attempt `attempt` of `task` in `container`. Variables, lowest precedence first:
  // the job's (task_env), tony.containers.envs, the container's own (the backend's), the job
  // type's Docker variables, and the launch contract, which nothing overrides.
  cluster::LaunchSpec Build(const config::TaskRef& task, int attempt,
                            const cluster::Container& container) const;

 private:
  const TaskLauncherOptions options_;
  const config::JobSpec* const spec_;
  std::string am_address_;
  std::map<std::string, cluster::Container> containers_;  // granted, by id
};

}  // namespace tony::am
