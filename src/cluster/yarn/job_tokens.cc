#include "cluster/yarn/job_tokens.h"

#include <algorithm>

#include "common/strings.h"
#include "hadoop/hdfs/namenode_client.h"
#include "hadoop/hdfs/viewfs.h"

namespace tony::cluster {

absl::StatusOr<JobTokens> JobTokens::Resolve(const hadoop::HadoopConf& conf,
                                             const std::string& home_fs,
                                             const std::vector<std::string>& other_namenodes) {
  JobTokens tokens;
  const auto add = [&tokens, &conf](const std::string& fs,
                                    const std::string& what) -> absl::Status {
    absl::StatusOr<hadoop::NameService> namenode = hadoop::ResolveNameService(conf, fs);
    if (!namenode.ok()) {
      return absl::InvalidArgumentError(StrCat(what, ": ", ToStd(namenode.status().message())));
    }
    if (!tokens.Covers(*namenode)) {
      tokens.file_systems_.push_back(fs);
      tokens.namenodes_.push_back(*std::move(namenode));
    }
    return absl::OkStatus();
  };
  const std::string default_what = StrCat("fs.defaultFS (", conf.DefaultFs(), ")");
  if (absl::Status s = add(home_fs, default_what); !s.ok()) return s;
  if (hadoop::IsViewFs(conf.DefaultFs())) {
    // The job's tasks may touch any file system the mount table names.
    absl::StatusOr<hadoop::MountTable> table = hadoop::LoadMountTable(conf, conf.DefaultFs());
    if (!table.ok()) {
      return absl::InvalidArgumentError(
          StrCat(default_what, ": ", ToStd(table.status().message())));
    }
    for (const std::string& target : table->TargetFileSystems()) {
      if (!target.starts_with("hdfs://")) continue;
      if (absl::Status s = add(target, default_what); !s.ok()) return s;
    }
  }
  for (const std::string& uri : other_namenodes) {
    if (absl::Status s = add(uri, "tony.other.namenodes"); !s.ok()) return s;
  }
  absl::StatusOr<std::vector<hadoop::KmsProvider>> key_servers = hadoop::KmsProviders(conf);
  if (!key_servers.ok()) return key_servers.status();
  tokens.key_servers_ = *std::move(key_servers);
  return tokens;
}

bool JobTokens::Covers(const hadoop::NameService& namenode) const {
  const std::string service = namenode.TokenService();
  return std::any_of(
      namenodes_.begin(), namenodes_.end(),
      [&service](const hadoop::NameService& n) { return n.TokenService() == service; });
}

absl::Status JobTokens::AddTo(const hadoop::HadoopConf& conf,
                              const std::shared_ptr<const hadoop::KerberosCredentials>& login,
                              const std::string& renewer, const hadoop::http::Tls* tls,
                              hadoop::Credentials& credentials) const {
  for (const hadoop::NameService& namenode : namenodes_) {
    absl::StatusOr<hadoop::Token> token =
        hadoop::GetHdfsDelegationToken(conf, namenode, login, renewer);
    if (!token.ok()) return token.status();
    std::string alias = token->service;  // copied first: the token is moved
    credentials.AddToken(alias, *std::move(token));
  }
  for (const hadoop::KmsProvider& kms : key_servers_) {
    absl::StatusOr<hadoop::Token> token = hadoop::GetKmsDelegationToken(kms, *login, renewer, tls);
    if (!token.ok()) return token.status();
    std::string alias = token->service;
    credentials.AddToken(alias, *std::move(token));
  }
  if (key_servers_.size() == 1) {
    // Each file system's KMS is the one the token is of, whatever its NameNode names (Hadoop's
    // client takes this mapping first, as DistributedFileSystem.addDelegationTokens leaves it).
    for (const std::string& fs : file_systems_) {
      const std::string alias = hadoop::KmsMapAlias(fs);
      if (!alias.empty()) credentials.AddSecret(alias, key_servers_.front().uri);
    }
  }
  return absl::OkStatus();
}

}  // namespace tony::cluster
