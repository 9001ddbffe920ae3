#pragma once
// HDFS delegation tokens from a NameNode, over Hadoop RPC (ClientProtocol) authenticated with
// Kerberos: what a client puts into a job's credentials so that its containers read HDFS with the
// token alone, and what the AM renews them with.
//
// Threads: a plain function; each call opens its own connection.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "hadoop/credentials.h"
#include "hadoop/hadoop_conf.h"
#include "hadoop/kerberos.h"

namespace tony::hadoop {

inline constexpr char kHdfsDelegationTokenKind[] = "HDFS_DELEGATION_TOKEN";

// Asks the NameNode at `namenode` (its RPC address) for a delegation token that `renewer` may
// renew. The NameNode's principal is the configuration's dfs.namenode.kerberos.principal. The
// token's service is "<ip>:<port>", as Hadoop's clients look it up (hadoop.security.token.service
// .use_ip, on by default).
[[nodiscard]] absl::StatusOr<Token> GetHdfsDelegationToken(
    const HadoopConf& conf, const HostPort& namenode,
    std::shared_ptr<const KerberosCredentials> credentials, const std::string& renewer);

// Extends the token's life; the caller must be its renewer. Returns the new expiry time, in ms
// since the epoch (never past the token's maximum date).
[[nodiscard]] absl::StatusOr<int64_t> RenewHdfsDelegationToken(
    const HadoopConf& conf, const HostPort& namenode,
    std::shared_ptr<const KerberosCredentials> credentials, const Token& token);

// The NameNode RPC address of an "hdfs://host[:port][/...]" URI (port 8020 when absent).
[[nodiscard]] absl::StatusOr<HostPort> NameNodeOfUri(const std::string& uri);

}  // namespace tony::hadoop
