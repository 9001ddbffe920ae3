#pragma once
// The NameNodes behind an hdfs:// URI, found in the cluster's configuration as Hadoop's clients
// find them:
// - hdfs://host[:port]: that one NameNode (RPC port 8020 when absent). Its WebHDFS address is
//   dfs.namenode.http-address, with a wildcard host (0.0.0.0) read as the NameNode's host; in a
//   federated cluster, the http-address.<ns> of the nameservice whose rpc-address.<ns> it is.
//   With dfs.http.policy HTTPS_ONLY, every WebHDFS address below is the https-address instead
//   (dfs.namenode.https-address...), and WebHDFS is spoken over TLS (swebhdfs).
// - hdfs://<ns>, where <ns> is named by dfs.nameservices (or dfs.internal.nameservices, or has
//   a dfs.client.failover.proxy.provider.<ns>): with HA, the NameNodes that dfs.ha.namenodes.<ns>
//   names, each at dfs.namenode.rpc-address.<ns>.<id> and dfs.namenode.http-address.<ns>.<id>
//   (else the RPC host with dfs.namenode.http-address's port); without HA (federation), the one
//   NameNode at dfs.namenode.rpc-address.<ns> and dfs.namenode.http-address.<ns>.
// Errors name the key that is missing or wrong.
//
// Threads: pure functions of the configuration, except that TokenService resolves host names.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hadoop/common/hadoop_conf.h"

namespace tony::hadoop {

struct NameNodeAddress {
  std::string id;  // its id within an HA nameservice (nn1); empty otherwise
  HostPort rpc;    // ClientProtocol
  HostPort http;   // WebHDFS (its HTTPS address when the nameservice's `https`)
};

struct NameService {
  // What the URI names: "ns1", or "host:port" (the port filled in).
  std::string authority;
  // An HA nameservice: clients fail over among its NameNodes, and its tokens are logical.
  bool ha = false;
  // dfs.http.policy is HTTPS_ONLY: WebHDFS over TLS, at the https-addresses.
  bool https = false;
  std::vector<NameNodeAddress> namenodes;

  // The service of its HDFS delegation tokens, as Hadoop's clients look them up: "ha-hdfs:<ns>"
  // for an HA nameservice (the token is good at each of its NameNodes), else "<ip>:<port>" of the
  // NameNode's RPC address.
  std::string TokenService() const;
  // Its NameNodes' RPC and WebHDFS addresses, each with its id (FailoverConnection's targets;
  // FormatServerList of HttpTargets is what WebHdfsClient takes).
  std::vector<ServerAddress> RpcTargets() const;
  std::vector<ServerAddress> HttpTargets() const;
  // What WebHdfsClient takes: FormatServerList of HttpTargets, behind "https://" when `https`.
  std::string WebHdfsServers() const;
  // "hdfs://ns1", for messages.
  std::string Uri() const { return "hdfs://" + authority; }
};

// The NameNodes of an "hdfs://authority[/path]" URI.
[[nodiscard]] absl::StatusOr<NameService> ResolveNameService(const HadoopConf& conf,
                                                             std::string_view uri);

// The NameNodes of fs.defaultFS; errors start "fs.defaultFS (<value>): ".
[[nodiscard]] absl::StatusOr<NameService> DefaultNameService(const HadoopConf& conf);

// "<ip>:<port>" of the host's first address ("host:port" when it does not resolve): the service
// of a token of one server, as Hadoop's clients name it (hadoop.security.token.service.use_ip).
std::string IpTokenService(const HostPort& address);

}  // namespace tony::hadoop
