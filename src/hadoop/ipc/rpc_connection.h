#pragma once
// The seam between Hadoop RPC clients (AmRmClient, NmClient, YarnClient) and their connections:
// an IpcClient in production, a fake in unit tests (fake_rpc_server.h), or a FailoverConnection
// over several servers (failover.h).

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message_lite.h"
#include "hadoop/common/credentials.h"
#include "hadoop/common/hadoop_conf.h"

namespace tony::hadoop {

// One Hadoop RPC connection to one server for one protocol: an IpcClient in production, a fake in
// unit tests. Implementations used by NmClient must be thread-safe.
class RpcConnection {
 public:
  virtual ~RpcConnection() = default;
  [[nodiscard]] virtual absl::Status Call(std::string_view method,
                                          const google::protobuf::MessageLite& request,
                                          google::protobuf::MessageLite* response) = 0;
  // The server calls go to, when the connection knows better than its opener (failover.h);
  // empty otherwise.
  virtual std::string peer() const { return ""; }
};

// Opens a connection to `server` authenticated with `token`.
using RpcConnector = std::function<absl::StatusOr<std::unique_ptr<RpcConnection>>(
    const HostPort& server, const Token& token)>;

class IpcClient;
// An IpcClient as an RpcConnection.
std::unique_ptr<RpcConnection> AsRpcConnection(std::unique_ptr<IpcClient> ipc);

}  // namespace tony::hadoop
