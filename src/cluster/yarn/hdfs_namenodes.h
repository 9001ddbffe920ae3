#pragma once
// The NameNodes a job's files can be on, each with its WebHDFS client: fs.defaultFS's (tony's own
// files; the caller's client) and any other a resource, venv or --hdfs_classpath entry names,
// directly (hdfs://<authority>/<path>) or, with a ViewFS default file system, through its mount
// table (hdfs:///<path> is <path> of fs.defaultFS). The client stats those files with it at
// submit; the AM with it looks up their sizes and dates for the NodeManagers, which localize them
// with the job's tokens.
//
// Threads: safe; clients are made on first use and live as long as this.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "hadoop/common/credentials.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/nameservice.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/http/http_transport.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::cluster {

struct HdfsNameNodesOptions {
  // The client configuration (nameservices, addresses, the mount table); null: only the default
  // file system is known.
  std::shared_ptr<const hadoop::HadoopConf> conf;
  std::string default_fs;  // where tony's files are ("hdfs://ns1"), served by `default_client`
  // How to authenticate at other NameNodes: `auth.user` and `auth.kerberos` (the client's SPNEGO)
  // as given; without Kerberos, the job's HDFS token for that NameNode (SetTokens) when there is
  // one (the AM).
  hadoop::WebHdfsAuth auth;
  hadoop::http::Tls tls;
};

class HdfsNameNodes {
 public:
  // `default_client` serves default_fs and must outlive this.
  HdfsNameNodes(HdfsNameNodesOptions options, hadoop::WebHdfsClient* default_client);

  // The file an hdfs:// URI of the user names: hdfs:///<path> on fs.defaultFS (with ViewFS,
  // wherever its mount table puts <path>), hdfs://<authority>/<path> on that NameNode. Errors
  // name the URI.
  absl::StatusOr<hadoop::YarnUrl> Resolve(std::string_view uri) const;
  // Whether `url` is on the default file system.
  bool OnDefault(const hadoop::YarnUrl& url) const;
  // The NameNode(s) of `url`'s file system. Errors name the URI.
  absl::StatusOr<hadoop::NameService> NameServiceOf(const hadoop::YarnUrl& url) const;
  // The WebHDFS client of `url`'s NameNode(s). Errors name the URI's file system.
  absl::StatusOr<hadoop::WebHdfsClient*> ClientFor(const hadoop::YarnUrl& url);
  // The job's HDFS tokens (the AM's, and its fresh ones), for the clients made and to come.
  void SetTokens(const std::vector<hadoop::Token>& tokens);

 private:
  const HdfsNameNodesOptions options_;
  hadoop::WebHdfsClient* const default_client_;
  Mutex mu_;
  std::vector<hadoop::Token> tokens_ TONY_GUARDED_BY(mu_);
  // By NameService::TokenService(), with the service each client's token must have.
  std::map<std::string, std::unique_ptr<hadoop::WebHdfsClient>> clients_ TONY_GUARDED_BY(mu_);
};

}  // namespace tony::cluster
