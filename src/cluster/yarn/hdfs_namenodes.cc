#include "cluster/yarn/hdfs_namenodes.h"

#include "common/strings.h"
#include "hadoop/hdfs/viewfs.h"
#include "hadoop/ipc/failover.h"

namespace tony::cluster {
namespace {

// "hdfs://host:port" of a URL (":port" only when it has one).
std::string FileSystemOf(const hadoop::YarnUrl& url) {
  return StrCat(url.scheme, "://", url.host, url.port >= 0 ? StrCat(":", url.port) : "");
}

}  // namespace

HdfsNameNodes::HdfsNameNodes(HdfsNameNodesOptions options, hadoop::WebHdfsClient* default_client)
    : options_(std::move(options)), default_client_(default_client) {}

absl::StatusOr<hadoop::YarnUrl> HdfsNameNodes::Resolve(std::string_view uri) const {
  absl::StatusOr<hadoop::YarnUrl> given = hadoop::YarnUrl::Parse(uri);
  if (!given.ok()) return given.status();
  if (given->scheme != "hdfs") {
    return absl::InvalidArgumentError(StrCat(uri, ": only hdfs:// paths can be localized"));
  }
  if (given->file.empty() || given->file.front() != '/') {
    return absl::InvalidArgumentError(StrCat(uri, ": not an absolute path"));
  }
  if (!given->host.empty()) return given;  // that NameNode's
  if (options_.conf != nullptr && hadoop::IsViewFs(options_.conf->DefaultFs())) {
    // hdfs:///<path> with a ViewFS default file system: <path> through the mount table.
    absl::StatusOr<std::string> target =
        hadoop::ResolveDefaultFsPath(*options_.conf, hadoop::NormalizePath(given->file));
    if (!target.ok())
      return absl::InvalidArgumentError(StrCat(uri, ": ", ToStd(target.status().message())));
    absl::StatusOr<hadoop::YarnUrl> url = hadoop::YarnUrl::Parse(*target);
    if (!url.ok() || url->scheme != "hdfs" || url->host.empty()) {
      return absl::InvalidArgumentError(
          StrCat(uri, ": through the ViewFS mount table of fs.defaultFS (",
                 options_.conf->DefaultFs(), ") this is ", *target, ", not on HDFS"));
    }
    return url;
  }
  return hadoop::ResolveOnDefaultFs(uri, options_.default_fs);
}

bool HdfsNameNodes::OnDefault(const hadoop::YarnUrl& url) const {
  return hadoop::ResolveOnDefaultFs(url.ToString(), options_.default_fs).ok();
}

absl::StatusOr<hadoop::NameService> HdfsNameNodes::NameServiceOf(const hadoop::YarnUrl& url) const {
  if (options_.conf == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(url.ToString(), ": not on the cluster's file system ", options_.default_fs));
  }
  absl::StatusOr<hadoop::NameService> namenode =
      hadoop::ResolveNameService(*options_.conf, FileSystemOf(url));
  if (!namenode.ok()) {
    return absl::Status(namenode.status().code(),
                        StrCat(url.ToString(), ": ", ToStd(namenode.status().message())));
  }
  return namenode;
}

absl::StatusOr<hadoop::WebHdfsClient*> HdfsNameNodes::ClientFor(const hadoop::YarnUrl& url) {
  if (OnDefault(url)) return default_client_;
  absl::StatusOr<hadoop::NameService> namenode = NameServiceOf(url);
  if (!namenode.ok()) return namenode.status();
  const std::string service = namenode->TokenService();
  MutexLock lock(mu_);
  auto it = clients_.find(service);
  if (it == clients_.end()) {
    hadoop::WebHdfsAuth auth = options_.auth;
    if (auth.kerberos == nullptr) {
      for (const hadoop::Token& token : tokens_) {
        if (token.service == service) auth.delegation = token;
      }
    }
    auto client = std::make_unique<hadoop::WebHdfsClient>(namenode->WebHdfsServers(), auth);
    client->SetFailoverPolicy(
        hadoop::NameNodeFailoverPolicy(*options_.conf, namenode->namenodes.size()));
    client->SetTls(options_.tls);
    it = clients_.emplace(service, std::move(client)).first;
  }
  return it->second.get();
}

void HdfsNameNodes::SetTokens(const std::vector<hadoop::Token>& tokens) {
  MutexLock lock(mu_);
  tokens_ = tokens;
  if (options_.auth.kerberos != nullptr) return;
  for (auto& [service, client] : clients_) {
    for (const hadoop::Token& token : tokens) {
      if (token.service == service) client->SetDelegationToken(token);
    }
  }
}

}  // namespace tony::cluster
