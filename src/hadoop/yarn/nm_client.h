#pragma once
// The ApplicationMaster's side of the NodeManagers' ContainerManagementProtocol: start a granted
// container with a launch context, stop it, ask for its status.
//
// Authentication: per node, the NMToken the RM sent in an allocate (or register) response, over
// SASL DIGEST-MD5. The NodeManager takes the caller's identity from the token (the application
// attempt id: Hadoop's NMClient runs as a remote user named after it, and no user name travels
// with token authentication) and checks that the container belongs to that attempt. The container
// token from the allocation travels in the start request.
//
// Connections are cached per node and replaced when the node's NMToken changes or a call fails
// with an authentication or connection error.
//
// Errors: the NodeManager answers batch calls with a per-container exception; it becomes a Status
// whose message names the container and the node and whose RemoteError (GetRemoteError) carries
// the Java class, e.g. org.apache.hadoop.yarn.exceptions.YarnException. A node without an NMToken
// is kFailedPrecondition.
//
// Threads: NmClient is thread-safe; calls to different nodes may run in parallel, calls to one
// node are serialized by its connection.

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "hadoop/yarn/am_rm_client.h"
#include "hadoop/yarn/yarn_am.pb.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::hadoop {

inline constexpr std::string_view kContainerManagementProtocol =
    "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB";

// A per-container failure from a batch response as a Status: "<context>: <class>: <message>"
// (the causes' classes and messages appended), with the RemoteError payload.
absl::Status ContainerFailureStatus(const proto::SerializedException& exception,
                                    std::string_view context);

// The whole startContainers request for one container.
proto::StartContainersRequest MakeStartContainersRequest(const Container& container,
                                                         const ContainerLaunchContext& launch);

class NmClient {
 public:
  // Real connections: IpcClient speaking kContainerManagementProtocol.
  NmClient();
  explicit NmClient(RpcConnector connect);

  NmClient(const NmClient&) = delete;
  NmClient& operator=(const NmClient&) = delete;

  // Remembers NMTokens by node id ("host:port"), as AllocateResult::nm_tokens gives them.
  void UpdateNmTokens(const std::map<std::string, Token>& tokens);
  bool HasNmToken(const std::string& node_id) const;

  // Starts `launch` in the granted container on its node.
  [[nodiscard]] absl::Status StartContainer(const Container& container,
                                            const ContainerLaunchContext& launch);
  // Asks the node to kill the container; its completion then arrives through allocate with
  // kExitStatusKilledByAppMaster.
  [[nodiscard]] absl::Status StopContainer(const Container& container);
  [[nodiscard]] absl::StatusOr<ContainerStatus> GetContainerStatus(const Container& container);

 private:
  // The cached connection to the container's node, opened with its NMToken when missing.
  absl::StatusOr<std::shared_ptr<RpcConnection>> ConnectionFor(const Container& container);
  // Calls the node; drops its cached connection when the call failed in a way a new connection
  // (possibly with a newer token) may fix.
  absl::Status CallNode(const Container& container, std::string_view method,
                        const google::protobuf::MessageLite& request,
                        google::protobuf::MessageLite* response);

  const RpcConnector connect_;
  mutable Mutex mu_;
  std::map<std::string, Token> tokens_ TONY_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<RpcConnection>> connections_ TONY_GUARDED_BY(mu_);
};

}  // namespace tony::hadoop
