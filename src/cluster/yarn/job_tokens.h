#pragma once
// The delegation tokens of a job on a Kerberized cluster, decided in one place for the client
// (which gets them at submit) and the AM (which gets fresh ones from a keytab):
//
// - HDFS: one token of each NameNode the job may touch: the file system of tony's own files
//   first, then, with a ViewFS fs.defaultFS, every hdfs:// file system its mount table names, then
//   tony.other.namenodes; each NameNode once.
// - KMS: one token of each KMS of hadoop.security.key.provider.path (kms.h), and, with one KMS,
//   the secret that maps each of those file systems to it (KmsMapAlias), which Hadoop's client
//   takes over what the NameNode names.
//
// Every token's renewer is given (the ResourceManager's principal at submit, the user's own in
// the AM).
//
// Threads: an immutable value; AddTo calls the NameNodes and KMSs.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hadoop/common/credentials.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/kms.h"
#include "hadoop/hdfs/nameservice.h"
#include "hadoop/http/http_transport.h"
#include "hadoop/sasl/kerberos.h"

namespace tony::cluster {

class JobTokens {
 public:
  // The job's file systems and key servers in `conf`, with `home_fs` (hdfs://..., where tony's
  // files are) and `other_namenodes` (hdfs://host:port URIs). Errors name fs.defaultFS, the
  // mount table, tony.other.namenodes or the KMS key.
  static absl::StatusOr<JobTokens> Resolve(const hadoop::HadoopConf& conf,
                                           const std::string& home_fs,
                                           const std::vector<std::string>& other_namenodes);

  // The NameNodes, home_fs's first; and the file system each was named by.
  const std::vector<hadoop::NameService>& namenodes() const { return namenodes_; }
  const std::vector<std::string>& file_systems() const { return file_systems_; }
  const std::vector<hadoop::KmsProvider>& key_servers() const { return key_servers_; }
  // Whether the job gets a token of `namenode` (compared by token service).
  bool Covers(const hadoop::NameService& namenode) const;

  // Gets every token as `login`, renewable by `renewer`, into `credentials` (aliased by service,
  // as Hadoop's clients do), and the KMS mapping secrets. `tls` for https:// key servers.
  absl::Status AddTo(const hadoop::HadoopConf& conf,
                     const std::shared_ptr<const hadoop::KerberosCredentials>& login,
                     const std::string& renewer, const hadoop::http::Tls* tls,
                     hadoop::Credentials& credentials) const;

 private:
  std::vector<std::string> file_systems_;
  std::vector<hadoop::NameService> namenodes_;
  std::vector<hadoop::KmsProvider> key_servers_;
};

}  // namespace tony::cluster
