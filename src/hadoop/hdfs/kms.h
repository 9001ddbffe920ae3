#pragma once
// Hadoop's Key Management Server (KMS), as far as a client that never reads an encrypted file
// itself needs it: where the key providers are, and a KMS delegation token for the job's tasks.
//
// A file in an HDFS encryption zone is read through Hadoop's client (Java, or libhdfs over it),
// which asks the KMS to decrypt the file's key. A task has no Kerberos login, so it needs a KMS
// delegation token (kind kms-dt), as it needs an HDFS one. tony gets one at submit from every KMS
// that hadoop.security.key.provider.path names (SPNEGO, like WebHDFS), with the service Hadoop's
// clients look it up by: the provider URI as configured ("kms://http@kms1;kms2:9600/kms"), and
// renewer the ResourceManager, which renews it while the job runs.
//
// Provider URIs: kms://<http|https>@<host>[;<host>...][:<port>]/<path> (no port: 80 or 443, as
// Hadoop's client takes it). Several hosts are one KMS
// behind a load balancer of Hadoop's client (they share their token secret), so one token serves
// all of them; tony asks them in order until one answers. Other providers (jceks://file, a local
// key store) hand out no tokens and are passed over.
//
// Threads: pure functions, and one HTTP call per host asked.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hadoop/common/credentials.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/http/http_transport.h"
#include "hadoop/sasl/kerberos.h"

namespace tony::hadoop {

inline constexpr char kKmsDelegationTokenKind[] = "kms-dt";

struct KmsProvider {
  std::string uri;  // as configured: the token's service
  bool https = false;
  std::vector<std::string> hosts;
  int port = 0;
  std::string path;  // "/kms"

  // The REST root of one host: "http://kms1:9600/kms/v1".
  std::string RestUrl(size_t host) const;
};

// The secret's alias under which Hadoop's HDFS client looks up the KMS of the file system
// `fs_uri` ("hdfs://ns1" -> "dfs-kms-hdfs://ns1"): it takes that KMS over the NameNode's and its
// own configuration's, so a job's tasks use the KMS whose token they have. "" for a URI without
// a scheme and authority.
std::string KmsMapAlias(std::string_view fs_uri);

// One kms:// provider URI. kInvalidArgument naming what is wrong.
absl::StatusOr<KmsProvider> ParseKmsProvider(std::string_view uri);

// The KMS providers hadoop.security.key.provider.path names (comma-separated; Hadoop 2's
// dfs.encryption.key.provider.uri when that is unset), without the other kinds. An error names
// the key and the URI that cannot be read.
absl::StatusOr<std::vector<KmsProvider>> KmsProviders(const HadoopConf& conf);

// A delegation token from `kms` for `login`, renewable by `renewer` (a short name), with
// service kms.uri. `tls` for https:// providers (nullptr: the system's authorities). The hosts
// are asked in order; one that cannot be reached, answers 5xx or has no ticket passes to the
// next. Errors start "KMS GETDELEGATIONTOKEN <uri>" and name the host and the KMS's answer; when
// no host served at all, the error is NoActiveServerError's (nothing happened anywhere).
absl::StatusOr<Token> GetKmsDelegationToken(const KmsProvider& kms,
                                            const KerberosCredentials& login,
                                            const std::string& renewer, const http::Tls* tls,
                                            int timeout_ms = 30000);

// Renews `token` at `kms` as `login` (its renewer): the token's new expiry, ms since the epoch.
absl::StatusOr<int64_t> RenewKmsDelegationToken(const KmsProvider& kms,
                                                const KerberosCredentials& login,
                                                const Token& token, const http::Tls* tls,
                                                int timeout_ms = 30000);

}  // namespace tony::hadoop
