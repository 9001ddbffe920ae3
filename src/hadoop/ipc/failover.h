#pragma once
// Speaking to one of several servers of which one is active: YARN's ResourceManagers in HA
// (yarn.resourcemanager.ha.rm-ids), as Hadoop's ConfiguredRMFailoverProxyProvider does. A
// FailoverConnection is one RpcConnection over the servers: it calls the one it last found
// active, and when that one answers StandbyException or cannot be reached, it moves on to the
// next, round after round with a growing pause between rounds, until one answers or its attempts
// are spent. Any other answer, error or not, is the caller's.
//
// Threads: a FailoverConnection is used by one thread at a time (as AmRmClient and YarnClient use
// their connection); the free functions are pure.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/ipc/rpc_connection.h"

namespace tony::hadoop {

// One server of an HA group: its id (rm1; empty without HA) and the address of the protocol.
using FailoverTarget = ServerAddress;

struct FailoverPolicy {
  // Rounds over all the targets before giving up.
  int rounds = 4;
  // The pause after a round in which no target answered: base, doubled each round, at most max.
  int64_t sleep_base_ms = 500;
  int64_t sleep_max_ms = 15000;
};

// The policy from yarn.client.failover-max-attempts (failovers in all, made into rounds),
// yarn.client.failover-sleep-base-ms and yarn.client.failover-sleep-max-ms; tony's defaults
// (above) where unset. Hadoop's own defaults wait up to 15 minutes, which a command line cannot.
FailoverPolicy FailoverPolicyFromConf(const HadoopConf& conf, size_t targets);
// The same for an HA nameservice's NameNodes, from dfs.client.failover.max.attempts,
// dfs.client.failover.sleep.base.millis and dfs.client.failover.sleep.max.millis.
FailoverPolicy NameNodeFailoverPolicy(const HadoopConf& conf, size_t namenodes);

// Whether `status` means "this server cannot serve; try another": the server is a standby
// (StandbyException), or it could not be reached or dropped the connection.
bool ShouldFailOver(const absl::Status& status);

class FailoverConnection final : public RpcConnection {
 public:
  using Opener =
      std::function<absl::StatusOr<std::unique_ptr<RpcConnection>>(const FailoverTarget& target)>;
  using Sleeper = std::function<void(int64_t ms)>;

  // `what` names the group in errors ("ResourceManager"). Connects lazily, on the first call.
  FailoverConnection(std::string what, std::vector<FailoverTarget> targets, Opener open,
                     FailoverPolicy policy, Sleeper sleep = nullptr);

  absl::Status Call(std::string_view method, const google::protobuf::MessageLite& request,
                    google::protobuf::MessageLite* response) override;

  // The current target's name ("rm2 (host:port)").
  std::string peer() const override { return current().Name(); }

  // Connects to an active server now (calls do so on their own); for errors at connect time.
  absl::Status Connect();

  // The target calls go to: the one last found active, or the next to try.
  const FailoverTarget& current() const { return targets_[current_]; }
  // How many times calls moved to another target.
  int failovers() const { return failovers_; }

 private:
  // Runs `attempt` on the current target's connection, failing over as the policy allows.
  absl::Status WithFailover(std::string_view what,
                            const std::function<absl::Status(RpcConnection*)>& attempt);

  const std::string what_;
  const std::vector<FailoverTarget> targets_;
  const Opener open_;
  const FailoverPolicy policy_;
  const Sleeper sleep_;
  size_t current_ = 0;
  std::unique_ptr<RpcConnection> connection_;
  int failovers_ = 0;
};

// A connector for AmRmClient over an HA group: each connection it opens is a FailoverConnection
// over `targets` (the address it is asked for is ignored), each target opened through `base` with
// the token it is given. It connects at once, so that an unreachable group fails the open.
RpcConnector FailoverConnector(std::string what, std::vector<FailoverTarget> targets,
                               RpcConnector base, FailoverPolicy policy);

// The error of an HA group none of whose servers took a call (each standby or unreachable, the
// last round's answers in its message): kUnavailable, marked so that callers can tell it from a
// connection that broke with the call in flight, whose outcome is unknown.
absl::Status NoActiveServerError(std::string_view message);
bool IsNoActiveServer(const absl::Status& status);

// "rm1=host:port,rm2=host:port" (or "host:port" for one server without an id), for the AM's
// launch environment, and back. Parsing names the part that is wrong.
std::string FormatServerList(const std::vector<ServerAddress>& servers);
absl::StatusOr<std::vector<ServerAddress>> ParseServerList(std::string_view text);

}  // namespace tony::hadoop
