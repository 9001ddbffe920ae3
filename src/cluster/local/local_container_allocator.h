#pragma once
// The local backend's resource manager, living inside the AM: a container is a process session
// on this machine (the executor calls setsid through Spawn), accounted against the machine's
// capacity, watched through a pidfd, held to its memory like YARN does, and killed as a whole
// tree when it ends so that nothing outlives it.
//
// Threads: the public methods may be called from any thread; callbacks run on the allocator's
// own monitor thread.

#include <sys/types.h>

#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/container_allocator.h"
#include "cluster/local/local_capacity.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/worker_pool.h"

namespace tony::cluster {

struct LocalAllocatorOptions {
  std::string app_id;
  std::string job_dir;  // containers/<id>/ (working dirs) and logs/<id>/ go below it
  LocalCapacity capacity;
  int64_t memory_check_interval_ms = 500;
  bool enforce_memory = true;
  std::string host = "127.0.0.1";
  int am_attempt = 1;  // in container ids, so that a retried AM's logs go to new directories
  // tony.local.keep-work-dirs-on-failure: a job that did not succeed keeps its containers'
  // working directories, secrets/ and staged files for inspection. Without it, a container's
  // working directory goes as soon as the container has ended, as YARN's NodeManager does.
  bool keep_work_dirs_on_failure = false;
  // A later AM attempt adopts the running containers (tony.am.retry-count above 0): they do not
  // die with this AM, and each is recorded in the job directory's running/ until it ends, where
  // the next attempt's allocator finds it.
  bool keep_containers = false;
};

class LocalContainerAllocator final : public ContainerAllocator {
 public:
  explicit LocalContainerAllocator(LocalAllocatorOptions options);
  ~LocalContainerAllocator() override;

  absl::Status Start(const std::string& am_host, int am_port, const std::string& tracking_url,
                     Callbacks callbacks) override;
  absl::Status CheckFits(const ContainerRequest& request) const override;
  void Request(const ContainerRequest& request) override;
  absl::Status Launch(const Container& container, const LaunchSpec& spec) override;
  void Stop(const std::string& container_id, int64_t grace_ms) override;
  void Release(const std::string& container_id) override;
  // Writes final-status.json; an error (a full disk) names the file and the reason. When the
  // disk is full and no container runs any more, it first removes the containers' working
  // directories (as Shutdown would) and tries again.
  absl::Status Finish(FinalStatus final_status, const std::string& diagnostics,
                      const std::string& status_json) override;
  int RunningContainers() const override;
  std::vector<Container> PreviousContainers() const override;
  // Kills what still runs, then removes what the job no longer needs (see RemoveWorkFiles); if
  // final-status.json could not be written, tries once more.
  void Shutdown() override;

 private:
  struct LocalContainer {
    Container container;
    std::vector<int> gpus;
    pid_t pid = 0;  // the executor, leader of the container's session
    int pidfd = -1;
    bool stopping = false;
    int64_t kill_at_ms = 0;  // when stopping: SIGKILL the whole tree at this time
    std::string kill_reason;
    ContainerExit::Cause cause = ContainerExit::Cause::kExited;
    // Launched by an earlier AM attempt: not this process's child, so its exit status is unknown.
    bool adopted = false;
  };

  // The running containers an earlier attempt recorded (keep_containers), taken over; records
  // of processes that are gone are removed.
  void AdoptPrevious();
  // Whether the container's guard still runs (its pidfd is not readable yet).
  static bool Running(const LocalContainer& local);
  // Sends `sig` to the container's guard, or with `tree` to everything below it too; an adopted
  // guard only while it runs.
  static void Signal(const LocalContainer& local, int sig, bool tree);
  void MonitorLoop();
  // Whether a launch of the container is still wanted: not stopped, released or shut down.
  bool Launching(const std::string& container_id) const;
  // Localizes the container's files and starts its executor (on launches_' threads).
  absl::Status LaunchNow(const Container& container, const LaunchSpec& spec);
  // Puts `resource` into `work_dir`: copied, unpacked, or, when shared, linked to the job's one
  // read-only copy (unpacked by the first task that needs it).
  absl::Status Localize(const LocalResource& resource, const std::string& work_dir);
  // Grants queued requests that fit now, in order.
  std::vector<Container> GrantLocked() TONY_REQUIRES(mu_);
  void FreeLocked(const LocalContainer& container) TONY_REQUIRES(mu_);
  void Reap(const std::string& container_id);
  // Removes the ended container's working directory on removals_' thread, unless the job may
  // keep it (keep_work_dirs_on_failure); Shutdown waits for it.
  void RemoveWorkDirOf(const std::string& container_id);
  // Waits for the removals under way or queued.
  void WaitForRemovals();
  void CheckMemory();
  void Wake();
  // After every container has stopped: removes the containers' working directories and
  // secrets/ and, once the final status is saved, the staged src.zip, venv.zip and resources/
  // (a retried AM needs them otherwise). Keeps all of them for a job that did not succeed with
  // keep_work_dirs_on_failure, and does nothing before Finish (the job is not over).
  void RemoveWorkFiles();
  // Whether the job has ended and its working files are to go.
  bool RemovesWorkFiles() const;
  std::string FinalStatusPath() const;

  const LocalAllocatorOptions options_;
  Callbacks callbacks_;
  const Clock* const clock_;
  int wake_fd_ = -1;  // eventfd that interrupts the monitor's poll

  mutable Mutex mu_;
  std::deque<ContainerRequest> pending_ TONY_GUARDED_BY(mu_);
  std::map<std::string, LocalContainer> containers_ TONY_GUARDED_BY(mu_);
  std::vector<ContainerExit> ended_before_launch_
      TONY_GUARDED_BY(mu_);  // for the monitor to report
  ResourceAsk free_ TONY_GUARDED_BY(mu_);
  std::vector<int> free_gpus_ TONY_GUARDED_BY(mu_);
  int next_container_ TONY_GUARDED_BY(mu_) = 2;  // 1 is the AM's
  bool shutdown_ TONY_GUARDED_BY(mu_) = false;
  // Set by Finish: the job's final state, and the record that could not be written ("" = saved).
  std::vector<Container> previous_ TONY_GUARDED_BY(mu_);  // adopted by AdoptPrevious
  std::optional<FinalStatus> final_status_ TONY_GUARDED_BY(mu_);
  std::string unsaved_record_ TONY_GUARDED_BY(mu_);
  std::thread monitor_;
  Mutex shared_mu_;  // held while the job's shared copies are looked for and unpacked
  // Launches, off the caller's thread; from Start until Shutdown.
  std::unique_ptr<WorkerPool> launches_ TONY_GUARDED_BY(mu_);
  // Ended containers' working directories, removed one at a time; from Start until Shutdown.
  std::unique_ptr<WorkerPool> removals_ TONY_GUARDED_BY(mu_);
  std::vector<std::future<void>> removing_ TONY_GUARDED_BY(mu_);  // queued or under way
};

}  // namespace tony::cluster
