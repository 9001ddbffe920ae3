#include "hadoop/http/http_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>

#include "common/strings.h"

namespace tony::hadoop::http {
namespace {

constexpr int64_t kBytesPerMiB = int64_t{1024} * 1024;

// When the connection was made, in microseconds from the start; 0 if it never was.
curl_off_t ConnectTimeOf(CURL* handle) {
  curl_off_t microseconds = 0;
  curl_easy_getinfo(handle, CURLINFO_CONNECT_TIME_T, &microseconds);
  return microseconds;
}

void EnsureCurlInitialized() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlEasyDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct CurlSlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

struct TransferState {
  std::string* response_body;
  const UploadBody* upload;
  absl::Status read_error;
};

size_t OnResponseBytes(char* data, size_t size, size_t count, void* user) {
  static_cast<TransferState*>(user)->response_body->append(data, size * count);
  return size * count;
}

size_t OnUploadBytes(char* buffer, size_t size, size_t count, void* user) {
  auto* state = static_cast<TransferState*>(user);
  if (state->upload == nullptr) return 0;
  return state->upload->read(buffer, size * count, state->read_error);
}

// "host:port" of a URL, for messages.
std::string_view Authority(std::string_view url) {
  size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  size_t end = url.find_first_of("/?", start);
  return url.substr(start, end == std::string_view::npos ? url.size() - start : end - start);
}

}  // namespace

absl::StatusOr<Response> Perform(const Request& request, int timeout_ms, std::string_view op,
                                 std::string_view path, bool* connected) {
  EnsureCurlInitialized();
  std::unique_ptr<CURL, CurlEasyDeleter> curl(curl_easy_init());
  if (curl == nullptr) {
    return absl::InternalError(
        StrCat(request.service, " ", op, " ", path, ": curl_easy_init failed"));
  }
  Response response;
  TransferState state{&response.body, request.body, absl::OkStatus()};
  char error_buffer[CURL_ERROR_SIZE] = {0};
  CURL* handle = curl.get();
  curl_easy_setopt(handle, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
  if (request.https_only && !request.url.starts_with("https://")) {
    return absl::InvalidArgumentError(
        StrCat(request.service, " ", op, " ", path, ": ", Authority(request.url),
               ": an HTTPS client was sent to ", request.url.substr(0, request.url.find('?'))));
  }
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, request.https_only ? "https" : "http,https");
  // The cluster is reached directly: an http_proxy meant for the outside world must not apply.
  curl_easy_setopt(handle, CURLOPT_PROXY, "");
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &OnResponseBytes);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &state);

  int64_t total_timeout_ms = timeout_ms;
  std::unique_ptr<curl_slist, CurlSlistDeleter> headers;
  switch (request.method) {
    case Request::Method::kGet:
      break;
    case Request::Method::kDelete:
      curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, "DELETE");
      break;
    case Request::Method::kPut:
    case Request::Method::kPost: {
      int64_t size = request.body == nullptr ? 0 : request.body->size;
      if (request.method == Request::Method::kPost) {
        curl_easy_setopt(handle, CURLOPT_POST, 1L);
        curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(size));
      } else {
        curl_easy_setopt(handle, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(handle, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(size));
      }
      curl_easy_setopt(handle, CURLOPT_READFUNCTION, &OnUploadBytes);
      curl_easy_setopt(handle, CURLOPT_READDATA, &state);
      headers.reset(curl_slist_append(nullptr, "Content-Type: application/octet-stream"));
      if (size > 0) {
        total_timeout_ms += size * 1000 / kBytesPerMiB;
        curl_easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(handle, CURLOPT_LOW_SPEED_TIME,
                         static_cast<long>(std::max(1, (timeout_ms + 999) / 1000)));
      }
      break;
    }
  }
  if (!request.authorization.empty()) {
    curl_slist* list = curl_slist_append(headers.get(), request.authorization.c_str());
    (void)headers.release();
    headers.reset(list);
  }
  if (headers != nullptr) curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());
  // The curl_blob must outlive the transfer (curl copies it, but not before perform).
  curl_blob ca_blob{};
  if (request.tls != nullptr && !request.tls->ca_pem.empty()) {
    // Only these authorities, as a Java client with a truststore trusts only its truststore.
    ca_blob.data = const_cast<char*>(request.tls->ca_pem.data());
    ca_blob.len = request.tls->ca_pem.size();
    ca_blob.flags = CURL_BLOB_NOCOPY;
    curl_easy_setopt(handle, CURLOPT_CAINFO_BLOB, &ca_blob);
    curl_easy_setopt(handle, CURLOPT_CAPATH, nullptr);
  }
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(total_timeout_ms));

  CURLcode result = curl_easy_perform(handle);
  if (connected != nullptr) {
    *connected = result != CURLE_COULDNT_CONNECT && result != CURLE_COULDNT_RESOLVE_HOST &&
                 !(result == CURLE_OPERATION_TIMEDOUT && ConnectTimeOf(handle) == 0);
  }
  if (result != CURLE_OK) {
    std::string where = StrCat(request.service, " ", op, " ", path, ": ", Authority(request.url));
    std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(result);
    switch (result) {
      case CURLE_ABORTED_BY_CALLBACK:
        if (!state.read_error.ok()) {
          return absl::Status(state.read_error.code(), StrCat(request.service, " ", op, " ", path,
                                                              ": ", state.read_error.message()));
        }
        return absl::InternalError(StrCat(where, ": ", detail));
      case CURLE_PEER_FAILED_VERIFICATION: {
        const std::string trusted = request.tls != nullptr && !request.tls->ca_pem.empty()
                                        ? request.tls->source
                                        : "the system's certificate authorities";
        // A chain that verified, on a certificate that does not name the host.
        long verify = -1;
        curl_easy_getinfo(handle, CURLINFO_SSL_VERIFYRESULT, &verify);
        if (verify == 0) {
          return absl::InvalidArgumentError(StrCat(
              where, ": the server's TLS certificate does not name the host (", detail, ")"));
        }
        return absl::InvalidArgumentError(
            StrCat(where, ": the server's TLS certificate is not trusted by ", trusted, " (",
                   detail, ")"));
      }
      case CURLE_SSL_CACERT_BADFILE:
        return absl::InvalidArgumentError(StrCat(
            where, ": the certificates of ",
            request.tls != nullptr && !request.tls->ca_pem.empty() ? request.tls->source
                                                                   : std::string("the system"),
            " cannot be loaded (", detail, ")"));
      case CURLE_OPERATION_TIMEDOUT:
        return absl::DeadlineExceededError(StrCat(where, ": no complete response within ",
                                                  total_timeout_ms, " ms (", detail, ")"));
      default:
        return absl::UnavailableError(StrCat(where, ": ", detail));
    }
  }
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &response.status);
  if (response.status >= 300 && response.status < 400) {
    char* location = nullptr;
    curl_easy_getinfo(handle, CURLINFO_REDIRECT_URL, &location);
    if (location != nullptr) response.location = location;
  }
  return response;
}

UploadBody BodyOf(std::string_view data, size_t* offset) {
  return {static_cast<int64_t>(data.size()),
          [data, offset](char* buffer, size_t size, absl::Status&) {
            const size_t n = std::min(size, data.size() - *offset);
            std::memcpy(buffer, data.data() + *offset, n);
            *offset += n;
            return n;
          }};
}

}  // namespace tony::hadoop::http
