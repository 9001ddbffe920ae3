#pragma once
// The client side of YARN: a blocking client of the ResourceManager's ApplicationClientProtocol
// (what `tony submit`, `tony kill` and `tony cluster` need), its records as plain C++ values, and
// the pure conversions between those values and the wire messages of yarn.proto.
//
// Errors: the ResourceManager's Java exceptions come back as a Status from RemoteErrorStatus
// (GetRemoteError gives the class, e.g.
// org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException, with code kNotFound); the
// message names the method and the RM's host:port.
//
// Threads: YarnClient is thread-safe (calls are serialized, one in flight); the free functions
// are pure.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/ipc/failover.h"
#include "hadoop/ipc/ipc_client.h"
#include "hadoop/sasl/kerberos.h"
#include "hadoop/yarn/yarn.pb.h"

namespace tony::hadoop {

inline constexpr std::string_view kApplicationClientProtocol =
    "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";
inline constexpr uint64_t kApplicationClientProtocolVersion = 1;
// YARN's name of the GPU resource type.
inline constexpr std::string_view kGpuResource = "yarn.io/gpu";

struct ApplicationId {
  int64_t cluster_timestamp = 0;
  int32_t id = 0;

  // "application_<cluster_timestamp>_<id>", id zero-padded to 4 digits, as YARN prints it.
  std::string ToString() const;
  // The inverse of ToString (any number of id digits).
  static absl::StatusOr<ApplicationId> Parse(std::string_view text);
  friend bool operator==(const ApplicationId&, const ApplicationId&) = default;
};

struct ApplicationAttemptId {
  ApplicationId application_id;
  int32_t attempt_id = 0;

  // "appattempt_<cluster_timestamp>_<id:04>_<attempt:06>".
  std::string ToString() const;
  friend bool operator==(const ApplicationAttemptId&, const ApplicationAttemptId&) = default;
};

// A container size. gpus is the yarn.io/gpu resource type; 0 when the cluster has none.
struct Resource {
  int64_t memory_mb = 0;
  int32_t vcores = 0;
  int64_t gpus = 0;
  friend bool operator==(const Resource&, const Resource&) = default;
};

enum class YarnApplicationState {
  kNew,
  kNewSaving,
  kSubmitted,
  kAccepted,
  kRunning,
  kFinished,
  kFailed,
  kKilled,
  kUnknown,  // missing from the report, or a value this client does not know
};

enum class FinalApplicationStatus { kUndefined, kSucceeded, kFailed, kKilled, kEnded };

enum class NodeState {
  kNew,
  kRunning,
  kUnhealthy,
  kDecommissioned,
  kLost,
  kRebooted,
  kDecommissioning,
  kShutdown,
  kUnknown,
};

// YARN's names: "RUNNING", "SUCCEEDED", "DECOMMISSIONED"...; "UNKNOWN" for kUnknown.
std::string ToString(YarnApplicationState state);
std::string ToString(FinalApplicationStatus status);
std::string ToString(NodeState state);
// FINISHED, FAILED or KILLED: the application will not change state again.
bool IsFinal(YarnApplicationState state);

// A location as YARN's URL record holds it: hdfs://nn:8020/user/x/f is {"hdfs", "nn", 8020,
// "/user/x/f"}; file:///tmp/f is {"file", "", -1, "/tmp/f"}.
struct YarnUrl {
  std::string scheme;
  std::string host;
  int32_t port = -1;  // -1: none
  std::string file;
  std::string user_info;

  // Parses scheme://[user@]host[:port]/path or scheme:/path. The scheme is required.
  static absl::StatusOr<YarnUrl> Parse(std::string_view uri);
  std::string ToString() const;
  friend bool operator==(const YarnUrl&, const YarnUrl&) = default;
};

// An hdfs:// URI a user gave (a resource, a venv) as a location on the cluster's default file
// system `default_fs` (fs.defaultFS): hdfs:///p and hdfs://<that namenode>/p qualify; other
// schemes and other namenodes are refused, since tony reaches HDFS through that namenode only.
absl::StatusOr<YarnUrl> ResolveOnDefaultFs(std::string_view uri, std::string_view default_fs);

enum class LocalResourceType { kFile, kArchive };
enum class LocalResourceVisibility { kPublic, kPrivate, kApplication };

// A file the NodeManager downloads before launching the container. size and timestamp_ms must be
// the file's current length and modification time (the NodeManager checks both).
struct LocalResource {
  YarnUrl url;
  int64_t size = 0;
  int64_t timestamp_ms = 0;
  LocalResourceType type = LocalResourceType::kFile;
  LocalResourceVisibility visibility = LocalResourceVisibility::kApplication;
  friend bool operator==(const LocalResource&, const LocalResource&) = default;
};

struct ContainerLaunchContext {
  // Joined with spaces by the NodeManager into one shell command line: quote accordingly.
  std::vector<std::string> commands;
  std::map<std::string, std::string> environment;
  // Link name in the container's working directory -> resource.
  std::map<std::string, LocalResource> local_resources;
  // A serialized credentials file (Credentials::Serialize), or empty.
  std::string tokens;
};

struct AppSubmission {
  ApplicationId id;  // from GetNewApplication
  std::string name;
  std::string queue = "default";
  std::string type = "TONY";
  std::vector<std::string> tags;
  std::optional<int32_t> priority;  // unset: the queue's default priority
  int32_t max_app_attempts = 1;     // <= 0: the cluster's yarn.resourcemanager.am.max-attempts
  // The RM keeps the running containers when an AM attempt fails and hands them to the next one.
  bool keep_containers = false;
  std::string node_label_expression;  // empty: none
  // The AM container's size. gpus > 0 on a cluster without the yarn.io/gpu type is dropped by
  // the RM (it ignores unknown types): compare with NewApplication::maximum_capability first.
  Resource am_resource;
  ContainerLaunchContext am_container;
};

struct NewApplication {
  ApplicationId id;
  // The largest container the scheduler grants. gpus is 0 when the cluster has no yarn.io/gpu
  // type, and INT64_MAX when it has one without a maximum allocation.
  Resource maximum_capability;
};

struct ApplicationReport {
  ApplicationId id;
  std::optional<ApplicationAttemptId> current_attempt;
  std::string user;
  std::string queue;
  std::string name;
  std::string application_type;
  std::vector<std::string> tags;
  YarnApplicationState state = YarnApplicationState::kUnknown;
  FinalApplicationStatus final_status = FinalApplicationStatus::kUndefined;
  // As YARN gives it; "N/A" when YARN has none.
  std::string diagnostics;
  std::string host;  // the AM's host; "N/A" until it registers
  int32_t rpc_port = 0;
  std::string tracking_url;
  std::string original_tracking_url;
  float progress = 0;
  int32_t priority = 0;  // as the RM decided it (capped by its maximum)
  int64_t start_time_ms = 0;
  int64_t finish_time_ms = 0;  // 0 while not final
};

struct ClusterMetrics {
  int32_t num_node_managers = 0;
  int32_t num_active = 0;
  int32_t num_decommissioned = 0;
  int32_t num_lost = 0;
  int32_t num_unhealthy = 0;
  int32_t num_rebooted = 0;
};

struct NodeReport {
  std::string node_id;  // host:port of the NodeManager
  std::string host;
  int32_t port = 0;
  std::string http_address;
  std::string rack;
  NodeState state = NodeState::kUnknown;
  Resource capability;
  Resource used;
  int32_t num_containers = 0;
  std::string health_report;
  int64_t last_health_report_time_ms = 0;
  std::vector<std::string> node_labels;
};

// --- Conversions between these records and yarn.proto (pure) ---

proto::ApplicationId ApplicationIdToProto(const ApplicationId& id);
ApplicationId ApplicationIdFromProto(const proto::ApplicationId& id);
// Memory and vcores, plus a yarn.io/gpu entry when gpus > 0.
proto::Resource ResourceToProto(const Resource& resource);
// Memory and vcores from their fields, gpus from the yarn.io/gpu entry (0 if absent).
Resource ResourceFromProto(const proto::Resource& resource);
// The whole submitApplication request: unmanaged_am false, every local resource's visibility as
// given.
proto::SubmitApplicationRequest MakeSubmitApplicationRequest(const AppSubmission& submission);
ApplicationReport ApplicationReportFromProto(const proto::ApplicationReport& report);
ClusterMetrics ClusterMetricsFromProto(const proto::ClusterMetrics& metrics);
NodeReport NodeReportFromProto(const proto::NodeReport& node);

// A `yarn node -list`-like table for `tony cluster`: a summary line from the metrics, then one
// row per node (id, state, memory, vcores and GPUs used/total, containers), columns aligned.
std::string FormatNodesTable(const ClusterMetrics& metrics, const std::vector<NodeReport>& nodes);

// --- The client ---

class YarnClient {
 public:
  // Connects to yarn.resourcemanager.address: with Kerberos when `kerberos` is set (SASL GSSAPI
  // to yarn.resourcemanager.principal, _HOST being each RM's host), else with SIMPLE
  // authentication as `user` (empty: HadoopUser()). With ResourceManager HA, to the active one
  // among yarn.resourcemanager.ha.rm-ids, and every call fails over as the RMs do (failover.h).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<YarnClient>> Connect(
      const HadoopConf& conf, std::string user,
      std::shared_ptr<const KerberosCredentials> kerberos = nullptr);
  // Over an existing connection speaking kApplicationClientProtocol.
  explicit YarnClient(std::unique_ptr<IpcClient> ipc);
  // Over the ResourceManagers of `rm` (tests give fakes).
  explicit YarnClient(std::unique_ptr<FailoverConnection> rm);

  YarnClient(const YarnClient&) = delete;
  YarnClient& operator=(const YarnClient&) = delete;

  [[nodiscard]] absl::StatusOr<NewApplication> GetNewApplication();
  [[nodiscard]] absl::Status SubmitApplication(const AppSubmission& submission);
  [[nodiscard]] absl::StatusOr<ApplicationReport> GetApplicationReport(const ApplicationId& id);
  // The applications the RM still knows of (running ones, and finished ones it keeps) of any of
  // `types` (all when empty); only those not yet final unless `include_final`.
  [[nodiscard]] absl::StatusOr<std::vector<ApplicationReport>> GetApplications(
      const std::vector<std::string>& types, bool include_final);
  // Asks the RM to kill the application. Returns whether the kill has completed; when false the
  // RM is still killing it (calling again is harmless), and the report turns KILLED later.
  [[nodiscard]] absl::StatusOr<bool> ForceKillApplication(const ApplicationId& id,
                                                          std::string diagnostics = "");
  [[nodiscard]] absl::StatusOr<ClusterMetrics> GetClusterMetrics();
  // The nodes in any of `states`; every node when states is empty.
  [[nodiscard]] absl::StatusOr<std::vector<NodeReport>> GetClusterNodes(
      const std::vector<NodeState>& states = {});
  // Whether the RM speaks the protocol of placement constraints and node attributes (Hadoop
  // 3.2+): false for one without getClusterNodeAttributes (Hadoop 2.x), which would ignore an
  // AM's SchedulingRequests and let the job wait forever.
  [[nodiscard]] absl::StatusOr<bool> HasPlacementConstraints();

  // The RM's host:port (with HA, the one calls go to: "rm1 (host:port)").
  std::string peer() const;

 private:
  absl::Status Call(std::string_view method, const google::protobuf::MessageLite& request,
                    google::protobuf::MessageLite* response);

  mutable Mutex mu_;
  std::string peer_;  // without failover
  std::unique_ptr<RpcConnection> connection_ TONY_GUARDED_BY(mu_);
  FailoverConnection* failover_ TONY_GUARDED_BY(mu_) = nullptr;  // connection_, with failover
};

}  // namespace tony::hadoop
