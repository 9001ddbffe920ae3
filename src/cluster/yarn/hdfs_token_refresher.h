#pragma once
// Fresh HDFS (and KMS) delegation tokens for a job that outlives them. The tokens the client got
// at submit are renewed by the ResourceManager, but only until their maximum date (the NameNode's
// dfs.namenode.delegation.token.max-lifetime, 7 days by default; the KMS's likewise). With the
// user's keytab the AM logs in again, gets new tokens from every NameNode and every KMS the job
// has tokens for (renewable by the user, and renewed once to learn when they die), and hands them
// on: to the containers it launches from then on, to its own WebHDFS calls, and to the running
// tasks' executors.
//
// When: 75% of the way from now to the earliest death among the current tokens; after a failure
// (a KDC or NameNode down), again after a tenth of the time left, between 1 s and 60 s.
//
// Threads: Step() and the pure functions on any one thread at a time; Start() runs Step() on a
// thread of its own until Stop(). Callbacks run on that thread.

#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "hadoop/common/credentials.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/kms.h"
#include "hadoop/hdfs/nameservice.h"
#include "hadoop/sasl/kerberos.h"

namespace tony::cluster {

struct FreshTokens {
  std::vector<hadoop::Token> tokens;
  int64_t expiry_ms = 0;  // wall clock: the earliest of the tokens' deaths
};

// What gets the AM fresh tokens on a real cluster.
struct TokenRefreshOptions {
  hadoop::KerberosLogin login;  // the user's principal and keytab (the AM's localized copy)
  hadoop::HadoopConf conf;      // the job's client configuration
  std::vector<hadoop::NameService> namenodes;    // fs.defaultFS's first
  std::vector<hadoop::KmsProvider> key_servers;  // hadoop.security.key.provider.path's KMSs
  hadoop::http::Tls tls;  // what an https:// KMS is trusted by (empty: the system's authorities)
};

// Logs in from the keytab, and gets and renews one token from every NameNode, then every KMS:
// the HDFS tokens first, fs.defaultFS's first of all.
absl::StatusOr<FreshTokens> FetchFreshTokens(const TokenRefreshOptions& options);

// When tokens that die at `expiry_ms` should be replaced; both wall clock.
int64_t RefreshDueMs(int64_t now_ms, int64_t expiry_ms);
// When to try again after a failed refresh.
int64_t RetryDueMs(int64_t now_ms, int64_t expiry_ms);
// The earliest maximum date among the tokens' identifiers: how long the ResourceManager keeps
// the client's tokens alive. `now_ms` for a token whose identifier cannot be read (refresh at
// once).
int64_t EarliestMaxDateMs(const std::vector<hadoop::Token>& tokens, int64_t now_ms);

class HdfsTokenRefresher {
 public:
  using Fetch = std::function<absl::StatusOr<FreshTokens>()>;
  using OnFresh = std::function<void(const std::vector<hadoop::Token>&)>;

  // `initial`: the tokens the client got; they live until their maximum date.
  HdfsTokenRefresher(Fetch fetch, OnFresh on_fresh, const std::vector<hadoop::Token>& initial,
                     const Clock* clock);
  ~HdfsTokenRefresher();

  // Refreshes if due (calling on_fresh with the new tokens); returns when the next one is due.
  int64_t Step();
  int64_t due_ms() const { return due_ms_; }

  void Start();
  void Stop();

 private:
  const Fetch fetch_;
  const OnFresh on_fresh_;
  const Clock* const clock_;
  int64_t expiry_ms_;  // of the tokens now in use
  int64_t due_ms_;

  Mutex mu_;
  CondVar wake_;
  bool stopping_ TONY_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tony::cluster
