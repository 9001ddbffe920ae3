#pragma once
// `tony history`: the history UI (history_pages.h) over HTTP, read from a history store (the
// local disk or HDFS) as the user who runs it. It binds 127.0.0.1 by default: a job's history
// holds its output and configuration, so it is the user's to open up. One thread per
// connection (reads may wait on HDFS), at most 64 connections, each closed after 30 s idle.
//
// Retention: every purge interval, jobs whose history in the finished directory was last written
// more than retention_sec ago are removed (tony.history.retention-sec; <= 0 keeps them). Pages
// that are being read while a job goes answer "removed", never fail.
//
// Routes: "/" (?state=&user=), "/jobs/<app>", "/jobs/<app>/logs/<file>", and Prometheus's text at
// "/metrics" and "/jobs/<app>/metrics".
//
// Threads: Start and Stop from one thread; Purge from any.

#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "common/http_server.h"
#include "common/mutex.h"
#include "history/history_format.h"

namespace tony::history {

struct HistoryServerOptions {
  HistoryStore store;
  std::string host = "127.0.0.1";
  int port = 0;               // 0 picks one
  int64_t retention_sec = 0;  // <= 0: keep everything
  int64_t purge_interval_ms = int64_t{6} * 3600 * 1000;
};

class HistoryServer {
 public:
  HistoryServer() = default;
  ~HistoryServer();
  HistoryServer(const HistoryServer&) = delete;
  HistoryServer& operator=(const HistoryServer&) = delete;

  // Listens; returns the port. InvalidArgument for an address it cannot bind.
  [[nodiscard]] absl::StatusOr<int> Start(HistoryServerOptions options);
  void Stop();

  // Removes the finished jobs past retention; returns their ids.
  std::vector<std::string> Purge(int64_t now_ms);

  // The page for a GET of `path` with the query's state and user: status code and HTML.
  std::pair<int, std::string> Page(const std::string& path, const std::string& state,
                                   const std::string& user);
  // The Prometheus metrics (history/metrics_text.h) for a GET of `path`, where it names them:
  // "/metrics", every job's series but the per-task usage; "/jobs/<app id>/metrics", one job's
  // with each task's newest sample. nullopt for any other path.
  std::optional<std::pair<int, std::string>> Metrics(const std::string& path);

 private:
  bool Answer(MHD_Connection* connection, const char* url, const char* method);
  std::pair<int, std::string> JobPageFor(const std::string& app_id);
  std::pair<int, std::string> LogPageFor(const std::string& app_id, const std::string& file);

  HistoryServerOptions options_;
  HttpServer server_;
  Mutex mu_;
  CondVar wake_;
  bool stopping_ TONY_GUARDED_BY(mu_) = false;
  std::thread purger_;
};

}  // namespace tony::history
