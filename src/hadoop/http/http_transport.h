#pragma once
// One HTTP request over libcurl, without following redirects: the transport under WebHDFS
// (webhdfs.h). Internal to the hadoop module.
//
// Time limits: a request is limited to timeout_ms in all (connecting included); an upload may take
// timeout_ms plus one second per MiB of its body, and is aborted sooner if no byte moves for
// timeout_ms. Proxies from the environment (http_proxy) are ignored: the cluster is reached
// directly.
//
// Threads: a plain function; each call uses its own connection.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tony::hadoop::http {

// The body of a PUT or POST. `read` fills up to `size` bytes and returns how many (0 at the end);
// on a failure it sets `error` and returns CURL_READFUNC_ABORT.
struct UploadBody {
  int64_t size = 0;
  std::function<size_t(char* buffer, size_t size, absl::Status& error)> read;
};

// What an https:// request trusts.
struct Tls {
  // PEM certificates of the authorities to trust, instead of the system's; empty: the system's.
  std::string ca_pem;
  // Where they came from, for messages ("the truststore /etc/hadoop/conf/truststore.jks").
  std::string source;
};

struct Request {
  enum class Method { kGet, kPut, kPost, kDelete };
  Method method = Method::kGet;
  std::string url;
  // For kPut and kPost: the bytes to send; without one the body is empty.
  const UploadBody* body = nullptr;
  // A whole header line ("Authorization: Negotiate ..."), or empty.
  std::string authorization = {};
  // For https://: whom to trust; nullptr: the system's authorities.
  const Tls* tls = nullptr;
  // Only https:// may be followed (a redirect of an HTTPS client must not fall back to HTTP).
  bool https_only = false;
  // Who is asked, first in every error ("WebHDFS", "KMS").
  std::string_view service = "WebHDFS";
};

struct Response {
  long status = 0;
  std::string body;
  // The Location of a redirect; empty otherwise.
  std::string location;
};

// Performs the request. Errors start "<service> <op> <path>: <host:port>" ("WebHDFS ..."):
// kUnavailable when the server cannot be reached or the transfer broke, kDeadlineExceeded past the
// time limit, kInvalidArgument when an https:// server's certificate is not trusted or does not
// name the host (the message names what was trusted: the client's configuration is at fault, or
// someone is in the middle). With `connected`, it is set to whether a connection to the server was
// made at all: a request that never connected cannot have reached the server.
absl::StatusOr<Response> Perform(const Request& request, int timeout_ms, std::string_view op,
                                 std::string_view path, bool* connected = nullptr);

// An upload of `data` from memory; `offset` (the caller's, starting at 0) tracks what was sent.
UploadBody BodyOf(std::string_view data, size_t* offset);

}  // namespace tony::hadoop::http
