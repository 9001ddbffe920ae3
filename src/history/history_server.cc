#include "history/history_server.h"

#include <microhttpd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <regex>

#include "common/clock.h"
#include "common/http_server.h"
#include "common/strings.h"
#include "history/history_pages.h"
#include "history/history_reader.h"
#include "history/metrics_text.h"
#include "spdlog/spdlog.h"

namespace tony::history {
namespace {

constexpr char kHtml[] = "text/html; charset=utf-8";
// A log page shows at most this much: its end.
constexpr int64_t kLogPageBytes = int64_t{4} << 20;
// Capacity against slow and idle clients (see Start).
constexpr unsigned kServerThreads = 4;
constexpr unsigned kMaxConnections = 900;
constexpr unsigned kMaxConnectionsPerAddress = 600;
constexpr unsigned kIdleSeconds = 10;

bool IsAppId(const std::string& text) {
  static const std::regex pattern("application_[0-9]{1,20}_[0-9]{1,10}");
  return std::regex_match(text, pattern);
}

std::string Query(MHD_Connection* connection, const char* key) {
  const char* value = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, key);
  return value == nullptr ? "" : std::string(value).substr(0, 200);
}

// A file of the job's history, whole, or "" (with `problem` set) when it cannot be read.
std::string ReadWhole(HistoryFs& fs, const std::string& path, std::string* problem) {
  absl::StatusOr<std::string> text = fs.Read(path, 0, kMaxReadBytes);
  if (text.ok()) return *std::move(text);
  if (!absl::IsNotFound(text.status())) *problem = std::string(text.status().message());
  return "";
}

}  // namespace

HistoryServer::~HistoryServer() { Stop(); }

absl::StatusOr<int> HistoryServer::Start(HistoryServerOptions options) {
  if (server_.running()) return absl::FailedPreconditionError("the history server already runs");
  options_ = std::move(options);
  // A few polling threads, each with many connections: a client that holds a connection
  // (sending its request a byte at a time, or never) costs a slot and 32 KiB, never a thread, so
  // hundreds of them leave the server answering everyone else. One address may hold a fraction of
  // the slots; idle connections go after kIdleSeconds.
  HttpServerOptions http;
  http.name = "the history server";
  http.bind_host = options_.host;
  http.port = options_.port;
  http.threads = kServerThreads;
  http.max_connections = kMaxConnections;
  http.max_per_address = kMaxConnectionsPerAddress;
  http.idle_timeout_s = kIdleSeconds;
  http.connection_memory_bytes = size_t{32} * 1024;
  http.self = this;
  http.answer = [](void* self, MHD_Connection* connection, const char* url, const char* method,
                   const char*, const char*, size_t* upload_size, void** request) -> MHD_Result {
    if (!FirstCallOfRequest(request, upload_size)) return MHD_YES;
    return static_cast<HistoryServer*>(self)->Answer(connection, url, method) ? MHD_YES : MHD_NO;
  };
  absl::StatusOr<int> started = server_.Start(http);
  if (!started.ok()) return started.status();
  const int port = *started;
  if (options_.retention_sec > 0) {
    purger_ = std::thread([this] {
      mu_.lock();
      while (!stopping_) {
        mu_.unlock();
        for (const std::string& app : Purge(SystemClock::Get()->WallMs())) {
          spdlog::info("removed the history of {} (older than tony.history.retention-sec = {})",
                       app, options_.retention_sec);
        }
        mu_.lock();
        const auto next = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(options_.purge_interval_ms);
        while (!stopping_) {
          if (!wake_.WaitUntil(mu_, next)) break;
        }
      }
      mu_.unlock();
    });
  }
  return port;
}

void HistoryServer::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  if (purger_.joinable()) purger_.join();
  server_.Stop();
}

std::vector<std::string> HistoryServer::Purge(int64_t now_ms) {
  std::vector<std::string> removed;
  absl::StatusOr<std::vector<ExpiredHistory>> expired =
      FindExpiredHistory(*options_.store.fs, options_.store.dirs, options_.retention_sec, now_ms);
  if (!expired.ok()) return removed;
  for (const ExpiredHistory& job : *expired) {
    if (!IsAppId(job.app_id)) continue;
    if (absl::Status gone = options_.store.fs->Remove(job.dir); gone.ok()) {
      removed.push_back(job.app_id);
    } else {
      spdlog::warn("cannot remove the history of {}: {}", job.app_id, ToStd(gone.message()));
    }
  }
  return removed;
}

std::pair<int, std::string> HistoryServer::Page(const std::string& raw_path,
                                                const std::string& state, const std::string& user) {
  std::string path = raw_path;
  while (path.starts_with("//")) path.erase(0, 1);
  if (path == "/" || path.empty()) {
    absl::StatusOr<std::vector<JobInfo>> jobs = ListJobs(*options_.store.fs, options_.store.dirs);
    if (!jobs.ok()) {
      return {503, RenderMessage("The history cannot be read", std::string(jobs.status().message()),
                                 "")};
    }
    return {200, RenderJobList(*jobs, {state, user}, SystemClock::Get()->WallMs())};
  }
  std::vector<std::string_view> parts = Split(std::string_view(path).substr(1), '/');
  if (parts.size() >= 2 && parts[0] == "jobs" && IsAppId(std::string(parts[1]))) {
    const std::string app_id(parts[1]);
    if (parts.size() == 2 || (parts.size() == 3 && parts[2].empty())) return JobPageFor(app_id);
    if (parts.size() == 4 && parts[2] == "logs" && ParseLogName(parts[3])) {
      return LogPageFor(app_id, std::string(parts[3]));
    }
  }
  return {404, RenderMessage("Not found", StrCat("There is no page ", path, "."), "/")};
}

namespace {

// A message as one comment line of the metrics text.
std::string OneLine(std::string_view text) {
  std::string line(text);
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line;
}

}  // namespace

std::optional<std::pair<int, std::string>> HistoryServer::Metrics(const std::string& raw_path) {
  std::string path = raw_path;
  while (path.starts_with("//")) path.erase(0, 1);
  HistoryFs& fs = *options_.store.fs;
  if (path == "/metrics") {
    absl::StatusOr<std::vector<JobInfo>> jobs = ListJobs(fs, options_.store.dirs);
    if (!jobs.ok()) {
      return std::pair{
          503,
          StrCat("# the history cannot be read: ", OneLine(ToStd(jobs.status().message())), "\n")};
    }
    std::vector<JobMetrics> all;
    for (const JobInfo& job : *jobs) all.push_back({&job, nullptr});
    return std::pair{200, RenderMetricsText(all)};
  }
  if (!path.starts_with('/')) return std::nullopt;  // "" when the request line was "GET ?x"
  std::vector<std::string_view> parts = Split(std::string_view(path).substr(1), '/');
  if (parts.size() != 3 || parts[0] != "jobs" || !IsAppId(std::string(parts[1])) ||
      parts[2] != "metrics") {
    return std::nullopt;
  }
  const std::string app_id(parts[1]);
  absl::StatusOr<JobLocation> where = FindJob(fs, options_.store.dirs, app_id);
  if (!where.ok()) {
    return std::pair{absl::IsNotFound(where.status()) ? 404 : 503,
                     StrCat("# ", OneLine(ToStd(where.status().message())), "\n")};
  }
  std::string problem;
  JobInfo job = ParseJob(ReadWhole(fs, StrCat(where->dir, "/", kJobFile), &problem));
  if (job.app_id.empty()) job.app_id = app_id;
  int bad_lines = 0;
  const std::vector<MetricSample> samples =
      ParseMetrics(ReadWhole(fs, StrCat(where->dir, "/", kMetricsFile), &problem), &bad_lines);
  return std::pair{200, RenderMetricsText({{&job, &samples}})};
}

std::pair<int, std::string> HistoryServer::JobPageFor(const std::string& app_id) {
  HistoryFs& fs = *options_.store.fs;
  absl::StatusOr<JobLocation> where = FindJob(fs, options_.store.dirs, app_id);
  if (!where.ok()) {
    const bool missing = absl::IsNotFound(where.status());
    return {missing ? 404 : 503,
            RenderMessage(missing ? "No such job" : "The history cannot be read",
                          missing ? StrCat("There is no history of ", app_id,
                                           " (never written here, or removed).")
                                  : std::string(where.status().message()),
                          "/")};
  }
  JobPage page;
  std::string problem;
  page.job = ParseJob(ReadWhole(fs, StrCat(where->dir, "/", kJobFile), &problem));
  if (!problem.empty()) page.job.problems.push_back(problem);
  if (page.job.app_id.empty()) page.job.app_id = app_id;
  page.job.finished = where->finished;
  problem.clear();
  page.events = ParseEvents(ReadWhole(fs, StrCat(where->dir, "/", kEventsFile), &problem),
                            &page.bad_event_lines);
  if (!problem.empty()) page.job.problems.push_back(problem);
  problem.clear();
  page.metrics = ParseMetrics(ReadWhole(fs, StrCat(where->dir, "/", kMetricsFile), &problem),
                              &page.bad_metric_lines);
  if (!problem.empty()) page.job.problems.push_back(problem);
  page.config = ParseConfig(ReadWhole(fs, StrCat(where->dir, "/", kConfigFile), &problem),
                            &page.config_problem);
  absl::StatusOr<std::vector<LogFile>> logs = ListLogs(fs, where->dir);
  if (logs.ok()) page.logs = *std::move(logs);
  page.logs_url = StrCat("/jobs/", app_id, "/logs");
  page.back_url.assign(1, '/');  // not = "/": GCC 12's -Wrestrict false positive (bug 105329)
  page.now_ms = SystemClock::Get()->WallMs();
  return {200, RenderJobPage(page)};
}

std::pair<int, std::string> HistoryServer::LogPageFor(const std::string& app_id,
                                                      const std::string& file) {
  HistoryFs& fs = *options_.store.fs;
  const std::string job_url = StrCat("/jobs/", app_id);
  absl::StatusOr<JobLocation> where = FindJob(fs, options_.store.dirs, app_id);
  const std::string path = where.ok() ? StrCat(where->dir, "/", kLogsDir, "/", file) : "";
  absl::StatusOr<HistoryEntry> entry =
      where.ok() ? fs.Stat(path) : absl::StatusOr<HistoryEntry>(where.status());
  if (!entry.ok()) {
    return {404, RenderMessage("No such log", StrCat(app_id, " has no log ", file, "."), job_url)};
  }
  const int64_t skipped = std::max<int64_t>(0, entry->size - kLogPageBytes);
  absl::StatusOr<std::string> text = fs.Read(path, skipped, kLogPageBytes);
  if (!text.ok()) {
    return {404, RenderMessage("No such log", std::string(text.status().message()), job_url)};
  }
  return {200, RenderLog(app_id, file, *text, skipped, job_url)};
}

bool HistoryServer::Answer(MHD_Connection* connection, const char* url, const char* method) {
  const std::string_view verb = method == nullptr ? "" : method;
  const bool get = verb == "GET" || verb == "HEAD";
  std::optional<std::pair<int, std::string>> metrics =
      get ? Metrics(url == nullptr ? "/" : url) : std::nullopt;
  const bool is_metrics = metrics.has_value();
  std::pair<int, std::string> page =
      is_metrics ? *std::move(metrics)
      : get
          ? Page(url == nullptr ? "/" : url, Query(connection, "state"), Query(connection, "user"))
          : std::pair<int, std::string>{405, RenderMessage("Only GET", "", "/")};
  // The pages run no script and load nothing from elsewhere.
  return QueueOnce(connection, static_cast<unsigned>(page.first),
                   MakeResponse(page.second, is_metrics ? kMetricsContentType : kHtml,
                                "default-src 'none'; style-src 'unsafe-inline'; img-src data:"));
}

}  // namespace tony::history
