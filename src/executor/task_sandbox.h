#pragma once
// What a task's sandbox hides from the user's command (common/process.h, Sandbox): everything on
// disk that would let it act for another task, the client or the AM. Pure functions.
//
// Local backend: the job directory's secret, TLS key, AM pid and the executors' credential files,
// and every other job's directory ($TONY_HOME/jobs is covered, this job's directory kept).
// YARN: every other container's directory of this application and every other application's
// (the NodeManager's appcache/ is covered, the application's filecache/ and the task's own
// container kept), the NodeManager's nmPrivate/ (where DefaultContainerExecutor's containers run
// as the NodeManager's user), and the jobs of a tony client on the same host ($TONY_HOME/jobs).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/process.h"

namespace tony::executor {

struct SandboxInputs {
  std::string working_dir;              // the command's
  std::string job_dir;                  // TONY_JOB_DIR: the local backend's job directory
  std::vector<std::string> local_dirs;  // YARN's LOCAL_DIRS: <root>/usercache/<u>/appcache/<app>
  std::string container_id;             // YARN's container id
  std::string tony_home;                // the user's TONY_HOME, or ~/.tony
};

// The inputs from the executor's environment (TONY_JOB_DIR, LOCAL_DIRS, CONTAINER_ID, TONY_HOME,
// HOME) and working directory.
[[nodiscard]] SandboxInputs SandboxInputsFromEnvironment();

// The covers of the task's sandbox; status_fd is left for the caller.
[[nodiscard]] Sandbox TaskSandbox(const SandboxInputs& inputs);

// The user's command in the task's sandbox, as the executor starts and reaps it: the sandbox of
// this process's environment (TaskSandbox) and the status pipe through which its init reports
// the command's exit and peak memory. Owns both ends of the pipe. Thread: the executor's.
class SandboxedCommand {
 public:
  // Puts `spawn`'s command in the sandbox.
  [[nodiscard]] static absl::StatusOr<SandboxedCommand> Prepare(SpawnOptions* spawn);
  SandboxedCommand(SandboxedCommand&& other) noexcept;
  SandboxedCommand& operator=(SandboxedCommand&&) = delete;
  SandboxedCommand(const SandboxedCommand&) = delete;
  SandboxedCommand& operator=(const SandboxedCommand&) = delete;
  ~SandboxedCommand();

  // The covered paths, for the executor's log ("/h/.tony/jobs, /h/.tony/jobs/app/secret").
  const std::string& hidden() const { return hidden_; }
  // Call once Spawn has returned: only init may hold the pipe's write end from then on.
  void Spawned();
  // The command's exit once its init (the pid Spawn returned) has exited with `init_status`.
  [[nodiscard]] ExitStatus ExitOf(const ExitStatus& init_status);
  // The peak RSS of the command's processes, as init reported it with their exit (0 before).
  int64_t peak_rss_bytes() const { return peak_rss_bytes_; }

 private:
  SandboxedCommand(int read_fd, int write_fd, std::string hidden)
      : read_fd_(read_fd), write_fd_(write_fd), hidden_(std::move(hidden)) {}

  int read_fd_;
  int write_fd_;
  std::string hidden_;
  int64_t peak_rss_bytes_ = 0;
};

// The peak RSS of the largest process of the user's command that was reaped (the command, or one
// of its children or orphans): what `sandbox`'s init reported, or, unsandboxed, the largest of
// this process's reaped children (with a sandbox those include init, a copy of the executor).
[[nodiscard]] int64_t ReapedPeakRss(const SandboxedCommand* sandbox);

}  // namespace tony::executor
