#include "cli/roles.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "am/application_master.h"
#include "cli/config_command.h"
#include "client/tony_client.h"
#include "cluster/local/local_cluster_client.h"
#include "cluster/local/local_container_allocator.h"
#include "cluster/staging.h"
#include "common/strings.h"
#include "config/key_catalog.h"
#include "config/value_parsers.h"
#include "executor/task_executor.h"
#include "rpc/secret.h"
#include "spdlog/spdlog.h"

namespace tony::cli {
namespace {

namespace fs = std::filesystem;

std::string TonyHome() {
  if (const char* home = std::getenv("TONY_HOME"); home != nullptr && *home != '\0') return home;
  const char* user_home = std::getenv("HOME");
  return StrCat(user_home != nullptr ? user_home : "/tmp", "/.tony");
}

// The configuration a job was staged with, as the AM and executors read it.
absl::StatusOr<config::Configuration> LoadFinalConf(const std::string& path) {
  config::Configuration conf = config::KeyCatalog::BuiltIn().Defaults();
  if (absl::Status s = conf.LoadXmlFile(path, config::SourceKind::kConfFile); !s.ok()) return s;
  return conf;
}

void SetUpRoleLogging(const std::string& role) {
  spdlog::set_pattern(StrCat("%Y-%m-%d %H:%M:%S.%e ", role, " %l: %v"));
  spdlog::flush_on(spdlog::level::info);
}

}  // namespace

std::string SelfExecutable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "tony" : self.string();
}

int RunSubmit(SubmitOptions& options) {
  CompleteFromEnvironment(&options);
  std::optional<ValidatedJob> job = ResolveAndValidate(options);
  if (!job) return client::kExitBadInput;
  if (job->spec.backend != "local") {
    std::cerr << "tony: error: tony.application.backend = " << job->spec.backend
              << ": the YARN backend is not available in this build yet; use --backend local\n";
    return client::kExitBadInput;
  }
  absl::StatusOr<cluster::LocalCapacity> capacity =
      cluster::ResolveLocalCapacity(job->resolved.conf);
  if (!capacity.ok()) {
    std::cerr << "tony: error: " << capacity.status().message() << "\n";
    return client::kExitBadInput;
  }
  for (const auto& [name, type] : job->spec.job_types) {
    absl::Status fits = cluster::CheckFitsLocally(
        *capacity, StrCat("job type ", name),
        {type.resources.memory_mb, type.resources.vcores, type.resources.gpus});
    if (!fits.ok()) {
      std::cerr << "tony: error: " << fits.message() << "\n";
      return client::kExitBadInput;
    }
  }
  if (job->spec.mode == config::DistributedMode::kGang) {
    // In GANG mode every task must hold its container at once; on one machine a job that does
    // not fit as a whole would wait forever for the last container.
    cluster::ResourceAsk total{0, 0, 0};
    for (const auto& [name, type] : job->spec.job_types) {
      total.memory_mb += type.instances * type.resources.memory_mb;
      total.vcores += type.instances * type.resources.vcores;
      total.gpus += type.instances * type.resources.gpus;
    }
    absl::Status fits = cluster::CheckFitsLocally(
        *capacity, StrCat("the job's ", job->spec.TotalTasks(), " tasks together (GANG mode)"),
        total);
    if (!fits.ok()) {
      std::cerr << "tony: error: " << fits.message() << "\n";
      return client::kExitBadInput;
    }
  }
  // Before any thread exists, so that every thread inherits the mask.
  client::BlockInterruptSignals();
  cluster::LocalClusterClient cluster(TonyHome());
  client::TonyClient tony(&cluster, std::cout, std::cerr);
  return tony.Submit(job->resolved, job->spec, {options.request.working_dir, SelfExecutable()});
}

int RunAm() {
  SetUpRoleLogging("am");
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  const char* job_dir_env = std::getenv("TONY_JOB_DIR");
  const char* app_id_env = std::getenv("TONY_APP_ID");
  if (job_dir_env == nullptr || app_id_env == nullptr) {
    std::cerr << "tony am: TONY_JOB_DIR and TONY_APP_ID must be set; the AM is started by "
                 "`tony submit`\n";
    return 2;
  }
  const std::string job_dir = job_dir_env;
  const std::string conf_file = StrCat(job_dir, "/", cluster::kFinalConfFile);
  absl::StatusOr<config::Configuration> conf = LoadFinalConf(conf_file);
  absl::StatusOr<config::JobSpec> spec =
      conf.ok() ? config::BuildJobSpec(*conf) : absl::StatusOr<config::JobSpec>(conf.status());
  const std::string secret_file = StrCat(job_dir, "/", cluster::kSecretFile);
  absl::StatusOr<std::string> secret = rpc::ReadSecretFile(secret_file);
  if (!spec.ok() || !secret.ok()) {
    spdlog::error("cannot start: {}",
                  ToStd((!spec.ok() ? spec.status() : secret.status()).message()));
    return 2;
  }
  absl::StatusOr<cluster::LocalCapacity> capacity = cluster::ResolveLocalCapacity(*conf);
  if (!capacity.ok()) {
    spdlog::error("{}", ToStd(capacity.status().message()));
    return 2;
  }
  cluster::LocalAllocatorOptions allocator_options;
  allocator_options.app_id = app_id_env;
  allocator_options.job_dir = job_dir;
  allocator_options.capacity = *capacity;
  if (absl::StatusOr<int64_t> interval =
          config::ParseInt(conf->Get("tony.local.memory-check-interval-ms"));
      interval.ok() && *interval > 0) {
    allocator_options.memory_check_interval_ms = *interval;
  }
  allocator_options.enforce_memory =
      config::ParseBool(conf->Get("tony.local.enforce-memory")).value_or(true);
  cluster::LocalContainerAllocator allocator(allocator_options);

  am::AmOptions options;
  options.app_id = app_id_env;
  options.staging_dir = job_dir;
  options.conf_file = conf_file;
  options.secret = *secret;
  options.secret_file = secret_file;
  options.executable = SelfExecutable();
  options.host = "127.0.0.1";
  options.has_src = fs::exists(StrCat(job_dir, "/", cluster::kSrcZip));
  options.has_venv = fs::exists(StrCat(job_dir, "/", cluster::kVenvZip));
  options.wait_client_ms = spec->wait_client_ms;
  am::ApplicationMaster master(options, *spec, &allocator, SystemClock::Get());
  std::thread([&master, stop] {
    int sig = 0;
    while (sigwait(&stop, &sig) == 0) {
      master.RequestKill(StrCat("the AM received signal ", sig));
    }
  }).detach();
  return master.Run();
}

int RunExecutor() {
  executor::BlockStopSignals();
  SetUpRoleLogging("executor");
  absl::StatusOr<executor::ExecutorOptions> options = executor::ExecutorOptionsFromEnvironment();
  if (!options.ok()) {
    spdlog::error("{}", ToStd(options.status().message()));
    return 2;
  }
  absl::StatusOr<config::Configuration> conf = LoadFinalConf(options->conf_file);
  absl::StatusOr<config::JobSpec> spec =
      conf.ok() ? config::BuildJobSpec(*conf) : absl::StatusOr<config::JobSpec>(conf.status());
  if (!spec.ok()) {
    spdlog::error("cannot read the job: {}", ToStd(spec.status().message()));
    return 2;
  }
  executor::TaskExecutor task_executor(*std::move(options), *std::move(spec));
  return task_executor.Run();
}

}  // namespace tony::cli
