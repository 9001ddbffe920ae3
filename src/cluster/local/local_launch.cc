// LocalContainerAllocator::Launch: a container's start, on the allocator's launch threads (its
// files localized, its executor spawned), and a failed start reported as the container's end
// (local_container_allocator.h).

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <exception>
#include <filesystem>
#include <string>

#include "cluster/local/kept_containers.h"
#include "cluster/local/local_container_allocator.h"
#include "common/files.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "rpc/launch_contract.h"
#include "spdlog/spdlog.h"

namespace tony::cluster {

namespace fs = std::filesystem;

absl::Status LocalContainerAllocator::Launch(const Container& container, const LaunchSpec& spec) {
  MutexLock lock(mu_);
  if (shutdown_ || launches_ == nullptr) {
    return absl::FailedPreconditionError(StrCat("cannot launch ", container.id, ": shut down"));
  }
  if (!containers_.contains(container.id)) {
    return absl::FailedPreconditionError(StrCat(container.id, " was released"));
  }
  // Localizing may unpack a venv of gigabytes: on the pool's threads, not the caller's (the AM's
  // loop). Queued under mu_, so that Shutdown cannot take the pool away meanwhile (the pool's
  // queue has a lock of its own, which its threads never hold while they run the work).
  launches_->Submit([this, container, spec] {
    if (!Launching(container.id)) return;  // stopped or released
    absl::Status launched;
    try {
      launched = LaunchNow(container, spec);
    } catch (const std::exception& e) {
      // Nothing would report it else: the task would wait for its container for ever.
      launched = absl::InternalError(StrCat("cannot launch ", container.id, ": ", e.what()));
    }
    if (launched.ok()) return;
    {
      MutexLock failed(mu_);
      auto it = containers_.find(container.id);
      if (shutdown_ || it == containers_.end()) return;  // stopped or released meanwhile
      FreeLocked(it->second);
      containers_.erase(it);
      ended_before_launch_.push_back({container.id, kExitLaunchFailed,
                                      std::string(ToStd(launched.message())),
                                      ContainerExit::Cause::kLaunchFailed});
    }
    Wake();
  });
  return absl::OkStatus();
}

bool LocalContainerAllocator::Launching(const std::string& container_id) const {
  MutexLock lock(mu_);
  return !shutdown_ && containers_.contains(container_id);
}

absl::Status LocalContainerAllocator::LaunchNow(const Container& container,
                                                const LaunchSpec& spec) {
  const std::string work_dir = StrCat(options_.job_dir, "/containers/", container.id);
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  fs::create_directories(container.log_dir, ec);
  if (ec) {
    return absl::InternalError(
        StrCat("cannot create the directories of ", container.id, ": ", ec.message()));
  }
  for (const LocalResource& resource : spec.resources) {
    // A container stopped meanwhile unpacks nothing more (Shutdown waits for this thread).
    if (!Launching(container.id)) {
      return absl::FailedPreconditionError(StrCat(container.id, " was released"));
    }
    if (absl::Status s = Localize(resource, work_dir); !s.ok()) return s;
  }
  if (!Launching(container.id)) {
    return absl::FailedPreconditionError(StrCat(container.id, " was released"));
  }
  SpawnOptions spawn;
  spawn.argv = spec.argv;
  spawn.set_env = spec.env;
  spawn.set_env[rpc::kEnvWorkDir] = work_dir;
  if (!spec.secrets.empty()) {
    // Outside the container's directory, in a directory only the user can enter; the process
    // removes the file once it has read it.
    const std::string secrets_dir = StrCat(options_.job_dir, "/secrets");
    fs::create_directories(secrets_dir, ec);
    fs::permissions(secrets_dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    if (ec) return absl::InternalError(StrCat("cannot create ", secrets_dir, ": ", ec.message()));
    const std::string secrets_file = StrCat(secrets_dir, "/", container.id, ".json");
    nlohmann::json secrets(spec.secrets);
    if (absl::Status s = WriteFile(secrets_file, secrets.dump(), 0600); !s.ok()) return s;
    spawn.set_env[rpc::kEnvContainerSecrets] = secrets_file;
  }
  spawn.working_dir = work_dir;
  spawn.stdout_path = StrCat(container.log_dir, "/executor.log");
  spawn.stderr_path = spawn.stdout_path;
  spawn.new_session = true;
  // Kept containers outlive a killed AM for the next attempt, which adopts them; their executors
  // give up on their own when no attempt comes (tony.am.recovery-timeout-ms).
  spawn.parent_death_signal = options_.keep_containers ? 0 : SIGKILL;
  absl::StatusOr<pid_t> pid = Spawn(spawn);
  if (!pid.ok()) return pid.status();
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, *pid, 0));
  if (options_.keep_containers) {
    // What the next attempt needs to adopt it.
    KeptContainer kept;
    kept.pid = *pid;
    const std::optional<ProcessInfo> info = ReadProcessInfo(*pid);
    kept.start_ticks = info ? info->start_ticks : 0;
    kept.container = container;
    {
      MutexLock lock(mu_);
      auto it = containers_.find(container.id);
      if (it != containers_.end()) kept.gpus = it->second.gpus;
    }
    if (absl::Status s = WriteKeptContainer(options_.job_dir, kept); !s.ok()) {
      spdlog::warn("[{}] {} cannot be adopted by a later AM attempt: {}", options_.app_id,
                   container.id, ToStd(s.message()));
    }
  }
  {
    MutexLock lock(mu_);
    auto it = containers_.find(container.id);
    if (it == containers_.end() || shutdown_) {
      SignalTree(*pid, SIGKILL);
      if (pidfd >= 0) close(pidfd);
      (void)WaitForExit(*pid);
      if (options_.keep_containers)
        fs::remove(KeptContainerPath(options_.job_dir, container.id), ec);
      return absl::FailedPreconditionError(StrCat(container.id, " was released"));
    }
    it->second.pid = *pid;
    it->second.pidfd = pidfd;
  }
  Wake();
  return absl::OkStatus();
}

}  // namespace tony::cluster
