#include "hadoop/hdfs/namenode_client.h"

#include "common/strings.h"
#include "hadoop/hdfs/hdfs.pb.h"
#include "hadoop/ipc/ipc_client.h"
#include "hadoop/ipc/rpc_codec.h"
#include "hadoop/sasl/gssapi_mechanism.h"

namespace tony::hadoop {
namespace {

constexpr char kClientProtocol[] = "org.apache.hadoop.hdfs.protocol.ClientProtocol";

// A Kerberos-authenticated ClientProtocol connection to the file system's active NameNode, opened
// on the first call; errors start with `what`.
absl::StatusOr<std::unique_ptr<FailoverConnection>> ConnectNameNodes(
    const HadoopConf& conf, const NameService& namenodes,
    const std::shared_ptr<const KerberosCredentials>& credentials) {
  const std::string principal = conf.Get("dfs.namenode.kerberos.principal");
  if (principal.empty()) {
    return absl::InvalidArgumentError(
        "dfs.namenode.kerberos.principal is not set in the cluster's configuration "
        "(hdfs-site.xml): tony cannot tell which principal the NameNode has");
  }
  auto open = [principal, credentials](
                  const FailoverTarget& target) -> absl::StatusOr<std::unique_ptr<RpcConnection>> {
    IpcClientOptions options;
    options.host = target.address.host;
    options.port = target.address.port;
    options.protocol = kClientProtocol;
    options.sasl_mechanisms = KerberosSasl(credentials, principal, target.address.host);
    absl::StatusOr<std::unique_ptr<IpcClient>> client = IpcClient::Connect(std::move(options));
    if (!client.ok()) return client.status();
    return AsRpcConnection(*std::move(client));
  };
  return std::make_unique<FailoverConnection>(
      "NameNode", namenodes.RpcTargets(), std::move(open),
      // One NameNode's answer is the caller's at once, as before HA.
      namenodes.ha ? NameNodeFailoverPolicy(conf, namenodes.namenodes.size())
                   : FailoverPolicy{.rounds = 1});
}

// Where a call went, for messages: the NameNode, or an HA nameservice (whose failover error names
// each NameNode).
std::string Where(const NameService& namenodes, const FailoverConnection& connection) {
  return namenodes.ha ? namenodes.Uri() : connection.peer();
}

}  // namespace

absl::StatusOr<Token> GetHdfsDelegationToken(
    const HadoopConf& conf, const NameService& namenodes,
    const std::shared_ptr<const KerberosCredentials>& credentials, const std::string& renewer) {
  constexpr char kWhat[] = "HDFS delegation token";
  absl::StatusOr<std::unique_ptr<FailoverConnection>> connection =
      ConnectNameNodes(conf, namenodes, credentials);
  if (!connection.ok()) return connection.status();
  proto::GetDelegationTokenRequest request;
  request.set_renewer(renewer);
  proto::GetDelegationTokenResponse response;
  if (absl::Status s = (*connection)->Call("getDelegationToken", request, &response); !s.ok()) {
    return WithContext(s, StrCat(kWhat, " from ", Where(namenodes, **connection)));
  }
  if (!response.has_token() || response.token().identifier().empty()) {
    return absl::FailedPreconditionError(
        StrCat("the NameNode at ", Where(namenodes, **connection),
               " gave no delegation token: it does not run with Kerberos security"));
  }
  Token token{response.token().identifier(), response.token().password(), kHdfsDelegationTokenKind,
              namenodes.TokenService()};
  return token;
}

absl::StatusOr<int64_t> RenewHdfsDelegationToken(
    const HadoopConf& conf, const NameService& namenodes,
    const std::shared_ptr<const KerberosCredentials>& credentials, const Token& token) {
  constexpr char kWhat[] = "renewing an HDFS delegation token";
  absl::StatusOr<std::unique_ptr<FailoverConnection>> connection =
      ConnectNameNodes(conf, namenodes, credentials);
  if (!connection.ok()) return connection.status();
  proto::RenewDelegationTokenRequest request;
  request.mutable_token()->set_identifier(token.identifier);
  request.mutable_token()->set_password(token.password);
  request.mutable_token()->set_kind(token.kind);
  request.mutable_token()->set_service(token.service);
  proto::RenewDelegationTokenResponse response;
  if (absl::Status s = (*connection)->Call("renewDelegationToken", request, &response); !s.ok()) {
    return WithContext(s, StrCat(kWhat, " at ", Where(namenodes, **connection)));
  }
  return static_cast<int64_t>(response.new_expiry_time());
}

}  // namespace tony::hadoop
