#include "hadoop/yarn/am_rm_client.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <utility>

#include "absl/strings/cord.h"
#include "hadoop/ipc/failover.h"
#include "hadoop/ipc/ipc_client.h"
#include "hadoop/ipc/rpc_codec.h"

namespace tony::hadoop {
namespace {

constexpr std::string_view kNotRegisteredException =
    "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException";
constexpr std::string_view kInvalidAmRequestException =
    "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException";
constexpr std::string_view kAttemptNotFoundException =
    "org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException";
constexpr std::string_view kInvalidResourceRequestException =
    "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException";

// The status with another code, message and payloads (the RemoteError) kept.
absl::Status WithCode(const absl::Status& status, absl::StatusCode code) {
  absl::Status out(code, status.message());
  status.ForEachPayload([&out](absl::string_view type_url, const absl::Cord& payload) {
    out.SetPayload(type_url, payload);
  });
  return out;
}

bool IsRemoteError(const absl::Status& status, std::string_view class_name) {
  std::optional<RemoteError> error = GetRemoteError(status);
  return error.has_value() && error->class_name == class_name;
}

ContainerState ContainerStateFromProto(proto::ContainerState state) {
  switch (state) {
    case proto::CONTAINER_STATE_NEW:
      return ContainerState::kNew;
    case proto::CONTAINER_STATE_RUNNING:
      return ContainerState::kRunning;
    case proto::CONTAINER_STATE_COMPLETE:
      return ContainerState::kComplete;
    case proto::CONTAINER_STATE_SCHEDULED:
      return ContainerState::kScheduled;
  }
  return ContainerState::kUnknown;
}

proto::FinalStatus FinalStatusToProto(FinalApplicationStatus status) {
  switch (status) {
    case FinalApplicationStatus::kUndefined:
      return proto::FINAL_STATUS_UNDEFINED;
    case FinalApplicationStatus::kSucceeded:
      return proto::FINAL_STATUS_SUCCEEDED;
    case FinalApplicationStatus::kFailed:
      return proto::FINAL_STATUS_FAILED;
    case FinalApplicationStatus::kKilled:
      return proto::FINAL_STATUS_KILLED;
    case FinalApplicationStatus::kEnded:
      return proto::FINAL_STATUS_ENDED;
  }
  return proto::FINAL_STATUS_UNDEFINED;
}

std::map<std::string, Token> NmTokensFromProto(
    const google::protobuf::RepeatedPtrField<proto::NmToken>& tokens) {
  std::map<std::string, Token> out;
  for (const proto::NmToken& token : tokens) {
    out[StrCat(token.node_id().host(), ":", token.node_id().port())] =
        TokenFromProto(token.token());
  }
  return out;
}

class IpcRpcConnection final : public RpcConnection {
 public:
  explicit IpcRpcConnection(std::unique_ptr<IpcClient> ipc) : ipc_(std::move(ipc)) {}
  absl::Status Call(std::string_view method, const google::protobuf::MessageLite& request,
                    google::protobuf::MessageLite* response) override {
    return ipc_->Call(method, request, response);
  }

 private:
  std::unique_ptr<IpcClient> ipc_;
};

}  // namespace

std::unique_ptr<RpcConnection> AsRpcConnection(std::unique_ptr<IpcClient> ipc) {
  return std::make_unique<IpcRpcConnection>(std::move(ipc));
}

// --- Records ---

std::string ContainerId::ToString() const {
  std::string out = "container_";
  if (epoch() > 0) out += StrCat("e", ZeroPadded(epoch(), 2), "_");
  return StrCat(out, attempt.application_id.cluster_timestamp, "_",
                ZeroPadded(attempt.application_id.id, 4), "_", ZeroPadded(attempt.attempt_id, 2),
                "_", ZeroPadded(sequence(), 6));
}

absl::StatusOr<ContainerId> ContainerId::Parse(std::string_view text) {
  std::vector<std::string_view> parts = Split(text, '_');
  auto invalid = [&] {
    return absl::InvalidArgumentError(
        StrCat("'", text,
               "' is not a YARN container id (expected container_[e<epoch>_]<cluster "
               "timestamp>_<application>_<attempt>_<container>)"));
  };
  if (parts.empty() || parts[0] != "container") return invalid();
  int64_t epoch = 0;
  size_t next = 1;
  if (parts.size() == 6 && parts[1].starts_with("e")) {
    if (!ParseDecimal(parts[1].substr(1), &epoch) || epoch >= (int64_t{1} << 23)) return invalid();
    next = 2;
  }
  if (parts.size() != next + 4) return invalid();
  ContainerId id;
  int64_t sequence = 0;
  if (!ParseDecimal(parts[next], &id.attempt.application_id.cluster_timestamp) ||
      !ParseDecimal(parts[next + 1], &id.attempt.application_id.id) ||
      !ParseDecimal(parts[next + 2], &id.attempt.attempt_id) ||
      !ParseDecimal(parts[next + 3], &sequence) || sequence > 0xff'ffff'ffffLL) {
    return invalid();
  }
  id.id = (epoch << 40) | sequence;
  return id;
}

std::string ToString(ContainerState state) {
  switch (state) {
    case ContainerState::kNew:
      return "NEW";
    case ContainerState::kRunning:
      return "RUNNING";
    case ContainerState::kComplete:
      return "COMPLETE";
    case ContainerState::kScheduled:
      return "SCHEDULED";
    case ContainerState::kUnknown:
      break;
  }
  return "UNKNOWN";
}

// --- Conversions ---

proto::ApplicationAttemptId ApplicationAttemptIdToProto(const ApplicationAttemptId& id) {
  proto::ApplicationAttemptId out;
  *out.mutable_application_id() = ApplicationIdToProto(id.application_id);
  out.set_attempt_id(id.attempt_id);
  return out;
}

ApplicationAttemptId ApplicationAttemptIdFromProto(const proto::ApplicationAttemptId& id) {
  return {.application_id = ApplicationIdFromProto(id.application_id()),
          .attempt_id = id.attempt_id()};
}

proto::ContainerId ContainerIdToProto(const ContainerId& id) {
  proto::ContainerId out;
  *out.mutable_app_attempt_id() = ApplicationAttemptIdToProto(id.attempt);
  out.set_id(id.id);
  return out;
}

ContainerId ContainerIdFromProto(const proto::ContainerId& id) {
  ContainerId out{.attempt = ApplicationAttemptIdFromProto(id.app_attempt_id()), .id = id.id()};
  if (!id.app_attempt_id().has_application_id() && id.has_legacy_app_id()) {
    out.attempt.application_id = ApplicationIdFromProto(id.legacy_app_id());
  }
  return out;
}

Token TokenFromProto(const proto::TokenMessage& token) {
  return {.identifier = token.identifier(),
          .password = token.password(),
          .kind = token.kind(),
          .service = token.service()};
}

proto::TokenMessage TokenToProto(const Token& token) {
  proto::TokenMessage out;
  out.set_identifier(token.identifier);
  out.set_password(token.password);
  out.set_kind(token.kind);
  out.set_service(token.service);
  return out;
}

Container ContainerFromProto(const proto::Container& container) {
  return {.id = ContainerIdFromProto(container.id()),
          .node_host = container.node_id().host(),
          .node_port = container.node_id().port(),
          .node_http_address = container.node_http_address(),
          .resource = ResourceFromProto(container.resource()),
          .priority = container.priority().priority(),
          .container_token = TokenFromProto(container.container_token()),
          .allocation_request_id = container.allocation_request_id()};
}

ContainerStatus ContainerStatusFromProto(const proto::ContainerStatus& status) {
  return {.id = ContainerIdFromProto(status.container_id()),
          .state = status.has_state() ? ContainerStateFromProto(status.state())
                                      : ContainerState::kUnknown,
          .exit_status = status.exit_status(),
          .diagnostics = status.diagnostics()};
}

proto::ResourceRequest ResourceRequestToProto(const ContainerRequest& request) {
  proto::ResourceRequest out;
  out.mutable_priority()->set_priority(request.priority);
  out.set_resource_name(request.resource_name);
  *out.mutable_capability() = ResourceToProto(request.capability);
  out.set_num_containers(request.num_containers);
  out.set_relax_locality(request.relax_locality);
  if (!request.node_label_expression.empty()) {
    out.set_node_label_expression(request.node_label_expression);
  }
  if (request.allocation_request_id != 0) {
    out.set_allocation_request_id(request.allocation_request_id);
  }
  return out;
}

proto::AllocateRequest MakeAllocateRequest(
    const std::vector<ContainerRequest>& asks, const std::vector<ContainerId>& releases,
    float progress, int32_t response_id,
    const std::vector<proto::SchedulingRequest>& scheduling_requests) {
  proto::AllocateRequest out;
  for (const ContainerRequest& ask : asks) *out.add_ask() = ResourceRequestToProto(ask);
  for (const proto::SchedulingRequest& request : scheduling_requests) {
    *out.add_scheduling_requests() = request;
  }
  for (const ContainerId& id : releases) *out.add_release() = ContainerIdToProto(id);
  out.set_response_id(response_id);
  out.set_progress(progress);
  return out;
}

AllocateResult AllocateResultFromProto(const proto::AllocateResponse& response) {
  AllocateResult out;
  for (const proto::Container& container : response.allocated_containers()) {
    out.allocated.push_back(ContainerFromProto(container));
  }
  for (const proto::ContainerStatus& status : response.completed_container_statuses()) {
    out.completed.push_back(ContainerStatusFromProto(status));
  }
  out.nm_tokens = NmTokensFromProto(response.nm_tokens());
  if (response.has_am_command()) {
    out.command = response.am_command() == proto::AM_COMMAND_RESYNC ? AmCommand::kResync
                                                                    : AmCommand::kShutdown;
  }
  out.headroom = ResourceFromProto(response.limit());
  for (const proto::RejectedSchedulingRequest& rejected : response.rejected_scheduling_requests()) {
    out.rejected.emplace_back(rejected.request().priority().priority(),
                              rejected.reason() == 1 ? "could not place it on a node"
                                                     : "could not schedule it on a node");
  }
  out.num_cluster_nodes = response.num_cluster_nodes();
  auto take = [&out](const auto& containers) {
    for (const proto::PreemptionContainer& container : containers) {
      const ContainerId id = ContainerIdFromProto(container.id());
      if (std::find(out.to_be_preempted.begin(), out.to_be_preempted.end(), id) ==
          out.to_be_preempted.end()) {
        out.to_be_preempted.push_back(id);
      }
    }
  };
  take(response.preempt().strict_contract().container());
  take(response.preempt().contract().container());
  return out;
}

RegisterResult RegisterResultFromProto(const proto::RegisterApplicationMasterResponse& response) {
  RegisterResult out;
  out.maximum_capability = ResourceFromProto(response.maximum_capability());
  out.queue = response.queue();
  for (const proto::Container& container : response.containers_from_previous_attempts()) {
    out.containers_from_previous_attempts.push_back(ContainerFromProto(container));
  }
  out.nm_tokens_from_previous_attempts =
      NmTokensFromProto(response.nm_tokens_from_previous_attempts());
  return out;
}

std::optional<int32_t> ExpectedResponseIdFromMessage(std::string_view message) {
  constexpr std::string_view kExpect = " expect responseId to be ";
  constexpr std::string_view kBut = " but get ";
  size_t start = message.find(kExpect);
  if (start == std::string_view::npos) return std::nullopt;
  start += kExpect.size();
  size_t end = message.find(kBut, start);
  if (end == std::string_view::npos) return std::nullopt;
  int32_t id = 0;
  if (!ParseDecimal(message.substr(start, end - start), &id)) return std::nullopt;
  return id;
}

RpcConnector TokenIpcConnector(std::string protocol) {
  return [protocol = std::move(protocol)](
             const HostPort& server,
             const Token& token) -> absl::StatusOr<std::unique_ptr<RpcConnection>> {
    IpcClientOptions options;
    options.host = server.host;
    options.port = server.port;
    options.protocol = protocol;
    options.protocol_version = 1;
    options.token = token;
    absl::StatusOr<std::unique_ptr<IpcClient>> ipc = IpcClient::Connect(std::move(options));
    if (!ipc.ok()) return ipc.status();
    return std::make_unique<IpcRpcConnection>(std::move(*ipc));
  };
}

// --- AmRmClient ---

absl::StatusOr<std::unique_ptr<AmRmClient>> AmRmClient::Connect(const HadoopConf& conf,
                                                                const Credentials& credentials) {
  absl::StatusOr<std::vector<ServerAddress>> schedulers =
      conf.RmAddresses("yarn.resourcemanager.scheduler.address");
  if (!schedulers.ok()) return schedulers.status();
  absl::StatusOr<Token> token = credentials.RequireTokenByKind(kAmRmTokenKind);
  if (!token.ok()) {
    return absl::Status(token.status().code(),
                        StrCat("the AM needs its AMRMToken to talk to the scheduler: ",
                               ToStd(token.status().message())));
  }
  RpcConnector connector = TokenIpcConnector(std::string(kApplicationMasterProtocol));
  if (schedulers->size() > 1) {
    connector = FailoverConnector("ResourceManager", *schedulers, std::move(connector),
                                  FailoverPolicyFromConf(conf, schedulers->size()));
  }
  return Connect(schedulers->front().address, *std::move(token), std::move(connector));
}

absl::StatusOr<std::unique_ptr<AmRmClient>> AmRmClient::Connect(HostPort scheduler,
                                                                Token am_rm_token,
                                                                RpcConnector connect) {
  std::unique_ptr<AmRmClient> client(
      new AmRmClient(std::move(scheduler), std::move(am_rm_token), std::move(connect)));
  absl::StatusOr<std::unique_ptr<RpcConnection>> connection =
      client->connect_(client->scheduler_, client->token_);
  if (!connection.ok()) {
    return absl::Status(connection.status().code(),
                        StrCat("connecting to the scheduler (yarn.resourcemanager.scheduler."
                               "address ",
                               client->peer(), "): ", ToStd(connection.status().message())));
  }
  client->connection_ = std::move(*connection);
  return client;
}

AmRmClient::AmRmClient(HostPort scheduler, Token am_rm_token, RpcConnector connect)
    : scheduler_(std::move(scheduler)),
      connect_(std::move(connect)),
      token_(std::move(am_rm_token)) {}

absl::Status AmRmClient::CallRm(std::string_view method,
                                const google::protobuf::MessageLite& request,
                                google::protobuf::MessageLite* response) {
  if (connection_ == nullptr) {
    absl::StatusOr<std::unique_ptr<RpcConnection>> connection = connect_(scheduler_, token_);
    if (!connection.ok()) {
      return absl::Status(connection.status().code(),
                          StrCat(method, ": reconnecting to the scheduler ", peer(), ": ",
                                 ToStd(connection.status().message())));
    }
    connection_ = std::move(*connection);
  }
  absl::Status status = connection_->Call(method, request, response);
  if (IsRemoteError(status, kInvalidResourceRequestException)) {
    return WithCode(status, absl::StatusCode::kInvalidArgument);
  }
  return status;
}

absl::Status AmRmClient::Reregister() {
  proto::RegisterApplicationMasterResponse response;
  absl::Status status = CallRm("registerApplicationMaster", *registration_, &response);
  if (status.ok()) response_id_ = 0;
  return status;
}

absl::StatusOr<RegisterResult> AmRmClient::Register(std::string host, int32_t rpc_port,
                                                    std::string tracking_url) {
  proto::RegisterApplicationMasterRequest request;
  request.set_host(std::move(host));
  request.set_rpc_port(rpc_port);
  request.set_tracking_url(std::move(tracking_url));
  proto::RegisterApplicationMasterResponse response;
  if (absl::Status s = CallRm("registerApplicationMaster", request, &response); !s.ok()) return s;
  registration_ = std::move(request);
  response_id_ = 0;
  return RegisterResultFromProto(response);
}

bool IsAttemptUnknown(const absl::Status& status) {
  return IsRemoteError(status, kAttemptNotFoundException);
}

absl::StatusOr<AllocateResult> AmRmClient::Allocate(
    const std::vector<ContainerRequest>& asks, const std::vector<ContainerId>& releases,
    float progress, const std::vector<proto::SchedulingRequest>& scheduling_requests) {
  if (!registration_.has_value()) {
    return absl::FailedPreconditionError(
        StrCat("allocate on the scheduler ", peer(), " before the AM registered"));
  }
  proto::AllocateRequest request =
      MakeAllocateRequest(asks, releases, progress, response_id_, scheduling_requests);
  proto::AllocateResponse response;
  bool reregistered = false;
  absl::Status status = CallRm("allocate", request, &response);
  // Both ways an RM says it lost this AM's registration (after a work-preserving restart): the
  // exception (YARN 2.6 and later) and the AM_RESYNC command (earlier RMs). Either way: register
  // again, then send the same heartbeat from response id 0.
  const bool resync =
      status.ok() && response.has_am_command() && response.am_command() == proto::AM_COMMAND_RESYNC;
  if (resync || IsRemoteError(status, kNotRegisteredException)) {
    if (absl::Status s = Reregister(); !s.ok()) return s;
    reregistered = true;
    request.set_response_id(response_id_);
    response.Clear();
    status = CallRm("allocate", request, &response);
  } else if (IsRemoteError(status, kInvalidAmRequestException)) {
    std::optional<int32_t> expected =
        ExpectedResponseIdFromMessage(GetRemoteError(status)->message);
    if (expected.has_value()) {
      request.set_response_id(*expected);
      response.Clear();
      status = CallRm("allocate", request, &response);
    }
  }
  if (!status.ok()) return status;

  response_id_ = response.response_id();
  AllocateResult result = AllocateResultFromProto(response);
  result.reregistered = reregistered;
  if (response.has_am_rm_token()) {
    Token rolled = TokenFromProto(response.am_rm_token());
    if (rolled != token_) {
      // The current connection stays authenticated, but a reconnect with the old token would fail
      // once the RM activates the new key: switch now.
      token_ = std::move(rolled);
      connection_.reset();
      result.am_rm_token_rolled = true;
    }
  }
  return result;
}

absl::StatusOr<bool> AmRmClient::Finish(FinalApplicationStatus status, std::string diagnostics,
                                        std::string tracking_url) {
  if (!registration_.has_value()) {
    return absl::FailedPreconditionError(
        StrCat("finishApplicationMaster on the scheduler ", peer(), " before the AM registered"));
  }
  proto::FinishApplicationMasterRequest request;
  request.set_final_application_status(FinalStatusToProto(status));
  request.set_diagnostics(std::move(diagnostics));
  request.set_tracking_url(std::move(tracking_url));
  proto::FinishApplicationMasterResponse response;
  absl::Status s = CallRm("finishApplicationMaster", request, &response);
  if (IsRemoteError(s, kNotRegisteredException)) {
    if (absl::Status r = Reregister(); !r.ok()) return r;
    response.Clear();
    s = CallRm("finishApplicationMaster", request, &response);
  }
  if (!s.ok()) return s;
  return response.is_unregistered();
}

}  // namespace tony::hadoop
