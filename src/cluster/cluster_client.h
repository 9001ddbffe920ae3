#pragma once
// The client's view of a resource manager: submit the AM, read its report, kill it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/container_allocator.h"

namespace tony::cluster {

struct AmSubmission {
  std::string app_id;
  std::string name;
  std::string queue;
  std::optional<int32_t> priority;  // unset: the queue's default
  std::string application_type = "TONY";
  std::vector<std::string> tags;
  std::string node_label;  // the AM container's
  int max_attempts = 1;    // of the AM
  // A later AM attempt adopts the running containers (YARN: the RM keeps them across attempts).
  bool keep_containers = false;
  std::string job_dir;  // local staging directory of the job
  std::vector<std::string> argv;
  // The AM's environment besides the launch contract (rpc::AmLaunch), which the backend writes.
  std::map<std::string, std::string> env;
  int64_t submitted_ms = 0;  // the client's wall clock at submission (the history's start)
  ResourceAsk resources;
  // Credentials for the AM alone, by alias. YARN puts them into the AM container's credentials;
  // the local backend's AM reads them from the job directory's private files.
  std::map<std::string, std::string> secrets;
  // Files of job_dir that never leave this machine (the private files above).
  std::vector<std::string> local_only_files;
};

enum class AppState { kSubmitted, kRunning, kFinished, kFailed, kKilled };

struct AppReport {
  std::string app_id;
  std::string name;  // the application's (tony.application.name)
  std::string user;  // who submitted it
  AppState state = AppState::kSubmitted;
  std::string am_address;  // "host:port" once the AM listens
  // The address the AM registered, also after the job ended (YARN keeps it in the report): an AM
  // that finished the job may still wait there for its client. Empty where unknown.
  std::string last_am_address;
  std::string final_state;  // "SUCCEEDED" / "FAILED" / "KILLED" once the AM recorded it
  std::string diagnostics;
  std::string status_json;  // the AM's last word on the tasks, if it wrote one
  std::string tracking_url;
  int attempt = 0;  // the AM's attempt number, from 1; 0 while unknown
};

// What the client learns of an input on the cluster's file system before it submits.
struct RemoteFileInfo {
  bool is_directory = false;
};

class ClusterClient {
 public:
  virtual ~ClusterClient() = default;
  [[nodiscard]] virtual absl::StatusOr<std::string> NewApplicationId() = 0;
  // Where the job's files are staged (local: a directory; YARN: an HDFS directory).
  virtual std::string JobDir(const std::string& app_id) const = 0;
  // kUnavailable only when no server of the cluster took any part of the job (none active or
  // reachable): nothing runs, and trying again later may work.
  [[nodiscard]] virtual absl::Status Submit(const AmSubmission& submission) = 0;
  [[nodiscard]] virtual absl::StatusOr<AppReport> GetReport(const std::string& app_id) = 0;
  // Asks the AM to stop the job; `force` kills every process of the job at once.
  [[nodiscard]] virtual absl::Status Kill(const std::string& app_id, bool force) = 0;
  // Waits until the AM process has exited; an error if it still runs after `timeout_ms`.
  [[nodiscard]] virtual absl::Status AwaitAmExit(const std::string& app_id, int64_t timeout_ms) = 0;
  // The job's output directory (tony.application.output-dir) as the job's configuration records
  // it: `requested` (JobSpec::output_dir, a local path made absolute) resolved (YARN: a viewfs://
  // URI to the hdfs:// one it names, a local path as file://), or the backend's default for "":
  // <job dir>/outputs locally, <staging dir>/outputs on the cluster's HDFS. Errors (an hdfs://
  // URI of no NameNode the configuration knows) are the user's to fix.
  [[nodiscard]] virtual absl::StatusOr<std::string> OutputDir(const std::string& app_id,
                                                              const std::string& requested) = 0;
  // Creates what OutputDir returned, 0700 where tony makes it (EnsureOutputDir's rules locally;
  // YARN: on HDFS, while a file:// directory is each node's to make). kFailedPrecondition,
  // kPermissionDenied, kInvalidArgument (a truststore that cannot be read): the user's to fix;
  // kUnavailable as Submit's (no server took it).
  [[nodiscard]] virtual absl::Status MakeOutputDir(const std::string& dir) = 0;
  // Looks up an hdfs:// input (a resource, the venv) that containers get from where it is:
  // NotFound if it does not exist, InvalidArgument if this backend cannot localize it.
  [[nodiscard]] virtual absl::StatusOr<RemoteFileInfo> StatRemote(const std::string& uri) = 0;
  // The backend's applications of `application_type` (tony.application.type), oldest first:
  // those not ended, and with `include_ended` the ended ones it still knows (YARN: those the
  // ResourceManager keeps; local: every job directory under TONY_HOME).
  [[nodiscard]] virtual absl::StatusOr<std::vector<AppReport>> ListApplications(
      const std::string& application_type, bool include_ended) = 0;
};

}  // namespace tony::cluster
