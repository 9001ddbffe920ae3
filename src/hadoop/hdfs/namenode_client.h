#pragma once
// HDFS delegation tokens from a file system's NameNodes, over Hadoop RPC (ClientProtocol)
// authenticated with Kerberos: what a client puts into a job's credentials so that its containers
// read HDFS with the token alone, and what the AM renews them with. With NameNode HA the calls go
// to the active NameNode, failing over as FailoverConnection does (failover.h, with the
// dfs.client.failover.* policy).
//
// Threads: plain functions; each call opens its own connections.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "hadoop/common/credentials.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/nameservice.h"
#include "hadoop/ipc/failover.h"
#include "hadoop/sasl/kerberos.h"

namespace tony::hadoop {

inline constexpr char kHdfsDelegationTokenKind[] = "HDFS_DELEGATION_TOKEN";

// Asks the file system's (active) NameNode for a delegation token that `renewer` may renew. The
// NameNodes' principal is the configuration's dfs.namenode.kerberos.principal (its _HOST each
// NameNode's host). The token's service is NameService::TokenService().
[[nodiscard]] absl::StatusOr<Token> GetHdfsDelegationToken(
    const HadoopConf& conf, const NameService& namenodes,
    const std::shared_ptr<const KerberosCredentials>& credentials, const std::string& renewer);

// Extends the token's life; the caller must be its renewer. Returns the new expiry time, in ms
// since the epoch (never past the token's maximum date).
[[nodiscard]] absl::StatusOr<int64_t> RenewHdfsDelegationToken(
    const HadoopConf& conf, const NameService& namenodes,
    const std::shared_ptr<const KerberosCredentials>& credentials, const Token& token);

}  // namespace tony::hadoop
