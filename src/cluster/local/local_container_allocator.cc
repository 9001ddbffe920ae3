#include "cluster/local/local_container_allocator.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cluster/local/job_dir_cleanup.h"
#include "cluster/local/kept_containers.h"
#include "cluster/staging.h"
#include "common/archive.h"
#include "common/files.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "rpc/launch_contract.h"
#include "spdlog/spdlog.h"

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

// Containers localized and started at once: unpacking is bound by the disk and a core each.
constexpr int kLaunchThreads = 2;

// YARN's default for yarn.nodemanager.sleep-delay-before-sigkill.ms.
constexpr int64_t kOverMemorySigkillDelayMs = 250;

// "application_<ts>_<seq>" -> "container_<ts>_<seq>_<attempt:02>_<n:06>", as YARN names them.
std::string ContainerId(const std::string& app_id, int attempt, int n) {
  std::string suffix = app_id.starts_with("application_") ? app_id.substr(12) : app_id;
  std::string number = std::to_string(n);
  if (number.size() < 6) number.insert(0, 6 - number.size(), '0');
  std::string am_attempt = std::to_string(attempt);
  if (am_attempt.size() < 2) am_attempt.insert(0, 2 - am_attempt.size(), '0');
  return StrCat("container_", suffix, "_", am_attempt, "_", number);
}

}  // namespace

LocalContainerAllocator::LocalContainerAllocator(LocalAllocatorOptions options)
    : options_(std::move(options)), clock_(SystemClock::Get()) {
  free_ = options_.capacity.total;
  free_gpus_ = options_.capacity.gpu_ids;
}

LocalContainerAllocator::~LocalContainerAllocator() {
  Shutdown();
  if (wake_fd_ >= 0) close(wake_fd_);
}

absl::Status LocalContainerAllocator::Start(const std::string& am_host, int am_port,
                                            const std::string& tracking_url, Callbacks callbacks) {
  callbacks_ = std::move(callbacks);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return absl::InternalError(StrCat("eventfd: ", std::strerror(errno)));
  if (!tracking_url.empty()) {
    // Before am.address: the client reads it once it sees the address.
    absl::Status url =
        WriteFile(StrCat(options_.job_dir, "/am.tracking-url"), StrCat(tracking_url, "\n"), 0600);
    if (!url.ok()) return url;
  }
  if (options_.keep_containers && options_.am_attempt > 1) AdoptPrevious();
  // The client, and executors that lost an earlier attempt, find the AM through this file; written
  // atomically, so it is whole when seen.
  absl::Status written =
      WriteFile(StrCat(options_.job_dir, "/am.address"), StrCat(am_host, ":", am_port, "\n"), 0600);
  if (!written.ok()) return written;
  {
    MutexLock lock(mu_);
    launches_ = std::make_unique<WorkerPool>(kLaunchThreads);
    removals_ = std::make_unique<WorkerPool>(1);
  }
  monitor_ = std::thread([this] { MonitorLoop(); });
  return absl::OkStatus();
}

absl::Status LocalContainerAllocator::CheckFits(const ContainerRequest& request) const {
  return CheckFitsLocally(options_.capacity, StrCat("a ", request.job_type, " container"),
                          request.resources);
}

void LocalContainerAllocator::Request(const ContainerRequest& request) {
  {
    MutexLock lock(mu_);
    pending_.push_back(request);
  }
  Wake();
}

std::vector<Container> LocalContainerAllocator::GrantLocked() {
  std::vector<Container> granted;
  // Strictly in order, so a large request is not starved by smaller ones behind it.
  while (!pending_.empty()) {
    const ContainerRequest& request = pending_.front();
    const ResourceAsk& ask = request.resources;
    if (ask.memory_mb > free_.memory_mb ||
        (options_.capacity.enforce_vcores && ask.vcores > free_.vcores) ||
        ask.gpus > static_cast<int>(free_gpus_.size())) {
      break;
    }
    LocalContainer local;
    local.container.id = ContainerId(options_.app_id, options_.am_attempt, next_container_++);
    local.container.job_type = request.job_type;
    local.container.host = options_.host;
    local.container.resources = ask;
    local.container.log_dir = StrCat(options_.job_dir, "/logs/", local.container.id);
    free_.memory_mb -= ask.memory_mb;
    free_.vcores -= ask.vcores;
    for (int i = 0; i < ask.gpus; ++i) {
      local.gpus.push_back(free_gpus_.front());
      free_gpus_.erase(free_gpus_.begin());
    }
    std::vector<std::string> gpu_list;
    for (int gpu : local.gpus) gpu_list.push_back(std::to_string(gpu));
    // Every container gets the variable, so a CPU task cannot see the machine's GPUs by accident.
    local.container.env["CUDA_VISIBLE_DEVICES"] = Join(gpu_list, ",");
    granted.push_back(local.container);
    containers_.emplace(local.container.id, std::move(local));
    pending_.pop_front();
  }
  return granted;
}

void LocalContainerAllocator::FreeLocked(const LocalContainer& local) {
  free_.memory_mb += local.container.resources.memory_mb;
  free_.vcores += local.container.resources.vcores;
  for (int gpu : local.gpus) free_gpus_.push_back(gpu);
  std::sort(free_gpus_.begin(), free_gpus_.end());
}

void LocalContainerAllocator::Stop(const std::string& container_id, int64_t grace_ms) {
  {
    MutexLock lock(mu_);
    auto it = containers_.find(container_id);
    if (it == containers_.end() || it->second.stopping) return;
    LocalContainer& local = it->second;
    if (local.pid == 0) {
      FreeLocked(local);
      containers_.erase(it);
      // Answered on the monitor's thread, as every callback (container_allocator.h).
      ended_before_launch_.push_back(
          {container_id, 0, "stopped before launch", ContainerExit::Cause::kStoppedByAm});
    } else {
      local.stopping = true;
      local.cause = ContainerExit::Cause::kStoppedByAm;
      // The executor forwards SIGTERM to the user's process group and escalates itself; this
      // deadline is the backstop for an executor that does not.
      Signal(local, SIGTERM, /*tree=*/false);
      local.kill_at_ms = clock_->NowMs() + grace_ms + 2000;
    }
  }
  Wake();
}

void LocalContainerAllocator::Release(const std::string& container_id) {
  {
    MutexLock lock(mu_);
    auto it = containers_.find(container_id);
    if (it == containers_.end() || it->second.pid > 0) return;
    FreeLocked(it->second);
    containers_.erase(it);
  }
  Wake();  // what was freed may be granted at once
}

absl::Status LocalContainerAllocator::Finish(FinalStatus final_status,
                                             const std::string& diagnostics,
                                             const std::string& status_json) {
  nlohmann::json record;
  record["final_state"] = ToString(final_status);
  record["diagnostics"] = diagnostics;
  record["job_status"] = nlohmann::json::parse(status_json, nullptr, /*allow_exceptions=*/false);
  std::string text = record.dump(2) + "\n";
  {
    MutexLock lock(mu_);
    final_status_ = final_status;
  }
  absl::Status written = WriteFile(FinalStatusPath(), text, 0600);
  if (!written.ok() && RunningContainers() == 0 && RemovesWorkFiles()) {
    // Most often a task filled the disk from its working directory, which is no longer needed.
    spdlog::warn("[{}] {}; removing the containers' working directories first", options_.app_id,
                 ToStd(written.message()));
    WaitForRemovals();  // not two removals of one tree at once: each would stop at the other's
    for (const absl::Status& error : RemoveJobWorkFiles(options_.job_dir, false)) {
      spdlog::warn("[{}] {}", options_.app_id, ToStd(error.message()));
    }
    written = WriteFile(FinalStatusPath(), text, 0600);
  }
  if (!written.ok()) {
    MutexLock lock(mu_);
    unsaved_record_ = std::move(text);
  }
  return written;
}

bool LocalContainerAllocator::RemovesWorkFiles() const {
  MutexLock lock(mu_);
  return final_status_.has_value() &&
         (*final_status_ == FinalStatus::kSucceeded || !options_.keep_work_dirs_on_failure);
}

std::string LocalContainerAllocator::FinalStatusPath() const {
  return StrCat(options_.job_dir, "/final-status.json");
}

bool LocalContainerAllocator::Running(const LocalContainer& local) {
  if (local.pidfd < 0) return false;
  pollfd fd = {local.pidfd, POLLIN, 0};
  return poll(&fd, 1, 0) == 0;  // readable once the process has exited
}

void LocalContainerAllocator::Signal(const LocalContainer& local, int sig, bool tree) {
  if (!local.adopted) {
    // This process's child: its pid stays its own until it is reaped.
    if (tree) {
      SignalTree(local.pid, sig);
    } else {
      kill(local.pid, sig);
    }
    return;
  }
  // Another's child, reaped by another: signalled only while the pidfd says it runs (once it
  // exited, its pid may soon name another process).
  if (!Running(local)) return;
  if (tree) {
    SignalTree(local.pid, sig);
  } else {
    syscall(SYS_pidfd_send_signal, local.pidfd, sig, nullptr, 0);
  }
}

void LocalContainerAllocator::AdoptPrevious() {
  for (KeptContainer& kept : ReadKeptContainers(options_.job_dir, options_.app_id)) {
    LocalContainer local;
    local.pid = kept.pid;
    local.container = std::move(kept.container);
    local.gpus = std::move(kept.gpus);
    // The pidfd first, then the check that it is the same process as recorded (a pid may have
    // been reused since), still running: from then on the pidfd names it, whatever its pid does.
    local.pidfd = local.pid > 0 ? static_cast<int>(syscall(SYS_pidfd_open, local.pid, 0)) : -1;
    const std::optional<ProcessInfo> info =
        local.pidfd >= 0 ? ReadProcessInfo(local.pid) : std::nullopt;
    if (local.pidfd < 0 || !info || info->start_ticks != kept.start_ticks || !Running(local)) {
      spdlog::info("[{}] {} of an earlier attempt has ended", options_.app_id, local.container.id);
      if (local.pidfd >= 0) close(local.pidfd);
      std::error_code ec;
      fs::remove(KeptContainerPath(options_.job_dir, local.container.id), ec);
      continue;
    }
    local.adopted = true;
    spdlog::info("[{}] adopted {} of an earlier attempt (pid {})", options_.app_id,
                 local.container.id, local.pid);
    MutexLock lock(mu_);
    free_.memory_mb -= local.container.resources.memory_mb;
    free_.vcores -= local.container.resources.vcores;
    for (int gpu : local.gpus) std::erase(free_gpus_, gpu);
    previous_.push_back(local.container);
    containers_.emplace(local.container.id, std::move(local));
  }
}

std::vector<Container> LocalContainerAllocator::PreviousContainers() const {
  MutexLock lock(mu_);
  return previous_;
}

int LocalContainerAllocator::RunningContainers() const {
  MutexLock lock(mu_);
  return static_cast<int>(std::count_if(containers_.begin(), containers_.end(),
                                        [](const auto& entry) { return entry.second.pid > 0; }));
}

void LocalContainerAllocator::Shutdown() {
  {
    MutexLock lock(mu_);
    if (shutdown_) return;
    shutdown_ = true;
    for (auto& [id, local] : containers_) {
      if (local.pid > 0) Signal(local, SIGKILL, /*tree=*/true);
    }
  }
  Wake();
  if (monitor_.joinable()) monitor_.join();
  // What the pool started since is killed there (shutdown_); its work directories go below.
  std::unique_ptr<WorkerPool> launches;
  std::unique_ptr<WorkerPool> removals;
  {
    MutexLock lock(mu_);
    launches = std::move(launches_);
    removals = std::move(removals_);
    removing_.clear();
  }
  launches.reset();
  removals.reset();  // what was queued is removed first
  {
    MutexLock lock(mu_);
    for (auto& [id, local] : containers_) {
      if (local.pid > 0 && !local.adopted) (void)WaitForExit(local.pid);
      if (local.pidfd >= 0) close(local.pidfd);
    }
    containers_.clear();
  }
  if (options_.keep_containers) {
    std::error_code ec;
    fs::remove_all(StrCat(options_.job_dir, "/running"), ec);
  }
  RemoveWorkFiles();
}

void LocalContainerAllocator::RemoveWorkFiles() {
  std::optional<FinalStatus> final_status;
  std::string unsaved;
  {
    MutexLock lock(mu_);
    final_status = final_status_;
    unsaved = unsaved_record_;
  }
  if (!final_status.has_value()) return;  // the job did not end: a retried AM needs everything
  const bool remove = RemovesWorkFiles();
  if (!remove) {
    spdlog::info(
        "[{}] keeping the working directories of the {} job (tony.local.keep-work-dirs-on-failure)",
        options_.app_id, ToString(*final_status));
  }
  if (remove) {
    for (const absl::Status& error : RemoveJobWorkFiles(options_.job_dir, /*staged_files=*/false)) {
      spdlog::warn("[{}] {}", options_.app_id, ToStd(error.message()));
    }
  }
  if (!unsaved.empty()) {
    // Room may have been made since the job ended.
    if (absl::Status written = WriteFile(FinalStatusPath(), unsaved, 0600); !written.ok()) {
      spdlog::error("[{}] the final status is not saved: {}", options_.app_id,
                    ToStd(written.message()));
      return;  // a retried AM would need the staged files
    }
    spdlog::info("[{}] saved the final status at the second try", options_.app_id);
    MutexLock lock(mu_);
    unsaved_record_.clear();
  }
  if (remove) {
    for (const absl::Status& error : RemoveJobWorkFiles(options_.job_dir, /*staged_files=*/true)) {
      spdlog::warn("[{}] {}", options_.app_id, ToStd(error.message()));
    }
  }
}

void LocalContainerAllocator::Wake() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

void LocalContainerAllocator::Reap(const std::string& container_id) {
  LocalContainer local;
  {
    MutexLock lock(mu_);
    auto it = containers_.find(container_id);
    if (it == containers_.end()) return;
    local = it->second;
  }
  // An adopted guard is not this process's child: another reaps it, and its pid may be reused by
  // then, so nothing is signalled by that number. What was below it went with it (the guard kills
  // its tree as it ends; the executor and the user's process die with their parents).
  absl::StatusOr<ExitStatus> status =
      absl::UnavailableError("it was started by an earlier AM attempt; its exit status is unknown");
  if (!local.adopted) {
    // The guard is a zombie now, which keeps its pid from being reused. A guard that exited by
    // itself has killed and reaped everything below it (it is their subreaper, and its session
    // holds nothing else); one that was killed may have left its session behind, which goes now,
    // before it is reaped.
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(local.pid), &info, WEXITED | WNOWAIT) != 0 ||
        info.si_code != CLD_EXITED) {
      SignalTree(local.pid, SIGKILL);
    }
    status = WaitForExit(local.pid);
  }
  if (options_.keep_containers) {
    std::error_code ec;
    fs::remove(KeptContainerPath(options_.job_dir, container_id), ec);
  }
  ContainerExit exit;
  exit.container_id = container_id;
  exit.cause = local.cause;
  exit.exit_code = status.ok() ? status->ShellCode() : kExitAborted;
  if (local.cause == ContainerExit::Cause::kOverMemory) {
    exit.exit_code = kExitKilledOverPhysicalMemory;
    exit.diagnostics = local.kill_reason;
  } else if (!status.ok()) {
    exit.diagnostics = std::string(ToStd(status.status().message()));
  }
  {
    MutexLock lock(mu_);
    FreeLocked(local);
    if (local.pidfd >= 0) close(local.pidfd);
    containers_.erase(container_id);
  }
  if (callbacks_.on_completed) callbacks_.on_completed(exit);
  RemoveWorkDirOf(container_id);
}

void LocalContainerAllocator::RemoveWorkDirOf(const std::string& container_id) {
  // Not on the job's end, when every directory at once took longer than the rest of the end did
  // (about 0.2 ms a file on ext4); not on this thread, which reports the other containers; and
  // not on the launches' threads, where a gang restart's launches would wait behind the old
  // attempts' directories.
  if (options_.keep_work_dirs_on_failure) return;  // the job's end decides
  std::string work_dir = StrCat(options_.job_dir, "/containers/", container_id);
  MutexLock lock(mu_);
  if (!removals_) return;  // shut down: RemoveWorkFiles takes it with the rest
  std::erase_if(removing_, [](const std::future<void>& removal) {
    return removal.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  });
  removing_.push_back(removals_->Submit([this, work_dir = std::move(work_dir)] {
    if (absl::Status removed = RemoveTree(work_dir); !removed.ok()) {
      spdlog::warn("[{}] {}", options_.app_id, ToStd(removed.message()));
    }
  }));
}

void LocalContainerAllocator::WaitForRemovals() {
  std::vector<std::future<void>> removing;
  {
    MutexLock lock(mu_);
    removing.swap(removing_);
  }
  for (std::future<void>& removal : removing) removal.wait();
}

void LocalContainerAllocator::CheckMemory() {
  std::vector<std::pair<std::string, pid_t>> running;
  {
    MutexLock lock(mu_);
    for (const auto& [id, local] : containers_) {
      if (local.pid > 0 && local.cause != ContainerExit::Cause::kOverMemory) {
        running.emplace_back(id, local.pid);
      }
    }
  }
  // One pass over the process table for every container (each leads its own session).
  std::vector<pid_t> roots;
  roots.reserve(running.size());
  for (const auto& [id, pid] : running) roots.push_back(pid);
  const std::unordered_map<pid_t, TreeUsage> usage = MeasureTrees(roots);
  for (const auto& [id, pid] : running) {
    int64_t rss = usage.at(pid).rss_bytes;
    int64_t limit = 0;
    {
      MutexLock lock(mu_);
      auto it = containers_.find(id);
      if (it == containers_.end()) continue;
      limit = it->second.container.resources.memory_mb << 20;
    }
    // The resident sum counts a page that several of the container's processes share in each
    // of them (a forked worker's, the sandbox init's copy of its executor). Over the limit, the
    // proportional measure decides, which counts such a page once.
    if (rss > limit) rss = TreeProportionalBytes(pid);
    MutexLock lock(mu_);
    auto it = containers_.find(id);
    if (it == containers_.end()) continue;
    if (rss > limit) {
      it->second.cause = ContainerExit::Cause::kOverMemory;
      it->second.kill_reason =
          StrCat("Container ", id,
                 " is running beyond physical memory limits. Current usage: ", FormatMb(rss),
                 " of ", FormatMb(limit), " physical memory used. Killing container.");
      spdlog::warn("[{}] {}", options_.app_id, it->second.kill_reason);
      // As YARN's NodeManager does: SIGTERM to the container's process group (the kernel
      // signals its newest processes first, so the user's before the executor), SIGKILL to the
      // whole tree a moment later (yarn.nodemanager.sleep-delay-before-sigkill.ms).
      if (!it->second.adopted) {
        kill(-pid, SIGTERM);
      } else {
        Signal(it->second, SIGTERM, /*tree=*/false);  // not its group: its pid may be reused
      }
      it->second.stopping = true;
      it->second.kill_at_ms = clock_->NowMs() + kOverMemorySigkillDelayMs;
    }
  }
}

void LocalContainerAllocator::MonitorLoop() {
  int64_t next_memory_check = clock_->NowMs() + options_.memory_check_interval_ms;
  while (true) {
    std::vector<Container> granted;
    std::vector<ContainerExit> stopped;
    std::vector<pollfd> fds;
    std::vector<std::string> ids;
    int64_t timeout = std::max<int64_t>(0, next_memory_check - clock_->NowMs());
    {
      MutexLock lock(mu_);
      if (shutdown_) return;
      granted = GrantLocked();
      stopped.swap(ended_before_launch_);
      fds.push_back({wake_fd_, POLLIN, 0});
      ids.emplace_back();
      const int64_t now = clock_->NowMs();
      for (auto& [id, local] : containers_) {
        if (local.stopping && local.kill_at_ms > 0) {
          if (now >= local.kill_at_ms) {
            Signal(local, SIGKILL, /*tree=*/true);
            local.kill_at_ms = 0;
          } else {
            timeout = std::min(timeout, local.kill_at_ms - now);
          }
        }
        if (local.pidfd >= 0) {
          fds.push_back({local.pidfd, POLLIN, 0});
          ids.push_back(id);
        }
      }
    }
    for (ContainerExit& exit : stopped) {
      // A failed launch has ended (it reports itself once it returned); a container stopped
      // before its launch may still be unpacking, and its directory goes at the job's end.
      const std::string failed_launch =
          exit.cause == ContainerExit::Cause::kLaunchFailed ? exit.container_id : "";
      if (callbacks_.on_completed) callbacks_.on_completed(std::move(exit));
      if (!failed_launch.empty()) RemoveWorkDirOf(failed_launch);
    }
    for (Container& container : granted) {
      if (callbacks_.on_allocated) callbacks_.on_allocated(std::move(container));
    }
    if (!granted.empty() || !stopped.empty())
      continue;  // granting may have been answered by a launch already
    const int ready = poll(fds.data(), fds.size(), static_cast<int>(timeout));
    if (ready < 0 && errno != EINTR) {
      spdlog::error("[{}] poll: {}", options_.app_id, std::strerror(errno));
    }
    if (ready > 0) {
      if (fds[0].revents & POLLIN) {
        uint64_t drained;
        (void)!read(wake_fd_, &drained, sizeof(drained));
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents & (POLLIN | POLLHUP)) Reap(ids[i]);
      }
    }
    if (clock_->NowMs() >= next_memory_check) {
      // Also when not enforced: the next poll's timeout is counted from it.
      if (options_.enforce_memory) CheckMemory();
      next_memory_check = clock_->NowMs() + options_.memory_check_interval_ms;
    }
  }
}

}  // namespace tony::cluster
