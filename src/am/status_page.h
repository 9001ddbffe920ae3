#pragma once
// The AM's status page: the job's tasks as an HTML table at "/", as JSON at "/status.json" and as
// Prometheus metrics at "/metrics" (history/metrics_text.h), served over plain HTTP on a port of
// its own (port 0 picks one). It is the application's tracking URL on YARN, so the
// ResourceManager's "ApplicationMaster" link (through its web proxy) shows it; the local backend's
// client prints it too.
//
// Who sees what: the page carries the job's and each task's diagnostics (the last lines of a failed
// task's stderr, which may hold whatever a task printed), so it is served only to peers that are
// allowed to see them:
//   - With proxy addresses (YARN), as Hadoop's AmIpFilter: a request whose TCP peer is one of the
//     web proxy's IP addresses gets the page; any other peer, on any path and with any method, gets
//     a 302 to the same path under the proxy base URL and nothing of the job. Who passes the proxy
//     is the proxy's business (with Kerberos on it authenticates the user, and it warns, but does
//     not stop, one who is not the job's owner). "/proxy/" in the base becomes "/proxy/redirect/",
//     the marker by which the RM's proxy recognises an AM's redirect and stops a loop when the AM
//     sees the proxy under another address. A query string is not carried over: no page takes one.
//   - Without (local backend): every peer that reaches the bind address, loopback there.
//
// Slow clients: one libmicrohttpd thread polls every connection (epoll on Linux); connections are
// capped (by default a quarter of RLIMIT_NOFILE, at most 1024), each holds at most 16 KiB of
// request and header memory and is closed after 5 s without progress, and in proxy mode a peer that
// is not the proxy holds at most 8 connections, so held or half-sent requests cannot lock the proxy
// out. The page's bodies are built once per Update and shared by every connection that sends them.
//
// Threads: Update from any thread (the AM's loop); requests are answered on libmicrohttpd's own
// thread from the last snapshot, so a slow browser never holds the AM. Start and Stop from the
// owner's thread, not concurrently with each other.

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/http_server.h"
#include "common/mutex.h"
#include "history/history_reader.h"
#include "rpc/tony.pb.h"

struct sockaddr;

namespace tony::am {

// What the AM's page shows besides the JobStatus: who runs the job, its configuration, and the
// newest events and metric samples, as the job's history records them.
struct LiveHistory {
  std::string name;
  std::string user;
  std::string framework;
  std::string backend;
  std::string queue;
  // The newest first out: deques, so that a job of thousands of tasks never holds a vector and
  // its doubled copy at once (an event is about 400 bytes).
  std::deque<history::HistoryEvent> events;
  std::deque<history::MetricSample> metrics;
  std::vector<history::ConfigRow> config;
};

// The HTML page for `status`: the history's job page (history/history_pages.h), so that a running
// job and an ended one look alike, reloading every 5 s until the job is complete. Pure; every text
// from the job is escaped.
std::string RenderStatusHtml(const rpc::JobStatus& status, const LiveHistory& live = {});
// The same snapshot as Prometheus metrics: the job's and its tasks' series, each task's usage from
// its newest sample in `live`.
std::string RenderStatusMetrics(const rpc::JobStatus& status, const LiveHistory& live = {});

struct StatusPageOptions {
  // An IPv4 or IPv6 address, or a name that resolves to one; "0.0.0.0" for every interface.
  std::string bind_host = {};
  int port = 0;  // 0 picks a free one
  // The YARN web proxy's IP addresses as literals ("10.0.0.5", "fd00::5"); the caller resolves
  // the proxy's host names. Empty: every peer is served (the local backend).
  std::vector<std::string> proxy_addresses = {};
  // Where other peers are sent, e.g. "http://rm:8088/proxy/application_1700000000000_0001";
  // required with proxy_addresses, and only with them.
  std::string proxy_base_url = {};
  // Connections held at once; 0: a quarter of RLIMIT_NOFILE's soft limit, at most 1024.
  unsigned max_connections = 0;
};

class StatusPage {
 public:
  StatusPage() = default;
  ~StatusPage();
  StatusPage(const StatusPage&) = delete;
  StatusPage& operator=(const StatusPage&) = delete;

  // Listens as `options` say; returns the port. InvalidArgument for a bad address or URL.
  [[nodiscard]] absl::StatusOr<int> Start(const StatusPageOptions& options);
  // Serves every peer on `host` (the local backend).
  [[nodiscard]] absl::StatusOr<int> Start(const std::string& host, int port = 0);
  void Update(const rpc::JobStatus& status, const LiveHistory& live = {});
  void Stop();

 private:
  // An IP address, IPv4 as IPv4-mapped IPv6, so that both forms of a peer compare equal.
  using PeerAddress = std::array<uint8_t, 16>;

  bool MayConnect(const sockaddr* peer);
  void OnConnection(MHD_Connection* connection, void** context, bool opened);
  bool Answer(MHD_Connection* connection, const char* url, const char* method);

  HttpServer server_;
  // Set by Start before the daemon runs; read-only while it does.
  std::set<PeerAddress> proxies_;
  std::string redirect_base_;
  Mutex mu_;
  MHD_Response* html_ TONY_GUARDED_BY(mu_) = nullptr;     // owned, shared by connections
  MHD_Response* json_ TONY_GUARDED_BY(mu_) = nullptr;     // owned, shared by connections
  MHD_Response* metrics_ TONY_GUARDED_BY(mu_) = nullptr;  // owned, shared by connections
  std::map<PeerAddress, unsigned> other_peers_
      TONY_GUARDED_BY(mu_);  // open connections per non-proxy
};

}  // namespace tony::am
