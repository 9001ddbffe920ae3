#include "hadoop/ipc/failover.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/strings.h"
#include "hadoop/ipc/rpc_codec.h"

namespace tony::hadoop {
namespace {

int64_t IntOr(const HadoopConf& conf, const std::string& key, int64_t fallback) {
  const std::string text = conf.Get(key);
  int64_t value = 0;
  if (text.empty() || !ParseDecimal(text, &value) || value < 0) return fallback;
  return value;
}

FailoverPolicy PolicyFromKeys(const HadoopConf& conf, size_t targets,
                              const std::string& attempts_key, const std::string& base_key,
                              const std::string& max_key) {
  FailoverPolicy policy;
  const int64_t attempts = IntOr(conf, attempts_key, -1);
  if (attempts >= 0 && targets > 0) {
    // N failovers visit N + 1 servers: that many, in whole rounds, at least one.
    policy.rounds = static_cast<int>(std::max<int64_t>(
        1, (attempts + static_cast<int64_t>(targets)) / static_cast<int64_t>(targets)));
  }
  policy.sleep_base_ms = IntOr(conf, base_key, policy.sleep_base_ms);
  policy.sleep_max_ms = IntOr(conf, max_key, policy.sleep_max_ms);
  return policy;
}

}  // namespace

FailoverPolicy FailoverPolicyFromConf(const HadoopConf& conf, size_t targets) {
  return PolicyFromKeys(conf, targets, "yarn.client.failover-max-attempts",
                        "yarn.client.failover-sleep-base-ms", "yarn.client.failover-sleep-max-ms");
}

FailoverPolicy NameNodeFailoverPolicy(const HadoopConf& conf, size_t namenodes) {
  return PolicyFromKeys(conf, namenodes, "dfs.client.failover.max.attempts",
                        "dfs.client.failover.sleep.base.millis",
                        "dfs.client.failover.sleep.max.millis");
}

namespace {
constexpr char kNoActiveServerPayload[] = "tony.hadoop/no-active-server";
}  // namespace

absl::Status NoActiveServerError(std::string_view message) {
  absl::Status status = absl::UnavailableError(absl::string_view(message.data(), message.size()));
  status.SetPayload(kNoActiveServerPayload, absl::Cord("1"));
  return status;
}

bool IsNoActiveServer(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnavailable &&
         status.GetPayload(kNoActiveServerPayload).has_value();
}

bool ShouldFailOver(const absl::Status& status) {
  auto ends_with = [](std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
  };
  if (status.ok()) return false;
  std::optional<RemoteError> remote = GetRemoteError(status);
  if (remote.has_value()) {
    // The server answered: only a standby's answer (or one too busy to serve) sends the call on.
    return ends_with(remote->class_name, "StandbyException") ||
           ends_with(remote->class_name, "RetriableException") ||
           ends_with(remote->class_name, "ServerTooBusyException");
  }
  return status.code() == absl::StatusCode::kUnavailable ||
         status.code() == absl::StatusCode::kDeadlineExceeded;
}

FailoverConnection::FailoverConnection(std::string what, std::vector<FailoverTarget> targets,
                                       Opener open, FailoverPolicy policy, Sleeper sleep)
    : what_(std::move(what)),
      targets_(std::move(targets)),
      open_(std::move(open)),
      policy_(policy),
      sleep_(sleep ? std::move(sleep) : Sleeper([](int64_t ms) {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      })) {}

absl::Status FailoverConnection::Call(std::string_view method,
                                      const google::protobuf::MessageLite& request,
                                      google::protobuf::MessageLite* response) {
  return WithFailover(method, [&](RpcConnection* connection) {
    return connection->Call(method, request, response);
  });
}

absl::Status FailoverConnection::Connect() {
  // Unnamed: callers say what they were connecting to.
  return WithFailover("", [](RpcConnection*) { return absl::OkStatus(); });
}

absl::Status FailoverConnection::WithFailover(
    std::string_view what, const std::function<absl::Status(RpcConnection*)>& attempt) {
  if (targets_.empty()) {
    return absl::InvalidArgumentError(StrCat("no ", what_, " is configured"));
  }
  // The last error of each target, for the message when none answers.
  std::vector<std::string> last(targets_.size());
  absl::Status last_status;
  const int rounds = std::max(1, policy_.rounds);
  int64_t pause_ms = policy_.sleep_base_ms;
  for (int round = 0; round < rounds; ++round) {
    if (round > 0) {
      sleep_(pause_ms);
      pause_ms = std::min(policy_.sleep_max_ms, pause_ms * 2);
    }
    for (size_t tried = 0; tried < targets_.size(); ++tried) {
      absl::Status status;
      if (connection_ == nullptr) {
        absl::StatusOr<std::unique_ptr<RpcConnection>> opened = open_(targets_[current_]);
        if (opened.ok()) {
          connection_ = std::move(*opened);
        } else {
          status = opened.status();
        }
      }
      if (connection_ != nullptr) status = attempt(connection_.get());
      if (!ShouldFailOver(status)) return status;
      last[current_] = std::string(status.message());
      last_status = status;
      connection_.reset();
      if (targets_.size() > 1) {
        current_ = (current_ + 1) % targets_.size();
        ++failovers_;
      }
    }
  }
  if (targets_.size() == 1) return last_status;  // no HA: the one server's own answer
  std::vector<std::string> each;
  each.reserve(targets_.size());
  for (size_t i = 0; i < targets_.size(); ++i) {
    each.push_back(StrCat(targets_[i].Name(), ": ", last[i]));
  }
  return NoActiveServerError(StrCat(what, what.empty() ? "" : ": ", "no active ", what_, " among ",
                                    targets_.size(), " after ", rounds,
                                    rounds == 1 ? " round: " : " rounds: ", Join(each, "; ")));
}

RpcConnector FailoverConnector(std::string what, std::vector<FailoverTarget> targets,
                               RpcConnector base, FailoverPolicy policy) {
  return
      [what = std::move(what), targets = std::move(targets), base = std::move(base), policy](
          const HostPort&, const Token& token) -> absl::StatusOr<std::unique_ptr<RpcConnection>> {
        auto connection = std::make_unique<FailoverConnection>(
            what, targets,
            [base, token](const FailoverTarget& target) { return base(target.address, token); },
            policy);
        if (absl::Status connected = connection->Connect(); !connected.ok()) return connected;
        return connection;
      };
}

std::string FormatServerList(const std::vector<ServerAddress>& servers) {
  std::vector<std::string> parts;
  parts.reserve(servers.size());
  for (const ServerAddress& server : servers) {
    parts.push_back(server.id.empty() ? server.address.ToString()
                                      : StrCat(server.id, "=", server.address.ToString()));
  }
  return Join(parts, ",");
}

absl::StatusOr<std::vector<ServerAddress>> ParseServerList(std::string_view text) {
  std::vector<ServerAddress> servers;
  for (std::string_view part : Split(text, ',')) {
    ServerAddress server;
    const size_t equals = part.find('=');
    if (equals != std::string_view::npos) {
      server.id = std::string(part.substr(0, equals));
      part.remove_prefix(equals + 1);
    }
    absl::StatusOr<HostPort> address = ParseHostPort(std::string(part));
    if (!address.ok()) return address.status();
    server.address = *std::move(address);
    servers.push_back(std::move(server));
  }
  if (servers.empty()) return absl::InvalidArgumentError("an empty list of servers");
  return servers;
}

}  // namespace tony::hadoop
