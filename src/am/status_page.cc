#include "am/status_page.h"

#include <microhttpd.h>
#include <netdb.h>

#include <ctime>
#include <memory>

#include "common/strings.h"
#include "google/protobuf/util/json_util.h"

namespace tony::am {
namespace {

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string StateName(rpc::TaskState state) {
  std::string name = rpc::TaskState_Name(state);
  return name.starts_with("TASK_") ? name.substr(5) : name;
}

std::string JobStateName(rpc::JobState state) {
  std::string name = rpc::JobState_Name(state);
  return name.starts_with("JOB_") ? name.substr(4) : name;
}

std::string Duration(int64_t start_ms, int64_t end_ms) {
  if (start_ms <= 0) return "";
  const int64_t end = end_ms > 0 ? end_ms : static_cast<int64_t>(std::time(nullptr)) * 1000;
  const int64_t seconds = (end - start_ms) / 1000;
  return seconds >= 60 ? StrCat(seconds / 60, " min ", seconds % 60, " s") : StrCat(seconds, " s");
}

}  // namespace

std::string RenderStatusHtml(const rpc::JobStatus& status) {
  std::string html =
      StrCat("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">",
             status.complete() ? "" : "<meta http-equiv=\"refresh\" content=\"5\">", "<title>tony ",
             Escape(status.app_id()), "</title>",
             "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}</style></head><body>\n",
             "<h1>", Escape(status.app_id()), ": ", JobStateName(status.state()), "</h1>\n");
  if (!status.diagnostics().empty()) {
    html += StrCat("<pre>", Escape(status.diagnostics()), "</pre>\n");
  }
  html +=
      "<table><tr><th>task</th><th>state</th><th>host:port</th><th>exit</th><th>attempt</th>"
      "<th>duration</th><th>peak RSS</th><th>logs</th></tr>\n";
  for (const rpc::TaskStatus& task : status.tasks()) {
    const std::string logs = task.log_dir();
    const std::string log_cell =
        logs.starts_with("http://") || logs.starts_with("https://")
            ? StrCat("<a href=\"", Escape(logs), "\">", Escape(task.container_id()), "</a>")
            : Escape(logs);
    html += StrCat(
        "<tr><td>", Escape(task.type()), ":", task.index(), "</td><td>", StateName(task.state()),
        "</td><td>", task.host().empty() ? "" : StrCat(Escape(task.host()), ":", task.port()),
        "</td><td>", task.has_exit_code() ? std::to_string(task.exit_code()) : "", "</td><td>",
        task.attempt(), "</td><td>", Duration(task.start_ms(), task.end_ms()), "</td><td>",
        task.peak_rss_bytes() > 0 ? FormatMb(task.peak_rss_bytes()) : "", "</td><td>", log_cell,
        "</td></tr>\n");
    if (!task.diagnostics().empty()) {
      html += StrCat("<tr><td></td><td colspan=\"7\"><pre>", Escape(task.diagnostics()),
                     "</pre></td></tr>\n");
    }
  }
  html += "</table>\n<p><a href=\"status.json\">status.json</a></p></body></html>\n";
  return html;
}

StatusPage::~StatusPage() { Stop(); }

absl::StatusOr<int> StatusPage::Start(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      rc != 0 || found == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("the status page cannot listen on '", host, "': ", gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, &freeaddrinfo);
  const bool ipv6 = found->ai_family == AF_INET6;
  daemon_ = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | (ipv6 ? MHD_USE_IPv6 : 0),
      static_cast<uint16_t>(port), nullptr, nullptr,
      [](void* cls, MHD_Connection* connection, const char* url, const char* method, const char*,
         const char*, size_t* upload_size, void**) -> MHD_Result {
        if (upload_size != nullptr && *upload_size != 0) {
          *upload_size = 0;  // a body is ignored: every page is a GET
          return MHD_YES;
        }
        return Handle(cls, connection, url, method) ? MHD_YES : MHD_NO;
      },
      this, MHD_OPTION_SOCK_ADDR, found->ai_addr, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
      MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_END);
  if (daemon_ == nullptr) return absl::InternalError("cannot start the status page's HTTP server");
  const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  if (info == nullptr || info->port == 0) {
    Stop();
    return absl::InternalError("the status page's HTTP server has no port");
  }
  return static_cast<int>(info->port);
}

void StatusPage::Stop() {
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
}

void StatusPage::Update(const rpc::JobStatus& status) {
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(status, &json);
  std::string html = RenderStatusHtml(status);
  std::lock_guard lock(mu_);
  json_ = std::move(json);
  html_ = std::move(html);
}

StatusPage::Response StatusPage::Answer(const std::string& method, const std::string& url) {
  if (method != "GET" && method != "HEAD") {
    return {405, "text/plain", "only GET\n"};
  }
  std::lock_guard lock(mu_);
  // Behind YARN's web proxy the path keeps the proxy's prefix: match the end.
  if (url == "/" || url.empty() || url.ends_with("/index.html")) {
    return {200, "text/html; charset=utf-8", html_.empty() ? "starting\n" : html_};
  }
  if (url.ends_with("/status.json")) return {200, "application/json", json_};
  return {404, "text/plain", "not found\n"};
}

int StatusPage::Handle(void* self, MHD_Connection* connection, const char* url,
                       const char* method) {
  Response answer = static_cast<StatusPage*>(self)->Answer(method, url);
  MHD_Response* response = MHD_create_response_from_buffer(answer.body.size(), answer.body.data(),
                                                           MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return 0;
  MHD_add_response_header(response, "Content-Type", answer.content_type.c_str());
  MHD_add_response_header(response, "Cache-Control", "no-store");
  const MHD_Result queued =
      MHD_queue_response(connection, static_cast<unsigned>(answer.code), response);
  MHD_destroy_response(response);
  return queued == MHD_YES;
}

}  // namespace tony::am
