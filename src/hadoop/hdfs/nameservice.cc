#include "hadoop/hdfs/nameservice.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include "common/strings.h"
#include "hadoop/ipc/failover.h"

namespace tony::hadoop {
namespace {

constexpr int kDefaultRpcPort = 8020;
constexpr char kHaTokenPrefix[] = "ha-hdfs:";

std::vector<std::string> ListOf(const HadoopConf& conf, const std::string& key) {
  const std::string text = conf.Get(key);  // Split's views point here
  std::vector<std::string> out;
  for (std::string_view each : Split(text, ',')) {
    each = StripWhitespace(each);
    if (!each.empty()) out.emplace_back(each);
  }
  return out;
}

bool Contains(const std::vector<std::string>& list, std::string_view item) {
  for (const std::string& each : list) {
    if (each == item) return true;
  }
  return false;
}

absl::StatusOr<HostPort> AddressOf(const HadoopConf& conf, const std::string& key) {
  absl::StatusOr<HostPort> address = ParseHostPort(conf.Get(key));
  if (!address.ok()) {
    return absl::InvalidArgumentError(StrCat(key, ": ", ToStd(address.status().message())));
  }
  return address;
}

bool HttpsOnly(const HadoopConf& conf) {
  return ToUpper(StripWhitespace(conf.Get("dfs.http.policy"))) == "HTTPS_ONLY";
}

// The key of the NameNodes' WebHDFS addresses: with dfs.http.policy HTTPS_ONLY the HTTPS one.
// (HTTP_AND_HTTPS serves both; tony then speaks HTTP, as Hadoop's webhdfs:// clients do.)
std::string WebKey(const HadoopConf& conf) {
  return HttpsOnly(conf) ? "dfs.namenode.https-address" : "dfs.namenode.http-address";
}

// The WebHDFS address in `key`, else (unset) the NameNode's host with the generic key's port; a
// wildcard host is the NameNode's host.
absl::StatusOr<HostPort> HttpAddressOf(const HadoopConf& conf, const std::string& key,
                                       const HostPort& rpc) {
  const bool set = !conf.Get(key).empty();
  absl::StatusOr<HostPort> http = AddressOf(conf, set ? key : WebKey(conf));
  if (!http.ok()) return http.status();
  if (!set || http->host == "0.0.0.0") http->host = rpc.host;
  return http;
}

// Whether `rpc` is the cluster's own single NameNode: fs.defaultFS's, or
// dfs.namenode.rpc-address's (whose host may be spelled otherwise).
bool IsDefaultNameNode(const HadoopConf& conf, const HostPort& rpc) {
  for (const std::string& authority : {std::string(conf.Get("dfs.namenode.rpc-address")), [&conf] {
                                         std::string fs = conf.DefaultFs();
                                         if (!fs.starts_with("hdfs://")) return std::string();
                                         fs = fs.substr(7);
                                         return fs.substr(0, fs.find('/'));
                                       }()}) {
    if (authority.empty()) continue;
    absl::StatusOr<HostPort> known =
        authority.find(':') == std::string::npos
            ? absl::StatusOr<HostPort>(HostPort{authority, kDefaultRpcPort})
            : ParseHostPort(authority);
    if (known.ok() && known->host == rpc.host && known->port == rpc.port) return true;
  }
  return false;
}

absl::StatusOr<NameService> ResolveLogical(const HadoopConf& conf, const std::string& ns) {
  NameService service;
  service.authority = ns;
  service.https = HttpsOnly(conf);
  const std::vector<std::string> ids = ListOf(conf, StrCat("dfs.ha.namenodes.", ns));
  if (ids.empty()) {
    // A federated nameservice without HA: one NameNode under the nameservice's name.
    const std::string rpc_key = StrCat("dfs.namenode.rpc-address.", ns);
    if (conf.Get(rpc_key).empty()) {
      return absl::InvalidArgumentError(StrCat(
          "hdfs://", ns, " is a nameservice (dfs.nameservices), but neither dfs.ha.namenodes.", ns,
          " nor ", rpc_key, " is set"));
    }
    absl::StatusOr<HostPort> rpc = AddressOf(conf, rpc_key);
    if (!rpc.ok()) return rpc.status();
    absl::StatusOr<HostPort> http = HttpAddressOf(conf, StrCat(WebKey(conf), ".", ns), *rpc);
    if (!http.ok()) return http.status();
    service.namenodes.push_back({"", *std::move(rpc), *std::move(http)});
    return service;
  }
  service.ha = true;
  for (const std::string& id : ids) {
    const std::string rpc_key = StrCat("dfs.namenode.rpc-address.", ns, ".", id);
    if (conf.Get(rpc_key).empty()) {
      return absl::InvalidArgumentError(StrCat(
          "NameNode HA: ", rpc_key, " is not set, but dfs.ha.namenodes.", ns, " names ", id));
    }
    absl::StatusOr<HostPort> rpc = AddressOf(conf, rpc_key);
    if (!rpc.ok()) return rpc.status();
    absl::StatusOr<HostPort> http =
        HttpAddressOf(conf, StrCat(WebKey(conf), ".", ns, ".", id), *rpc);
    if (!http.ok()) return http.status();
    service.namenodes.push_back({id, *std::move(rpc), *std::move(http)});
  }
  return service;
}

}  // namespace

std::string NameService::TokenService() const {
  if (ha) return StrCat(kHaTokenPrefix, authority);
  return namenodes.empty() ? authority : IpTokenService(namenodes.front().rpc);
}

std::vector<ServerAddress> NameService::RpcTargets() const {
  std::vector<ServerAddress> out;
  for (const NameNodeAddress& namenode : namenodes) out.push_back({namenode.id, namenode.rpc});
  return out;
}

std::string NameService::WebHdfsServers() const {
  return StrCat(https ? "https://" : "", FormatServerList(HttpTargets()));
}

std::vector<ServerAddress> NameService::HttpTargets() const {
  std::vector<ServerAddress> out;
  for (const NameNodeAddress& namenode : namenodes) out.push_back({namenode.id, namenode.http});
  return out;
}

absl::StatusOr<NameService> ResolveNameService(const HadoopConf& conf, std::string_view uri) {
  std::string_view rest = uri;
  if (!rest.starts_with("hdfs://")) {
    return absl::InvalidArgumentError(StrCat("'", uri, "' is not an hdfs:// URI"));
  }
  rest.remove_prefix(7);
  const std::string authority(rest.substr(0, rest.find('/')));
  if (authority.empty()) return absl::InvalidArgumentError(StrCat("'", uri, "' names no NameNode"));
  if (authority.find(':') == std::string::npos) {
    if (Contains(ListOf(conf, "dfs.nameservices"), authority) ||
        Contains(ListOf(conf, "dfs.internal.nameservices"), authority) ||
        !conf.Get(StrCat("dfs.client.failover.proxy.provider.", authority)).empty()) {
      return ResolveLogical(conf, authority);
    }
  }
  absl::StatusOr<HostPort> rpc =
      authority.find(':') == std::string::npos
          ? absl::StatusOr<HostPort>(HostPort{authority, kDefaultRpcPort})
          : ParseHostPort(authority);
  if (!rpc.ok()) {
    return absl::InvalidArgumentError(StrCat("'", uri, "': ", ToStd(rpc.status().message())));
  }
  // A NameNode of a federated cluster, named by its RPC address (as ViewFS mount tables name
  // them): its nameservice's own WebHDFS address.
  std::string web_key = WebKey(conf);
  bool own_key = false;
  for (const std::string& ns : ListOf(conf, "dfs.nameservices")) {
    absl::StatusOr<HostPort> own = ParseHostPort(conf.Get(StrCat("dfs.namenode.rpc-address.", ns)));
    if (own.ok() && own->host == rpc->host && own->port == rpc->port &&
        !conf.Get(StrCat(web_key, ".", ns)).empty()) {
      web_key = StrCat(web_key, ".", ns);
      own_key = true;
      break;
    }
  }
  absl::StatusOr<HostPort> http = AddressOf(conf, web_key);
  if (!http.ok()) return http.status();
  // The generic key is the default NameNode's. Another NameNode (tony.other.namenodes, a
  // resource's hdfs://host:port) serves WebHDFS on its own host, at that key's port.
  if (!own_key && !IsDefaultNameNode(conf, *rpc)) http->host = rpc->host;
  // A server-side wildcard (the NameNode listens on every address): clients reach it at its host.
  // Nothing binds here.
  if (http->host == "0.0.0.0") http->host = rpc->host;
  NameService service;
  service.authority = rpc->ToString();
  service.https = HttpsOnly(conf);
  service.namenodes.push_back({"", *std::move(rpc), *std::move(http)});
  return service;
}

absl::StatusOr<NameService> DefaultNameService(const HadoopConf& conf) {
  absl::StatusOr<NameService> service = ResolveNameService(conf, conf.DefaultFs());
  if (!service.ok()) {
    return absl::Status(service.status().code(), StrCat("fs.defaultFS (", conf.DefaultFs(),
                                                        "): ", ToStd(service.status().message())));
  }
  return service;
}

std::string IpTokenService(const HostPort& address) {
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

}  // namespace tony::hadoop
