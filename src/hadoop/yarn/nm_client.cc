#include "hadoop/yarn/nm_client.h"

#include <utility>

#include "common/strings.h"
#include "hadoop/ipc/rpc_codec.h"

namespace tony::hadoop {
namespace {

std::string FirstLine(std::string_view text) {
  size_t end = text.find('\n');
  return std::string(StripWhitespace(text.substr(0, end)));
}

// The failure for `id` among a batch response's failures, or nullptr.
const proto::ContainerFailure* FindFailure(
    const google::protobuf::RepeatedPtrField<proto::ContainerFailure>& failures,
    const ContainerId& id) {
  for (const proto::ContainerFailure& failure : failures) {
    if (ContainerIdFromProto(failure.container_id()) == id) return &failure;
  }
  return nullptr;
}

bool ListsContainer(const google::protobuf::RepeatedPtrField<proto::ContainerId>& ids,
                    const ContainerId& id) {
  for (const proto::ContainerId& candidate : ids) {
    if (ContainerIdFromProto(candidate) == id) return true;
  }
  return false;
}

// Checks a batch response for the one container asked about.
absl::Status BatchOutcome(const google::protobuf::RepeatedPtrField<proto::ContainerId>& succeeded,
                          const google::protobuf::RepeatedPtrField<proto::ContainerFailure>& failed,
                          const Container& container, std::string_view action) {
  std::string context = StrCat(action, " ", container.id.ToString(), " on ", container.node_id());
  if (const proto::ContainerFailure* failure = FindFailure(failed, container.id)) {
    return ContainerFailureStatus(failure->exception(), context);
  }
  if (!ListsContainer(succeeded, container.id)) {
    return absl::DataLossError(
        StrCat(context, ": the NodeManager's answer names neither success nor failure for it"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ContainerFailureStatus(const proto::SerializedException& exception,
                                    std::string_view context) {
  RemoteError error{exception.class_name(), exception.message()};
  if (error.class_name.empty()) error.class_name = "unnamed NodeManager exception";
  if (error.message.empty()) error.message = FirstLine(exception.trace());
  const proto::SerializedException* cause = exception.has_cause() ? &exception.cause() : nullptr;
  for (int depth = 0; cause != nullptr && depth < 8; ++depth) {
    error.message += StrCat("; caused by ", cause->class_name(), ": ", cause->message());
    cause = cause->has_cause() ? &cause->cause() : nullptr;
  }
  return RemoteErrorStatus(error, context);
}

proto::StartContainersRequest MakeStartContainersRequest(const Container& container,
                                                         const ContainerLaunchContext& launch) {
  proto::StartContainersRequest out;
  proto::StartContainerRequest* request = out.add_requests();
  // yarn_client's conversion of a launch context, through the submission that carries one.
  AppSubmission carrier;
  carrier.am_container = launch;
  *request->mutable_container_launch_context() =
      MakeSubmitApplicationRequest(carrier).context().am_container_spec();
  *request->mutable_container_token() = TokenToProto(container.container_token);
  return out;
}

NmClient::NmClient() : NmClient(TokenIpcConnector(std::string(kContainerManagementProtocol))) {}

NmClient::NmClient(RpcConnector connect) : connect_(std::move(connect)) {}

void NmClient::UpdateNmTokens(const std::map<std::string, Token>& tokens) {
  MutexLock lock(mu_);
  for (const auto& [node, token] : tokens) {
    auto it = tokens_.find(node);
    if (it != tokens_.end() && it->second == token) continue;
    tokens_[node] = token;
    connections_.erase(node);
  }
}

bool NmClient::HasNmToken(const std::string& node_id) const {
  MutexLock lock(mu_);
  return tokens_.contains(node_id);
}

absl::StatusOr<std::shared_ptr<RpcConnection>> NmClient::ConnectionFor(const Container& container) {
  std::string node = container.node_id();
  Token token;
  {
    MutexLock lock(mu_);
    if (auto it = connections_.find(node); it != connections_.end()) return it->second;
    auto it = tokens_.find(node);
    if (it == tokens_.end()) {
      return absl::FailedPreconditionError(
          StrCat("no NMToken for the NodeManager ", node, " of ", container.id.ToString(),
                 " (the RM sends one in the allocate response that first grants a container "
                 "there: pass AllocateResult::nm_tokens to UpdateNmTokens)"));
    }
    token = it->second;
  }
  // Connect without the lock: other nodes need not wait for this one.
  absl::StatusOr<std::unique_ptr<RpcConnection>> connection =
      connect_({container.node_host, container.node_port}, token);
  if (!connection.ok()) {
    return absl::Status(connection.status().code(), StrCat("connecting to the NodeManager ", node,
                                                           " for ", container.id.ToString(), ": ",
                                                           ToStd(connection.status().message())));
  }
  std::shared_ptr<RpcConnection> shared = std::move(*connection);
  MutexLock lock(mu_);
  // Another thread may have connected meanwhile, or the token changed: keep the newest token's.
  if (tokens_.contains(node) && tokens_[node] == token) connections_[node] = shared;
  return shared;
}

absl::Status NmClient::CallNode(const Container& container, std::string_view method,
                                const google::protobuf::MessageLite& request,
                                google::protobuf::MessageLite* response) {
  absl::StatusOr<std::shared_ptr<RpcConnection>> connection = ConnectionFor(container);
  if (!connection.ok()) return connection.status();
  absl::Status status = (*connection)->Call(method, request, response);
  if (status.code() == absl::StatusCode::kPermissionDenied ||
      status.code() == absl::StatusCode::kUnavailable ||
      status.code() == absl::StatusCode::kDeadlineExceeded) {
    MutexLock lock(mu_);
    auto it = connections_.find(container.node_id());
    if (it != connections_.end() && it->second == *connection) connections_.erase(it);
  }
  return status;
}

absl::Status NmClient::StartContainer(const Container& container,
                                      const ContainerLaunchContext& launch) {
  proto::StartContainersResponse response;
  if (absl::Status s = CallNode(container, "startContainers",
                                MakeStartContainersRequest(container, launch), &response);
      !s.ok()) {
    return s;
  }
  return BatchOutcome(response.succeeded_requests(), response.failed_requests(), container,
                      "starting");
}

absl::Status NmClient::StopContainer(const Container& container) {
  proto::StopContainersRequest request;
  *request.add_container_ids() = ContainerIdToProto(container.id);
  proto::StopContainersResponse response;
  if (absl::Status s = CallNode(container, "stopContainers", request, &response); !s.ok()) {
    return s;
  }
  return BatchOutcome(response.succeeded_requests(), response.failed_requests(), container,
                      "stopping");
}

absl::StatusOr<ContainerStatus> NmClient::GetContainerStatus(const Container& container) {
  proto::GetContainerStatusesRequest request;
  *request.add_container_ids() = ContainerIdToProto(container.id);
  proto::GetContainerStatusesResponse response;
  if (absl::Status s = CallNode(container, "getContainerStatuses", request, &response); !s.ok()) {
    return s;
  }
  std::string context = StrCat("status of ", container.id.ToString(), " on ", container.node_id());
  if (const proto::ContainerFailure* failure =
          FindFailure(response.failed_requests(), container.id)) {
    return ContainerFailureStatus(failure->exception(), context);
  }
  for (const proto::ContainerStatus& status : response.statuses()) {
    if (ContainerIdFromProto(status.container_id()) == container.id) {
      return ContainerStatusFromProto(status);
    }
  }
  return absl::DataLossError(StrCat(context, ": the NodeManager's answer has none"));
}

}  // namespace tony::hadoop
