#pragma once
// The AM's view of a resource manager: ask for containers, start a process in one, stop it, and
// hear when it ends. Implemented by the local backend (process trees on this machine) and by
// YARN (AM-RM and NM protocols). Knows nothing of job policy.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/resources.h"

namespace tony::cluster {

using ResourceAsk = tony::Resources;

struct ContainerRequest {
  std::string job_type;  // grants are matched back to job types (YARN: one priority per type)
  ResourceAsk resources;
  std::string node_label;
  // A YARN placement constraint (config/placement_constraint.h's text); "" for none. The local
  // backend, one machine, has no use for it.
  std::string placement{};
};

struct Container {
  std::string id;        // "container_<cluster ts>_<app seq>_01_<seq>"
  std::string job_type;  // the request it answers
  std::string host;
  ResourceAsk resources;
  std::string log_dir;                     // local: the logs' directory; YARN: the NM's log page
  std::map<std::string, std::string> env;  // from the backend, e.g. CUDA_VISIBLE_DEVICES
};

// A file the container needs in its working directory.
struct LocalResource {
  std::string source;       // a path the backend can read (local path, or hdfs:// on YARN)
  std::string name;         // the name in the working directory; "" = unpack into it directly
  bool is_archive = false;  // unpack instead of copying
  // The same for every task of the job and never written by them (the venv): the backend may
  // unpack it once per job and host and share it read-only. YARN: an APPLICATION archive, which
  // each NodeManager localizes once per application; local: one read-only copy per job.
  bool shared = false;
  // Named by its content (tony's cache: the binary, the Hadoop configuration), so it never
  // changes under its name: the backend may keep it across jobs. YARN: a PRIVATE resource, which
  // each NodeManager localizes once for the user and reuses for the user's later jobs; local:
  // ignored.
  bool reusable = false;
};

struct LaunchSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::vector<LocalResource> resources;
  // Credentials for the process alone, by alias: never in its environment or command line, but
  // where only the job's user can read them (YARN: the container's credentials file; local: a
  // 0600 file outside the container's directory, named by rpc::kEnvContainerSecrets), so that the
  // process can read them and then make them unreachable for whatever it starts.
  std::map<std::string, std::string> secrets;
};

// How a container ended.
struct ContainerExit {
  std::string container_id;
  int exit_code = 0;        // shell convention (128 + signal), or a backend code below
  std::string diagnostics;  // the backend's words
  enum class Cause { kExited, kStoppedByAm, kOverMemory, kLaunchFailed, kLost };
  Cause cause = Cause::kExited;
};

// How the job ended, as the resource manager records it (YARN's FinalApplicationStatus).
enum class FinalStatus { kSucceeded, kFailed, kKilled };
// "SUCCEEDED", "FAILED", "KILLED".
std::string_view ToString(FinalStatus status);

// Exit codes in YARN's ContainerExitStatus where the backend decided the end.
inline constexpr int kExitKilledOverPhysicalMemory = -104;
inline constexpr int kExitAborted = -100;
inline constexpr int kExitLaunchFailed = -1;

class ContainerAllocator {
 public:
  struct Callbacks {
    // Called on the allocator's own thread; receivers post into their own loop.
    std::function<void(Container)> on_allocated;
    std::function<void(ContainerExit)> on_completed;
    // The resource manager no longer counts this AM's attempt as the application's (YARN's
    // AM_SHUTDOWN, or an allocate refused for an unknown attempt): the AM must stop at once and
    // claim no final status, which is no longer its to give. Called at most once. May be left
    // empty.
    std::function<void(std::string reason)> on_ended_by_cluster;
    // Fresh credentials for the running tasks, to replace theirs (YARN: new HDFS delegation
    // tokens for a job that outlives the first, as a Hadoop credentials file, which executors
    // merge into the task's HADOOP_TOKEN_FILE_LOCATION). May be left empty.
    std::function<void(std::string credentials)> on_task_tokens;
    // The resource manager refuses, and will go on refusing, what the job asks for (YARN: placement
    // constraints its scheduler is not set up for): the job must fail with `reason`. At most
    // once. May be left empty.
    std::function<void(std::string reason)> on_refused;
    // The resource manager warns that it will take this granted container back (YARN's
    // preemption message): the task should stop while it can still checkpoint. Once a container.
    // May be left empty.
    std::function<void(std::string container_id)> on_preemption;
  };
  virtual ~ContainerAllocator() = default;

  // Registers the AM (its control-plane address, and the URL of its status page, which may be
  // empty) and starts delivering callbacks.
  [[nodiscard]] virtual absl::Status Start(const std::string& am_host, int am_port,
                                           const std::string& tracking_url,
                                           Callbacks callbacks) = 0;
  // The containers of the application's earlier AM attempts that still run and that this attempt
  // took over (YARN: containers_from_previous_attempts; local: what an attempt that kept its
  // containers left running), known once Start returned. Their ends are reported through
  // on_completed like any other's; one the AM does not want, it stops.
  virtual std::vector<Container> PreviousContainers() const { return {}; }
  // Checks that a request can ever be granted; an error says why not, with the numbers.
  [[nodiscard]] virtual absl::Status CheckFits(const ContainerRequest& request) const = 0;
  // Asks for one more container; answered through on_allocated.
  virtual void Request(const ContainerRequest& request) = 0;
  // Starts the process in a granted container. A start that fails later (a bad command) is
  // reported through on_completed with cause kLaunchFailed.
  [[nodiscard]] virtual absl::Status Launch(const Container& container, const LaunchSpec& spec) = 0;
  // Stops a container: SIGTERM, then SIGKILL to its whole tree after `grace_ms`.
  virtual void Stop(const std::string& container_id, int64_t grace_ms) = 0;
  // Returns a granted container that will not be launched.
  virtual void Release(const std::string& container_id) = 0;
  // Records the final status with the resource manager (YARN: unregister; local: the job
  // directory's final-status.json). An error says why it could not be recorded (a full disk, an
  // unreachable resource manager); the job's result stays what it is.
  [[nodiscard]] virtual absl::Status Finish(FinalStatus final_status,
                                            const std::string& diagnostics,
                                            const std::string& status_json) = 0;
  // The container's process has ended (its executor reported); its completion will follow soon.
  // A backend that polls for completions may poll faster until it has it.
  virtual void ExpectCompletion(const std::string& container_id) {}
  // How far the job is, from 0 to 1, for the resource manager's view of it (YARN's application
  // progress); a backend without one ignores it. Any thread.
  virtual void SetProgress(float progress) {}
  // How many launched containers have not completed yet.
  virtual int RunningContainers() const = 0;
  // Stops everything and the callback thread; no callback runs after it returns.
  virtual void Shutdown() = 0;
};

}  // namespace tony::cluster
