#pragma once
// PyTorch's c10d store, served by the AM itself: the key-value store through which the torchrun
// agents of an elastic job (`--rdzv_backend=c10d`) meet, and which in torchrun's own setup lives
// in one of the workers, so that losing that worker loses the rendezvous. Served by the AM, any
// worker may die; the store lives as long as the job's AM.
//
// Protocol (TCPStore of torch 1.13, torch/csrc/distributed/c10d/TCPStore.cpp, read for the
// facts): a client sends queries on one connection and reads the answers in order. A query is
// one byte of its type and its arguments; a string or a value is a 64-bit length and its bytes;
// integers are 64-bit; all in the machine's byte order (torch's own, little-endian here).
//   SET         key value          no answer; wakes who waits for key
//   COMPARE_SET key expected new   the value now stored: new if key held expected (or was absent
//                                  and expected is empty); else what it holds (expected if absent)
//   GET         key                the value; an absent key ends the connection (torch's too)
//   ADD         key int64          the sum as int64; the value is kept as its decimal text
//   CHECK       n key...           one byte: 0 all present, 1 not
//   WAIT        n key...           one byte 0 once all are present (at once or later)
//   GETNUMKEYS                     int64
//   DELETE_KEY  key                int64: how many were removed (0 or 1)
// WATCH_KEY (callbacks on changes, which torchrun does not use) and any other type end the
// connection. The values a waiter waits for may also arrive through ADD or COMPARE_SET.
//
// Who may use it: torch's client carries no credential, so, as for Horovod's rendezvous, only the
// addresses of the hosts named with AllowHost (the job's containers) may connect; any other
// peer's connection is closed before anything of it is read. What one connection may make the AM
// hold is bounded: a key is at most 64 KiB, a value at most 1 MiB, unread input at most one
// largest query (past it the connection is closed); a connection with a WAIT parked, or with
// 4 MiB of answers its client has not read, is not read on until that changes (torch's client
// never sends while it waits); all keys and values together are at most 64 MiB; and at most
// max_connections connections are open (the AM's: 4 per task and 64). A query past a limit ends
// its own connection.
//
// Threads: one thread of its own serves every connection; it locks the store's map only while it
// answers queries, never while it accepts or resolves a peer's host, so that AllowHost and Clear
// (any thread) never wait on the network. Start and Stop from the owner's thread, not
// concurrently with each other.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "am/gloo_rendezvous.h"
#include "am/peer_allow_list.h"
#include "common/mutex.h"

namespace tony::am {

class C10dStore final : public RendezvousStore {
 public:
  static constexpr size_t kMaxKeyBytes = 64 << 10;
  static constexpr size_t kMaxValueBytes = 1 << 20;
  static constexpr size_t kMaxTotalBytes = 64 << 20;
  // Answers a connection may have unread before its further queries wait.
  static constexpr size_t kMaxUnreadAnswerBytes = 4 << 20;

  explicit C10dStore(size_t max_connections = 1024) : max_connections_(max_connections) {}
  ~C10dStore() override;
  C10dStore(const C10dStore&) = delete;
  C10dStore& operator=(const C10dStore&) = delete;

  [[nodiscard]] absl::StatusOr<int> Start(const std::string& bind_host) override;
  void Stop() override;
  void AllowHost(const std::string& host) override { peers_.Allow(host); }
  // Horovod's scopes: nothing here.
  void SetScopeSizes(std::map<std::string, int>) override {}
  // Forgets every key; waiters go on waiting for theirs.
  void Clear() override;

  // How many keys it holds (for tests).
  size_t size() const;

  struct Connection;  // one client's connection (private to the implementation)

 private:
  void Serve();
  // Answers every complete query in `conn`'s input; false when the connection must end.
  bool Process(Connection& conn) TONY_REQUIRES(mu_);
  // Stores `value` under `key` and answers who waited for it; false past the total limit.
  bool Put(const std::string& key, std::string value) TONY_REQUIRES(mu_);

  const size_t max_connections_;
  PeerAllowList peers_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd: Stop() ends Serve()
  std::thread thread_;

  mutable Mutex mu_;
  std::map<std::string, std::string> data_ TONY_GUARDED_BY(mu_);
  size_t total_bytes_ TONY_GUARDED_BY(mu_) = 0;
  // Waiters: the connections (by id) waiting for a key, and how many keys each still waits for.
  std::map<std::string, std::set<uint64_t>> waiting_ TONY_GUARDED_BY(mu_);
  std::map<uint64_t, size_t> awaited_ TONY_GUARDED_BY(mu_);
  std::map<uint64_t, Connection*> connections_ TONY_GUARDED_BY(mu_);
};

}  // namespace tony::am
