#include "am/status_page.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "common/http_server.h"
#include "common/net.h"
#include "common/strings.h"
#include "google/protobuf/util/json_util.h"
#include "history/history_pages.h"
#include "history/metrics_text.h"

namespace tony::am {
namespace {

// As the client's summary and the history name them: an AM-stopped task is STOPPED.
std::string StateName(rpc::TaskState state) {
  if (state == rpc::TASK_FINISHED) return "STOPPED";
  std::string name = rpc::TaskState_Name(state);
  return name.starts_with("TASK_") ? name.substr(5) : name;
}

std::string JobStateName(rpc::JobState state) {
  std::string name = rpc::JobState_Name(state);
  return name.starts_with("JOB_") ? name.substr(4) : name;
}

// The snapshot as the history's job page model, which the HTML and the metrics render.
history::JobPage LiveJobPage(const rpc::JobStatus& status, const LiveHistory& live) {
  history::JobPage page;
  history::JobInfo& job = page.job;
  job.app_id = status.app_id();
  job.name = live.name;
  job.user = live.user;
  job.framework = live.framework;
  job.backend = live.backend;
  job.queue = live.queue;
  job.state = JobStateName(status.state());
  job.diagnostics = status.diagnostics();
  job.output_dir = status.output_dir();
  job.start_ms = status.start_ms();
  job.end_ms = status.end_ms();
  job.complete = status.complete();
  job.finished = status.complete();
  for (const rpc::TaskStatus& task : status.tasks()) {
    history::TaskRow row;
    row.type = task.type();
    row.index = task.index();
    row.state = StateName(task.state());
    row.attempt = task.attempt();
    row.host = task.host();
    row.port = task.port();
    if (task.has_exit_code()) row.exit_code = task.exit_code();
    row.diagnostics = task.diagnostics();
    row.start_ms = task.start_ms();
    row.end_ms = task.end_ms();
    row.peak_rss_bytes = task.peak_rss_bytes();
    if (task.progress().has_step()) {
      row.step = task.progress().step();
      row.total = task.progress().total();
    }
    row.log_dir = task.log_dir();
    row.heartbeats = task.heartbeats();
    for (const rpc::AttemptStatus& previous : task.previous_attempts()) {
      row.previous_exit_codes.push_back(previous.exit_code());
    }
    job.tasks.push_back(std::move(row));
  }
  page.events.assign(live.events.begin(), live.events.end());
  page.metrics.assign(live.metrics.begin(), live.metrics.end());
  page.config = live.config;
  page.now_ms = static_cast<int64_t>(std::time(nullptr)) * 1000;
  page.tensorboard_url = status.tensorboard_url();
  page.refresh_seconds = status.complete() ? 0 : 5;
  page.links = {{"status.json", "status.json"}, {"metrics", "metrics"}};
  return page;
}

std::string MetricsOf(const history::JobPage& page) {
  return history::RenderMetricsText({{&page.job, &page.metrics}});
}

}  // namespace

std::string RenderStatusHtml(const rpc::JobStatus& status, const LiveHistory& live) {
  return history::RenderJobPage(LiveJobPage(status, live));
}

std::string RenderStatusMetrics(const rpc::JobStatus& status, const LiveHistory& live) {
  return MetricsOf(LiveJobPage(status, live));
}

namespace {

// Sized so that 1,024 held connections cost at most 16 MiB: a request through the proxy (its
// headers, a cookie or two) and our response headers fit; a larger one is refused.
constexpr size_t kConnectionMemoryBytes = size_t{16} * 1024;
// A connection that neither sends nor receives for this long is closed: a half-sent request holds
// its slot no longer.
constexpr unsigned kPageConnectionTimeoutSeconds = 5;
constexpr unsigned kPageMaxConnections = 1024;
// In proxy mode a peer that is not the proxy only ever gets a redirect; it needs few connections.
constexpr unsigned kMaxConnectionsPerOtherPeer = 8;

constexpr char kHtmlType[] = "text/html; charset=utf-8";
constexpr char kTextType[] = "text/plain; charset=utf-8";

// A quarter of the process's file descriptors at most, so that the page never takes those the
// AM's RPC server and its task launches need.
unsigned ConnectionLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return kPageMaxConnections;
  }
  return static_cast<unsigned>(std::clamp<rlim_t>(limit.rlim_cur / 4, 16, kPageMaxConnections));
}

std::optional<std::array<uint8_t, 16>> PeerOf(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return info == nullptr ? std::nullopt : IpAddressOf(info->client_addr);
}

// The base every other peer is sent to: "/proxy/" at the start of its path gets Hadoop's
// "redirect/" marker, a trailing '/' goes (the request's path brings one).
absl::StatusOr<std::string> RedirectBase(std::string_view url) {
  const auto bad = [url](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("the status page's proxy base URL '", url, "' ", why));
  };
  const size_t scheme_end = url.find("://");
  if (!url.starts_with("http://") && !url.starts_with("https://")) {
    return bad("is not an http:// or https:// URL");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f || c == '?' || c == '#') {
      return bad("has a space, a control character, a query or a fragment");
    }
  }
  const size_t host = scheme_end + 3;
  const size_t path = url.find('/', host);
  if (path == host || host == url.size()) return bad("has no host");
  std::string base(url);
  while (path != std::string::npos && base.size() > path && base.ends_with('/')) base.pop_back();
  if (path != std::string::npos && std::string_view(base).substr(path).starts_with("/proxy/")) {
    base.insert(path + 7, "redirect/");
  }
  return base;
}

// `path` as it goes into a Location header: every byte outside RFC 3986's path characters as %XX.
std::string EncodePath(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = path.starts_with('/') ? "" : "/";
  for (char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || std::strchr("-._~!$&'()*+,;=:@/", c) != nullptr) {
      out += c;
    } else {
      out += StrCat('%', kHex[byte >> 4], kHex[byte & 0xf]);
    }
  }
  return out;
}

}  // namespace

StatusPage::~StatusPage() {
  Stop();
  if (html_ != nullptr) MHD_destroy_response(html_);
  if (json_ != nullptr) MHD_destroy_response(json_);
  if (metrics_ != nullptr) MHD_destroy_response(metrics_);
}

absl::StatusOr<int> StatusPage::Start(const std::string& host, int port) {
  return Start(StatusPageOptions{.bind_host = host, .port = port});
}

absl::StatusOr<int> StatusPage::Start(const StatusPageOptions& options) {
  if (server_.running()) return absl::FailedPreconditionError("the status page already runs");
  if (options.proxy_addresses.empty() != options.proxy_base_url.empty()) {
    return absl::InvalidArgumentError(
        "the status page needs both the web proxy's addresses and its base URL, or neither");
  }
  proxies_.clear();
  redirect_base_.clear();
  for (const std::string& text : options.proxy_addresses) {
    std::optional<PeerAddress> address = ParseIpAddress(text);
    if (!address) {
      return absl::InvalidArgumentError(StrCat("the web proxy address '", text,
                                               "' is not an IP address; resolve its host first"));
    }
    proxies_.insert(*address);
  }
  if (!proxies_.empty()) {
    absl::StatusOr<std::string> base = RedirectBase(options.proxy_base_url);
    if (!base.ok()) {
      proxies_.clear();
      return base.status();
    }
    redirect_base_ = *std::move(base);
  }
  {
    MutexLock lock(mu_);
    other_peers_.clear();
  }

  HttpServerOptions http;
  http.name = "the status page";
  http.bind_host = options.bind_host;
  http.port = options.port;
  http.max_connections = options.max_connections > 0 ? options.max_connections : ConnectionLimit();
  http.idle_timeout_s = kPageConnectionTimeoutSeconds;
  http.connection_memory_bytes = kConnectionMemoryBytes;
  http.self = this;
  http.accept = [](void* self, const sockaddr* peer, socklen_t) -> MHD_Result {
    return static_cast<StatusPage*>(self)->MayConnect(peer) ? MHD_YES : MHD_NO;
  };
  http.on_connection = [](void* self, MHD_Connection* connection, void** context,
                          MHD_ConnectionNotificationCode code) {
    static_cast<StatusPage*>(self)->OnConnection(connection, context,
                                                 code == MHD_CONNECTION_NOTIFY_STARTED);
  };
  // Answered on the first call, once the headers are in; a body (nothing here takes one) is
  // read and dropped.
  http.answer = [](void* self, MHD_Connection* connection, const char* url, const char* method,
                   const char*, const char*, size_t* upload_size, void** request) -> MHD_Result {
    if (!FirstCallOfRequest(request, upload_size)) return MHD_YES;
    return static_cast<StatusPage*>(self)->Answer(connection, url, method) ? MHD_YES : MHD_NO;
  };
  return server_.Start(http);
}

void StatusPage::Stop() { server_.Stop(); }

void StatusPage::Update(const rpc::JobStatus& status, const LiveHistory& live) {
  std::string json_text;
  (void)google::protobuf::util::MessageToJsonString(status, &json_text);
  MHD_Response* json = MakeResponse(json_text, "application/json");
  // One copy of the snapshot's events and samples for both renderings.
  const history::JobPage page = LiveJobPage(status, live);
  MHD_Response* html = MakeResponse(history::RenderJobPage(page), kHtmlType);
  MHD_Response* metrics = MakeResponse(MetricsOf(page), history::kMetricsContentType);
  if (json == nullptr || html == nullptr || metrics == nullptr) {
    // Out of memory: keep serving the last snapshot.
    for (MHD_Response* response : {json, html, metrics}) {
      if (response != nullptr) MHD_destroy_response(response);
    }
    return;
  }
  {
    MutexLock lock(mu_);
    std::swap(json_, json);
    std::swap(html_, html);
    std::swap(metrics_, metrics);
  }
  // Connections still sending the old snapshot hold their own references.
  for (MHD_Response* response : {json, html, metrics}) {
    if (response != nullptr) MHD_destroy_response(response);
  }
}

bool StatusPage::MayConnect(const sockaddr* peer) {
  if (proxies_.empty()) return true;
  std::optional<PeerAddress> address = IpAddressOf(peer);
  if (!address) return false;
  if (proxies_.contains(*address)) return true;
  MutexLock lock(mu_);
  auto it = other_peers_.find(*address);
  return it == other_peers_.end() || it->second < kMaxConnectionsPerOtherPeer;
}

void StatusPage::OnConnection(MHD_Connection* connection, void** context, bool opened) {
  if (proxies_.empty()) return;
  if (opened) {
    std::optional<PeerAddress> address = PeerOf(connection);
    if (!address || proxies_.contains(*address)) return;
    MutexLock lock(mu_);
    ++other_peers_[*address];
    *context = this;  // counted: the close uncounts it
    return;
  }
  if (*context == nullptr) return;
  std::optional<PeerAddress> address = PeerOf(connection);
  if (!address) return;
  MutexLock lock(mu_);
  auto it = other_peers_.find(*address);
  if (it != other_peers_.end() && --it->second == 0) other_peers_.erase(it);
}

bool StatusPage::Answer(MHD_Connection* connection, const char* url, const char* method) {
  const std::string_view path = url == nullptr ? "/" : url;
  if (!proxies_.empty()) {
    std::optional<PeerAddress> peer = PeerOf(connection);
    if (!peer || !proxies_.contains(*peer)) {
      const std::string location = StrCat(redirect_base_, EncodePath(path));
      MHD_Response* response =
          MakeResponse(StrCat("This page is served through ", location, "\n"), kTextType);
      if (response != nullptr) MHD_add_response_header(response, "Location", location.c_str());
      return QueueOnce(connection, 302, response);
    }
  }
  const std::string_view verb = method == nullptr ? "" : method;
  if (verb != "GET" && verb != "HEAD") {
    MHD_Response* response = MakeResponse("only GET\n", kTextType);
    if (response != nullptr) MHD_add_response_header(response, "Allow", "GET, HEAD");
    return QueueOnce(connection, 405, response);
  }
  // Behind YARN's web proxy the path keeps the proxy's prefix: match the end.
  const bool page = path == "/" || path.empty() || path.ends_with("/index.html");
  const bool json = path.ends_with("/status.json");
  const bool metrics = path.ends_with("/metrics");
  if (page || json || metrics) {
    MutexLock lock(mu_);  // queueing takes a reference before Update can drop the snapshot
    if (MHD_Response* snapshot = page ? html_ : json ? json_ : metrics_; snapshot != nullptr) {
      return Queue(connection, 200, snapshot);
    }
    return QueueOnce(connection, 200,
                     page   ? MakeResponse("starting\n", kTextType)
                     : json ? MakeResponse("{}", "application/json")
                            : MakeResponse("", history::kMetricsContentType));
  }
  return QueueOnce(connection, 404, MakeResponse("not found\n", kTextType));
}

}  // namespace tony::am
