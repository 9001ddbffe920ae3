#pragma once
// Horovod's rendezvous, served by the AM itself: the HTTP key-value store through which the ranks
// of Horovod's Gloo controller find each other (what `horovodrun` and TonY's driver task run as
// Horovod's RendezvousServer). Workers reach it through HOROVOD_GLOO_RENDEZVOUS_ADDR/PORT.
//
// Protocol (Horovod's http_server.py and common/gloo/http_store.cc, read for the facts):
//   GET    /<scope>/<key>  200 with the value, or 404 while it is absent (ranks poll for keys);
//   PUT    /<scope>/<key>  stores the body as the value, 200;
//   DELETE /<scope>/<rank> the rank has finalized the scope, 200. Once as many ranks as the
//          scope's size (SetScopeSizes) have, the scope's keys are cleared, so that a later
//          rendezvous of the same scope starts afresh. In a scope of unknown size, deletes the key.
// Any other method, or a path that is not /<scope>/<key>, is answered 400 or 405.
//
// Who may use it: Gloo's HTTP client carries no credential, so the store accepts connections only
// from the addresses of the hosts named with AllowHost (the job's containers); any other peer's
// connection is closed before anything of it is read. A value is at most 1 MiB, and all values
// together at most 64 MiB (413 and 507 beyond). What it holds is the ranks' transport addresses,
// for the job's life: it stops with the AM.
//
// Threads: one libmicrohttpd thread answers requests; AllowHost and SetScopeSizes from any thread.
// Start and Stop from the owner's thread, not concurrently with each other.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "am/peer_allow_list.h"
#include "common/http_server.h"
#include "common/mutex.h"

struct sockaddr;

namespace tony::am {

// What the AM needs of a rendezvous store (RendezvousHost's; tests give it a fake).
class RendezvousStore {
 public:
  virtual ~RendezvousStore() = default;
  // Listens on `bind_host` (an address or a name), port 0: returns the port.
  [[nodiscard]] virtual absl::StatusOr<int> Start(const std::string& bind_host) = 0;
  virtual void Stop() = 0;
  // Accepts connections from every address `host` (a literal or a name) stands for.
  virtual void AllowHost(const std::string& host) = 0;
  // The number of ranks that finalize each scope ("global", "local_<host>", "cross_<n>").
  virtual void SetScopeSizes(std::map<std::string, int> sizes) = 0;
  // Forgets every key: the ranks meet afresh (a gang restart).
  virtual void Clear() = 0;
};

class GlooRendezvous final : public RendezvousStore {
 public:
  static constexpr size_t kMaxValueBytes = 1 << 20;
  static constexpr size_t kMaxTotalBytes = 64 << 20;

  GlooRendezvous() = default;
  ~GlooRendezvous() override;
  GlooRendezvous(const GlooRendezvous&) = delete;
  GlooRendezvous& operator=(const GlooRendezvous&) = delete;

  // Listens on `bind_host` (an address or a name), port 0: returns the port.
  [[nodiscard]] absl::StatusOr<int> Start(const std::string& bind_host) override;
  void Stop() override;

  // Accepts connections from every address `host` (a literal or a name) stands for. Names are
  // resolved on the server's thread when a peer that is not yet known connects.
  void AllowHost(const std::string& host) override;
  // The number of ranks that finalize each scope ("global", "local_<host>", "cross_<n>").
  void SetScopeSizes(std::map<std::string, int> sizes) override;
  void Clear() override;

  struct Request;  // one HTTP request being read (private to the implementation)

 private:
  // Answers a complete request: status code and body.
  std::pair<unsigned, std::string> Handle(const std::string& method, const std::string& url,
                                          const Request& request);

  HttpServer server_;
  PeerAllowList peers_;
  Mutex mu_;
  std::map<std::string, std::map<std::string, std::string>> store_ TONY_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> finalized_ TONY_GUARDED_BY(mu_);
  std::map<std::string, int> scope_sizes_ TONY_GUARDED_BY(mu_);
  size_t total_bytes_ TONY_GUARDED_BY(mu_) = 0;
};

}  // namespace tony::am
