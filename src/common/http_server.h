#pragma once
// tony's small HTTP servers on libmicrohttpd (the AM's status page, Horovod's rendezvous in the
// AM, `tony history`): one place for binding, the limits each sets, the URL unescaping that
// refuses "%00" (http_unescape.h), and the headers of the responses. Each server keeps its own
// request handling, as libmicrohttpd's callbacks with the server's object as their closure.
//
// Threads: Start and Stop from one thread; the callbacks run on libmicrohttpd's threads (one, or
// `threads` of them), which Stop waits for.

#include <microhttpd.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tony {

struct HttpServerOptions {
  std::string name;       // in errors: "the status page"
  std::string bind_host;  // a literal or a name; "" for every address
  int port = 0;           // 0: a free one
  // Polling threads, each with many connections (epoll): a slow client costs a slot and its
  // memory, never a thread.
  unsigned threads = 1;
  unsigned max_connections = 0;                // required
  unsigned max_per_address = 0;                // 0: none besides max_connections
  unsigned idle_timeout_s = 0;                 // 0: libmicrohttpd's (none)
  size_t connection_memory_bytes = 0;          // 0: libmicrohttpd's (32 KiB)
  void* self = nullptr;                        // every callback's closure
  MHD_AccessHandlerCallback answer = nullptr;  // required
  MHD_AcceptPolicyCallback accept = nullptr;   // none: every peer may connect
  MHD_NotifyConnectionCallback on_connection = nullptr;
  MHD_RequestCompletedCallback on_completed = nullptr;
};

class HttpServer {
 public:
  HttpServer() = default;
  ~HttpServer() { Stop(); }
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Listens and serves; returns the port. InvalidArgument naming the server and the address when
  // it is none of this host's or is in use; FailedPrecondition when it runs already.
  absl::StatusOr<int> Start(const HttpServerOptions& options);
  // Closes every connection and waits for the server's threads. Idempotent.
  void Stop();
  bool running() const { return daemon_ != nullptr; }

 private:
  MHD_Daemon* daemon_ = nullptr;
};

// For an access handler that answers once the headers are in and takes no body: whether this call
// is the one to answer (the first of the request). Later calls read and drop what a body sends.
bool FirstCallOfRequest(void** request, size_t* upload_size);

// What a page of tony's may do in a browser: nothing but its own inline styles (escaping is the
// defence; this is the second line: no script runs).
inline constexpr char kPagePolicy[] = "default-src 'none'; style-src 'unsafe-inline'";

// A response of `body` (copied) as `content_type`, which no browser or proxy keeps and no browser
// takes for another type, under the Content-Security-Policy `policy`. Null when out of memory.
MHD_Response* MakeResponse(std::string_view body, const char* content_type,
                           const char* policy = kPagePolicy);
// Queues `response` (may be null: false) as the answer to the connection's request; the caller
// keeps its reference.
bool Queue(MHD_Connection* connection, unsigned code, MHD_Response* response);
// Queues a response made for this request only, and drops it.
bool QueueOnce(MHD_Connection* connection, unsigned code, MHD_Response* response);

}  // namespace tony
