#include "hadoop/namenode_client.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include "common/strings.h"
#include "hadoop/gssapi_mechanism.h"
#include "hadoop/hdfs.pb.h"
#include "hadoop/ipc_client.h"

namespace tony::hadoop {
namespace {

constexpr char kClientProtocol[] = "org.apache.hadoop.hdfs.protocol.ClientProtocol";
constexpr int kDefaultNameNodePort = 8020;

// "<ip>:<port>" of the host's first address; "host:port" when it does not resolve.
std::string TokenService(const HostPort& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string host = address.host;
  if (getaddrinfo(address.host.c_str(), nullptr, &hints, &found) == 0 && found != nullptr) {
    char ip[INET6_ADDRSTRLEN] = {0};
    if (getnameinfo(found->ai_addr, found->ai_addrlen, ip, sizeof(ip), nullptr, 0,
                    NI_NUMERICHOST) == 0) {
      host = ip;
    }
    freeaddrinfo(found);
  }
  return StrCat(host, ":", address.port);
}

}  // namespace

absl::StatusOr<HostPort> NameNodeOfUri(const std::string& uri) {
  std::string_view rest = uri;
  if (!rest.starts_with("hdfs://")) {
    return absl::InvalidArgumentError(StrCat("'", uri, "' is not an hdfs:// URI"));
  }
  rest.remove_prefix(7);
  rest = rest.substr(0, rest.find('/'));
  if (rest.empty()) return absl::InvalidArgumentError(StrCat("'", uri, "' names no NameNode"));
  if (rest.find(':') == std::string_view::npos) {
    return HostPort{std::string(rest), kDefaultNameNodePort};
  }
  return ParseHostPort(std::string(rest));
}

namespace {

// A Kerberos-authenticated ClientProtocol connection to the NameNode; errors start with `what`.
absl::StatusOr<std::unique_ptr<IpcClient>> ConnectNameNode(
    const HadoopConf& conf, const HostPort& namenode,
    std::shared_ptr<const KerberosCredentials> credentials, const std::string& what) {
  const std::string principal = conf.Get("dfs.namenode.kerberos.principal");
  if (principal.empty()) {
    return absl::InvalidArgumentError(
        "dfs.namenode.kerberos.principal is not set in the cluster's configuration "
        "(hdfs-site.xml): tony cannot tell which principal the NameNode has");
  }
  IpcClientOptions options;
  options.host = namenode.host;
  options.port = namenode.port;
  options.protocol = kClientProtocol;
  options.sasl_mechanisms = KerberosSasl(std::move(credentials), principal, namenode.host);
  absl::StatusOr<std::unique_ptr<IpcClient>> client = IpcClient::Connect(std::move(options));
  if (!client.ok()) {
    return absl::Status(client.status().code(), StrCat(what, " from ", namenode.ToString(), ": ",
                                                       ToStd(client.status().message())));
  }
  return client;
}

}  // namespace

absl::StatusOr<Token> GetHdfsDelegationToken(const HadoopConf& conf, const HostPort& namenode,
                                             std::shared_ptr<const KerberosCredentials> credentials,
                                             const std::string& renewer) {
  constexpr char kWhat[] = "HDFS delegation token";
  absl::StatusOr<std::unique_ptr<IpcClient>> client =
      ConnectNameNode(conf, namenode, std::move(credentials), kWhat);
  if (!client.ok()) return client.status();
  proto::GetDelegationTokenRequest request;
  request.set_renewer(renewer);
  proto::GetDelegationTokenResponse response;
  if (absl::Status s = (*client)->Call("getDelegationToken", request, &response); !s.ok()) {
    return absl::Status(s.code(),
                        StrCat(kWhat, " from ", namenode.ToString(), ": ", ToStd(s.message())));
  }
  if (!response.has_token() || response.token().identifier().empty()) {
    return absl::FailedPreconditionError(
        StrCat("the NameNode at ", namenode.ToString(),
               " gave no delegation token: it does not run with Kerberos security"));
  }
  Token token{response.token().identifier(), response.token().password(), kHdfsDelegationTokenKind,
              TokenService(namenode)};
  return token;
}

absl::StatusOr<int64_t> RenewHdfsDelegationToken(
    const HadoopConf& conf, const HostPort& namenode,
    std::shared_ptr<const KerberosCredentials> credentials, const Token& token) {
  constexpr char kWhat[] = "renewing an HDFS delegation token";
  absl::StatusOr<std::unique_ptr<IpcClient>> client =
      ConnectNameNode(conf, namenode, std::move(credentials), kWhat);
  if (!client.ok()) return client.status();
  proto::RenewDelegationTokenRequest request;
  request.mutable_token()->set_identifier(token.identifier);
  request.mutable_token()->set_password(token.password);
  request.mutable_token()->set_kind(token.kind);
  request.mutable_token()->set_service(token.service);
  proto::RenewDelegationTokenResponse response;
  if (absl::Status s = (*client)->Call("renewDelegationToken", request, &response); !s.ok()) {
    return absl::Status(s.code(),
                        StrCat(kWhat, " at ", namenode.ToString(), ": ", ToStd(s.message())));
  }
  return static_cast<int64_t>(response.new_expiry_time());
}

}  // namespace tony::hadoop
