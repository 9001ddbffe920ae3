#include "common/http_server.h"

#include <vector>

#include "common/http_unescape.h"
#include "common/net.h"
#include "common/strings.h"

namespace tony {

absl::StatusOr<int> HttpServer::Start(const HttpServerOptions& options) {
  if (daemon_ != nullptr) return absl::FailedPreconditionError(StrCat(options.name, " runs"));
  absl::StatusOr<ListenAddress> address =
      ResolveListenAddress(options.bind_host, options.name, options.port);
  if (!address.ok()) return address.status();
  std::vector<MHD_OptionItem> items = {
      {MHD_OPTION_SOCK_ADDR, 0, &address->address},
      {MHD_OPTION_CONNECTION_LIMIT, options.max_connections, nullptr},
      {MHD_OPTION_UNESCAPE_CALLBACK, reinterpret_cast<intptr_t>(&UnescapeRefusingNul), nullptr},
  };
  if (options.threads > 1) items.push_back({MHD_OPTION_THREAD_POOL_SIZE, options.threads, nullptr});
  if (options.max_per_address > 0) {
    items.push_back({MHD_OPTION_PER_IP_CONNECTION_LIMIT, options.max_per_address, nullptr});
  }
  if (options.idle_timeout_s > 0) {
    items.push_back({MHD_OPTION_CONNECTION_TIMEOUT, options.idle_timeout_s, nullptr});
  }
  if (options.connection_memory_bytes > 0) {
    items.push_back({MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                     static_cast<intptr_t>(options.connection_memory_bytes), nullptr});
  }
  if (options.on_connection != nullptr) {
    items.push_back({MHD_OPTION_NOTIFY_CONNECTION,
                     reinterpret_cast<intptr_t>(options.on_connection), options.self});
  }
  if (options.on_completed != nullptr) {
    items.push_back({MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(options.on_completed),
                     options.self});
  }
  items.push_back({MHD_OPTION_END, 0, nullptr});
  daemon_ = MHD_start_daemon(
      MHD_USE_AUTO_INTERNAL_THREAD | (address->family == AF_INET6 ? MHD_USE_IPv6 : 0),
      static_cast<uint16_t>(options.port), options.accept, options.self, options.answer,
      options.self, MHD_OPTION_ARRAY, items.data(), MHD_OPTION_END);
  if (daemon_ == nullptr) {
    const std::string host = options.bind_host.empty() ? "every address" : options.bind_host;
    return absl::InvalidArgumentError(
        options.port == 0 ? StrCat(options.name, " cannot listen on ", host)
                          : StrCat(options.name, " cannot listen on port ", options.port, " of ",
                                   host, " (in use, or not this host's)"));
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  if (info == nullptr || info->port == 0) {
    Stop();
    return absl::InternalError(StrCat(options.name, " has no port"));
  }
  return static_cast<int>(info->port);
}

void HttpServer::Stop() {
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
}

bool FirstCallOfRequest(void** request, size_t* upload_size) {
  if (*request != nullptr) {
    if (upload_size != nullptr) *upload_size = 0;
    return false;
  }
  *request = request;  // marked: any non-null value
  return true;
}

MHD_Response* MakeResponse(std::string_view body, const char* content_type, const char* policy) {
  MHD_Response* response = MHD_create_response_from_buffer(
      body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return nullptr;
  MHD_add_response_header(response, "Content-Type", content_type);
  MHD_add_response_header(response, "Cache-Control", "no-store");
  MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(response, "Content-Security-Policy", policy);
  return response;
}

bool Queue(MHD_Connection* connection, unsigned code, MHD_Response* response) {
  return response != nullptr && MHD_queue_response(connection, code, response) == MHD_YES;
}

bool QueueOnce(MHD_Connection* connection, unsigned code, MHD_Response* response) {
  const bool queued = Queue(connection, code, response);
  if (response != nullptr) MHD_destroy_response(response);
  return queued;
}

}  // namespace tony
