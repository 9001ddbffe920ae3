#include "cluster/yarn/hdfs_token_refresher.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "common/strings.h"
#include "hadoop/hdfs/namenode_client.h"
#include "spdlog/spdlog.h"

namespace tony::cluster {
namespace {

constexpr int64_t kMinRetryMs = 1000;
constexpr int64_t kMaxRetryMs = 60000;

}  // namespace

absl::StatusOr<FreshTokens> FetchFreshTokens(const TokenRefreshOptions& options) {
  absl::StatusOr<std::shared_ptr<hadoop::KerberosCredentials>> login =
      hadoop::KerberosCredentials::Acquire(options.login);
  if (!login.ok()) return login.status();
  // Renewable by the user itself: the AM renews each once to learn when it dies.
  const std::string renewer = (*login)->ShortName();
  FreshTokens fresh;
  fresh.expiry_ms = std::numeric_limits<int64_t>::max();
  for (const hadoop::NameService& namenode : options.namenodes) {
    absl::StatusOr<hadoop::Token> token =
        hadoop::GetHdfsDelegationToken(options.conf, namenode, *login, renewer);
    if (!token.ok()) return token.status();
    absl::StatusOr<int64_t> expiry =
        hadoop::RenewHdfsDelegationToken(options.conf, namenode, *login, *token);
    if (!expiry.ok()) return expiry.status();
    fresh.expiry_ms = std::min(fresh.expiry_ms, *expiry);
    fresh.tokens.push_back(*std::move(token));
  }
  for (const hadoop::KmsProvider& kms : options.key_servers) {
    absl::StatusOr<hadoop::Token> token =
        hadoop::GetKmsDelegationToken(kms, **login, renewer, &options.tls);
    if (!token.ok()) return token.status();
    absl::StatusOr<int64_t> expiry =
        hadoop::RenewKmsDelegationToken(kms, **login, *token, &options.tls);
    if (!expiry.ok()) return expiry.status();
    fresh.expiry_ms = std::min(fresh.expiry_ms, *expiry);
    fresh.tokens.push_back(*std::move(token));
  }
  if (fresh.tokens.empty()) return absl::FailedPreconditionError("no NameNode to get tokens from");
  return fresh;
}

int64_t RefreshDueMs(int64_t now_ms, int64_t expiry_ms) {
  return now_ms + std::max<int64_t>(0, (expiry_ms - now_ms) * 3 / 4);
}

int64_t RetryDueMs(int64_t now_ms, int64_t expiry_ms) {
  return now_ms + std::clamp<int64_t>((expiry_ms - now_ms) / 10, kMinRetryMs, kMaxRetryMs);
}

int64_t EarliestMaxDateMs(const std::vector<hadoop::Token>& tokens, int64_t now_ms) {
  int64_t earliest = std::numeric_limits<int64_t>::max();
  for (const hadoop::Token& token : tokens) {
    absl::StatusOr<hadoop::DelegationTokenIdentifier> id =
        hadoop::DecodeDelegationTokenIdentifier(token.identifier);
    earliest = std::min(earliest, id.ok() ? id->max_date_ms : now_ms);
  }
  return tokens.empty() ? now_ms : earliest;
}

HdfsTokenRefresher::HdfsTokenRefresher(Fetch fetch, OnFresh on_fresh,
                                       const std::vector<hadoop::Token>& initial,
                                       const Clock* clock)
    : fetch_(std::move(fetch)),
      on_fresh_(std::move(on_fresh)),
      clock_(clock),
      expiry_ms_(EarliestMaxDateMs(initial, clock->WallMs())),
      due_ms_(RefreshDueMs(clock->WallMs(), expiry_ms_)) {}

HdfsTokenRefresher::~HdfsTokenRefresher() { Stop(); }

int64_t HdfsTokenRefresher::Step() {
  const int64_t now = clock_->WallMs();
  if (now < due_ms_) return due_ms_;
  absl::StatusOr<FreshTokens> fresh = fetch_();
  const int64_t after = clock_->WallMs();
  if (!fresh.ok()) {
    due_ms_ = RetryDueMs(after, expiry_ms_);
    spdlog::warn("cannot get fresh delegation tokens (the current ones die in {} s): {}",
                 (expiry_ms_ - after) / 1000, ToStd(fresh.status().message()));
    return due_ms_;
  }
  expiry_ms_ = fresh->expiry_ms;
  due_ms_ = RefreshDueMs(after, expiry_ms_);
  std::string kinds;
  for (const hadoop::Token& token : fresh->tokens) {
    kinds += StrCat(kinds.empty() ? "" : ", ", token.kind, " ", token.service);
  }
  spdlog::info("got {} fresh delegation token(s) ({}), alive for {} s; the next in {} s",
               fresh->tokens.size(), kinds, (expiry_ms_ - after) / 1000, (due_ms_ - after) / 1000);
  on_fresh_(fresh->tokens);
  return due_ms_;
}

void HdfsTokenRefresher::Start() {
  thread_ = std::thread([this] {
    mu_.lock();
    while (!stopping_) {
      mu_.unlock();
      const int64_t due = Step();
      mu_.lock();
      // Wall-clock deadlines: a suspended machine wakes up to a refresh that is due.
      const int64_t wait = std::max<int64_t>(0, due - clock_->WallMs());
      const auto next = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::min<int64_t>(wait, kMaxRetryMs));
      while (!stopping_) {
        if (!wake_.WaitUntil(mu_, next)) break;
      }
    }
    mu_.unlock();
  });
}

void HdfsTokenRefresher::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

}  // namespace tony::cluster
