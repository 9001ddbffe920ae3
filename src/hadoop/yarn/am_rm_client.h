#pragma once
// The ApplicationMaster's side of YARN's scheduler protocol (ApplicationMasterProtocol at
// yarn.resourcemanager.scheduler.address): register, ask for and release containers in a heartbeat
// (allocate), unregister. Also the container records the AM and NmClient share, and the pure
// conversions between them and yarn_am.proto.
//
// Authentication: the AMRMToken (kind YARN_AM_RM_TOKEN) from the AM container's credentials file
// ($HADOOP_TOKEN_FILE_LOCATION), over SASL DIGEST-MD5. When the RM rolls the token's key it sends a
// new token in an allocate response; the client switches to it (a new connection) before the next
// call, as Hadoop's AMRMClient does.
//
// Protocol state kept here: the heartbeat's response_id (0 after registering, then the id of the
// last response, wrapping at INT32_MAX). Recovered here without the caller: an RM that lost the
// registration (ApplicationMasterNotRegisteredException, after a work-preserving RM restart) is
// re-registered with the same host, port and URL, and the call resent (likewise after the AM_RESYNC
// command, which older RMs send instead); an RM that expects another response_id
// (InvalidApplicationMasterRequestException "expect responseId to be N") gets N.
//
// Errors: the RM's Java exceptions as a Status from RemoteErrorStatus (GetRemoteError gives the
// class); InvalidResourceRequestException (an ask above the maximum capability, a bad label) has
// code kInvalidArgument. Messages name the method and the scheduler's host:port.
//
// Threads: AmRmClient is not thread-safe: the AM's allocator owns it on one thread. The records
// are plain values and the free functions are pure.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/strings.h"
#include "google/protobuf/message_lite.h"
#include "hadoop/common/credentials.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/ipc/rpc_connection.h"
#include "hadoop/yarn/yarn_am.pb.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::hadoop {

inline constexpr std::string_view kApplicationMasterProtocol =
    "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB";
inline constexpr uint64_t kApplicationMasterProtocolVersion = 1;
inline constexpr std::string_view kAmRmTokenKind = "YARN_AM_RM_TOKEN";
inline constexpr std::string_view kNmTokenKind = "NMToken";

// YARN's exit statuses for containers that did not exit by themselves (ContainerExitStatus).
inline constexpr int32_t kExitStatusInvalid = -1000;  // no exit status (yet)
inline constexpr int32_t kExitStatusAborted = -100;   // released, or lost with its node
inline constexpr int32_t kExitStatusDisksFailed = -101;
inline constexpr int32_t kExitStatusPreempted = -102;
inline constexpr int32_t kExitStatusKilledExceededVmem = -103;
inline constexpr int32_t kExitStatusKilledExceededPmem = -104;
inline constexpr int32_t kExitStatusKilledByAppMaster = -105;
inline constexpr int32_t kExitStatusKilledByResourceManager = -106;
inline constexpr int32_t kExitStatusKilledAfterAppCompletion = -107;

// --- Records ---

struct ContainerId {
  ApplicationAttemptId attempt;
  // The RM's epoch in the upper 24 bits (non-zero after a recovering RM restarted), the sequence
  // number within the attempt in the lower 40.
  int64_t id = 0;

  int64_t epoch() const { return id >> 40; }
  int64_t sequence() const { return id & 0xff'ffff'ffffLL; }
  // As YARN prints it: container_[e<epoch:02>_]<cluster ts>_<app:04>_<attempt:02>_<seq:06>, e.g.
  // container_1700000000000_0007_01_000002 or container_e17_1700000000000_0007_01_000002.
  std::string ToString() const;
  // The inverse of ToString (e.g. the AM's own id from the CONTAINER_ID environment variable).
  static absl::StatusOr<ContainerId> Parse(std::string_view text);
  friend bool operator==(const ContainerId&, const ContainerId&) = default;
};

// A container the scheduler granted to this application.
struct Container {
  ContainerId id;
  std::string node_host;
  int32_t node_port = 0;
  std::string node_http_address;
  Resource resource;
  int32_t priority = 0;
  // Must travel back to the NodeManager when starting the container (NmClient does).
  Token container_token;
  int64_t allocation_request_id = -1;

  // "host:port" of the NodeManager, the key of the NMToken cache.
  std::string node_id() const { return StrCat(node_host, ":", node_port); }
};

enum class ContainerState { kNew, kRunning, kComplete, kScheduled, kUnknown };
std::string ToString(ContainerState state);  // YARN's names: "NEW", "RUNNING", "COMPLETE"...

struct ContainerStatus {
  ContainerId id;
  ContainerState state = ContainerState::kUnknown;
  // The process's exit code, or one of the kExitStatus* codes.
  int32_t exit_status = kExitStatusInvalid;
  std::string diagnostics;
};

// One line of the AM's table of outstanding asks. The scheduler keys them by (priority,
// resource_name, capability, allocation_request_id) and a new ask replaces the count for its key:
// num_containers is the total still wanted there, and 0 withdraws the ask. The scheduler lowers the
// count itself as it allocates, so an ask is sent when it changes, not with every heartbeat.
struct ContainerRequest {
  Resource capability;
  int32_t num_containers = 0;
  int32_t priority = 0;
  std::string resource_name = "*";  // any node; or a host or rack name
  bool relax_locality = true;
  std::string node_label_expression{};  // empty: the queue's default
  int64_t allocation_request_id = 0;
};

enum class AmCommand {
  kNone,
  // The RM lost the registration. AmRmClient registers again and repeats the heartbeat itself (as
  // for ApplicationMasterNotRegisteredException); a result still carries kResync only when the
  // repeated heartbeat was answered with it again.
  kResync,
  // The RM ended this attempt: the AM must stop its containers and exit; unregistering fails.
  kShutdown,
};

struct RegisterResult {
  // The largest container an ask may name; larger asks fail with InvalidResourceRequestException.
  Resource maximum_capability;
  std::string queue;
  // Only with keep_containers_across_application_attempts.
  std::vector<Container> containers_from_previous_attempts;
  std::map<std::string, Token> nm_tokens_from_previous_attempts;
};

struct AllocateResult {
  std::vector<Container> allocated;
  std::vector<ContainerStatus> completed;
  // New NMTokens by node id ("host:port"): hand them to NmClient::UpdateNmTokens. The RM sends a
  // node's token once, not with every container there.
  std::map<std::string, Token> nm_tokens;
  AmCommand command = AmCommand::kNone;
  Resource headroom;  // what the application may still get
  int32_t num_cluster_nodes = 0;
  // Containers the scheduler warns it will take back (its preemption message, both contracts).
  std::vector<ContainerId> to_be_preempted;
  // The RM rolled the AMRMToken; the client uses the new one from the next call on.
  bool am_rm_token_rolled = false;
  // The RM had lost this AM's registration and the client registered again: the RM forgot every
  // earlier ask, so the caller must send its whole table of outstanding asks again.
  bool reregistered = false;
  // The priorities of SchedulingRequests the scheduler gave up placing (it tried its
  // yarn.resourcemanager.placement-constraints.retry-attempts), with its reason.
  std::vector<std::pair<int32_t, std::string>> rejected;
};

// --- Conversions (pure) ---

proto::ApplicationAttemptId ApplicationAttemptIdToProto(const ApplicationAttemptId& id);
ApplicationAttemptId ApplicationAttemptIdFromProto(const proto::ApplicationAttemptId& id);
// Fills app_attempt_id and id, as YARN 3 does.
proto::ContainerId ContainerIdToProto(const ContainerId& id);
ContainerId ContainerIdFromProto(const proto::ContainerId& id);
Container ContainerFromProto(const proto::Container& container);
ContainerStatus ContainerStatusFromProto(const proto::ContainerStatus& status);
Token TokenFromProto(const proto::TokenMessage& token);
proto::TokenMessage TokenToProto(const Token& token);
proto::ResourceRequest ResourceRequestToProto(const ContainerRequest& request);
proto::AllocateRequest MakeAllocateRequest(
    const std::vector<ContainerRequest>& asks, const std::vector<ContainerId>& releases,
    float progress, int32_t response_id,
    const std::vector<proto::SchedulingRequest>& scheduling_requests = {});
AllocateResult AllocateResultFromProto(const proto::AllocateResponse& response);

// Whether the RM refused a call because it no longer knows the AM's attempt
// (ApplicationAttemptNotFoundException): the application has another attempt, or has ended.
bool IsAttemptUnknown(const absl::Status& status);
RegisterResult RegisterResultFromProto(const proto::RegisterApplicationMasterResponse& response);
// The responseId an InvalidApplicationMasterRequestException message says the RM expects.
std::optional<int32_t> ExpectedResponseIdFromMessage(std::string_view message);

// --- Connections ---

// Connects with IpcClient (SASL DIGEST-MD5 with the token) speaking `protocol`, version 1.
RpcConnector TokenIpcConnector(std::string protocol);

// --- The client ---

class AmRmClient {
 public:
  // Connects to yarn.resourcemanager.scheduler.address with the YARN_AM_RM_TOKEN in `credentials`
  // (read from $HADOOP_TOKEN_FILE_LOCATION inside the AM container).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AmRmClient>> Connect(
      const HadoopConf& conf, const Credentials& credentials);
  // Connects to `scheduler` through `connect` (tests inject a fake).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AmRmClient>> Connect(HostPort scheduler,
                                                                           Token am_rm_token,
                                                                           RpcConnector connect);

  AmRmClient(const AmRmClient&) = delete;
  AmRmClient& operator=(const AmRmClient&) = delete;

  // registerApplicationMaster. host and rpc_port are where clients reach the AM (shown in the
  // application report); tracking_url may be empty.
  [[nodiscard]] absl::StatusOr<RegisterResult> Register(std::string host, int32_t rpc_port,
                                                        std::string tracking_url);
  // One heartbeat: sends the changed asks and the containers to release, returns what the
  // scheduler decided since the last one. Must be called regularly (the RM expires an AM silent
  // for yarn.am.liveness-monitor.expiry-interval-ms, 10 minutes by default).
  // REQUIRES: Register succeeded (else kFailedPrecondition).
  // `scheduling_requests`: asks with placement constraints, never with changed `asks` (the
  // CapacityScheduler would skip them).
  [[nodiscard]] absl::StatusOr<AllocateResult> Allocate(
      const std::vector<ContainerRequest>& asks, const std::vector<ContainerId>& releases,
      float progress, const std::vector<proto::SchedulingRequest>& scheduling_requests = {});
  // finishApplicationMaster. Returns whether the RM has unregistered the AM; false while the RM is
  // still saving the final state: call again (after a short pause) until true.
  [[nodiscard]] absl::StatusOr<bool> Finish(FinalApplicationStatus status, std::string diagnostics,
                                            std::string tracking_url);

  // The scheduler's host:port.
  std::string peer() const {
    const std::string known = connection_ != nullptr ? connection_->peer() : "";
    return known.empty() ? scheduler_.ToString() : known;
  }
  // The token the client authenticates with (the latest the RM sent).
  const Token& am_rm_token() const { return token_; }
  // The response_id the next allocate sends.
  int32_t response_id() const { return response_id_; }

 private:
  AmRmClient(HostPort scheduler, Token am_rm_token, RpcConnector connect);

  // Calls the RM over the current connection, opening one first (with token_) when there is none.
  absl::Status CallRm(std::string_view method, const google::protobuf::MessageLite& request,
                      google::protobuf::MessageLite* response);
  // Registers again with the saved request after the RM lost the registration.
  absl::Status Reregister();

  const HostPort scheduler_;
  const RpcConnector connect_;
  Token token_;
  std::unique_ptr<RpcConnection> connection_;  // null: connect before the next call
  std::optional<proto::RegisterApplicationMasterRequest> registration_;
  int32_t response_id_ = 0;
};

}  // namespace tony::hadoop
