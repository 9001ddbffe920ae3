#include "am/gloo_rendezvous.h"

#include <microhttpd.h>
#include <sys/socket.h>

#include <memory>
#include <string_view>
#include <utility>

#include "common/strings.h"

namespace tony::am {
namespace {

// A rank polls for keys with short requests; a connection idle this long is closed.
constexpr unsigned kConnectionTimeoutSeconds = 30;
constexpr unsigned kMaxConnections = 1024;

}  // namespace

struct GlooRendezvous::Request {
  std::string body;
  bool too_large = false;
};

GlooRendezvous::~GlooRendezvous() { Stop(); }

absl::StatusOr<int> GlooRendezvous::Start(const std::string& bind_host) {
  HttpServerOptions http;
  http.name = "Horovod's rendezvous";
  http.bind_host = bind_host;
  http.max_connections = kMaxConnections;
  http.idle_timeout_s = kConnectionTimeoutSeconds;
  http.self = this;
  http.accept = [](void* self, const sockaddr* peer, socklen_t) -> MHD_Result {
    return static_cast<GlooRendezvous*>(self)->peers_.Admits(peer) ? MHD_YES : MHD_NO;
  };
  // Called once with the headers, then with each piece of the body, then once more with none:
  // the request is answered then.
  http.answer = [](void* self, MHD_Connection* connection, const char* url, const char* method,
                   const char*, const char* data, size_t* size, void** context) -> MHD_Result {
    if (*context == nullptr) {
      *context = new Request;
      return MHD_YES;
    }
    auto* request = static_cast<Request*>(*context);
    if (*size > 0) {
      if (request->body.size() + *size > kMaxValueBytes) {
        request->too_large = true;
      } else if (!request->too_large) {
        request->body.append(data, *size);
      }
      *size = 0;
      return MHD_YES;
    }
    auto [code, body] = static_cast<GlooRendezvous*>(self)->Handle(
        method == nullptr ? "" : method, url == nullptr ? "" : url, *request);
    // The bytes alone, as Horovod's store client expects them.
    MHD_Response* response =
        MHD_create_response_from_buffer(body.size(), body.data(), MHD_RESPMEM_MUST_COPY);
    return QueueOnce(connection, code, response) ? MHD_YES : MHD_NO;
  };
  http.on_completed = [](void*, MHD_Connection*, void** context, MHD_RequestTerminationCode) {
    delete static_cast<Request*>(*context);
    *context = nullptr;
  };
  return server_.Start(http);
}

void GlooRendezvous::Stop() { server_.Stop(); }

void GlooRendezvous::AllowHost(const std::string& host) { peers_.Allow(host); }

void GlooRendezvous::SetScopeSizes(std::map<std::string, int> sizes) {
  MutexLock lock(mu_);
  scope_sizes_ = std::move(sizes);
}

void GlooRendezvous::Clear() {
  MutexLock lock(mu_);
  store_.clear();
  finalized_.clear();
  total_bytes_ = 0;
}

std::pair<unsigned, std::string> GlooRendezvous::Handle(const std::string& method,
                                                        const std::string& url,
                                                        const Request& request) {
  // "/<scope>/<key>", both parts non-empty.
  const size_t slash = url.find('/', 1);
  if (!url.starts_with('/') || slash == std::string::npos || slash == 1 ||
      slash + 1 == url.size() || url.find('/', slash + 1) != std::string::npos) {
    return {400, "expected /<scope>/<key>\n"};
  }
  const std::string scope = url.substr(1, slash - 1);
  const std::string key = url.substr(slash + 1);

  MutexLock lock(mu_);
  if (method == "GET") {
    auto in_scope = store_.find(scope);
    if (in_scope == store_.end()) return {404, ""};
    auto value = in_scope->second.find(key);
    if (value == in_scope->second.end()) return {404, ""};
    return {200, value->second};
  }
  if (method == "PUT") {
    if (request.too_large) return {413, "a value is at most 1 MiB\n"};
    size_t replaced = 0;
    if (auto in_scope = store_.find(scope); in_scope != store_.end()) {
      if (auto value = in_scope->second.find(key); value != in_scope->second.end()) {
        replaced = value->second.size();
      }
    }
    if (total_bytes_ - replaced + request.body.size() > kMaxTotalBytes) {
      return {507, "the rendezvous holds 64 MiB at most\n"};
    }
    total_bytes_ = total_bytes_ - replaced + request.body.size();
    store_[scope][key] = request.body;
    return {200, ""};
  }
  if (method == "DELETE") {
    auto in_scope = store_.find(scope);
    auto size = scope_sizes_.find(scope);
    if (size != scope_sizes_.end()) {
      // A rank finalized the scope: once all have, a later rendezvous of it starts empty.
      std::set<std::string>& ranks = finalized_[scope];
      ranks.insert(key);
      if (static_cast<int>(ranks.size()) < size->second) return {200, ""};
      finalized_.erase(scope);
    } else if (in_scope != store_.end()) {
      auto value = in_scope->second.find(key);
      if (value != in_scope->second.end()) {
        total_bytes_ -= value->second.size();
        in_scope->second.erase(value);
      }
      if (!in_scope->second.empty()) return {200, ""};
    }
    if (in_scope != store_.end()) {
      for (const auto& [name, value] : in_scope->second) total_bytes_ -= value.size();
      store_.erase(in_scope);
    }
    return {200, ""};
  }
  return {405, "GET, PUT or DELETE\n"};
}

}  // namespace tony::am
