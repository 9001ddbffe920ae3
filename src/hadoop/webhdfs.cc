#include "hadoop/webhdfs.h"

#include <curl/curl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>

#include "common/strings.h"

namespace tony::hadoop {
namespace {

using webhdfs_internal::HttpErrorStatus;

constexpr int64_t kBytesPerMiB = int64_t{1024} * 1024;

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
struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

// The body of a PUT. `read` fills up to `size` bytes and returns how many (0 at the end); on a
// failure it sets `error` and returns CURL_READFUNC_ABORT.
struct UploadBody {
  int64_t size = 0;
  std::function<size_t(char* buffer, size_t size, absl::Status& error)> read;
};

struct HttpRequest {
  enum class Method { kGet, kPut, kPost, kDelete };
  Method method = Method::kGet;
  std::string url;
  // For kPut and kPost: the bytes to send; without one the body is empty.
  const UploadBody* body = nullptr;
  // A whole header line ("Authorization: Negotiate ..."), or empty.
  std::string authorization = {};
};

struct HttpResponse {
  long status = 0;
  std::string body;
  // The Location of a redirect; empty otherwise.
  std::string location;
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

// Performs one HTTP request without following redirects. An upload's time limit grows with its
// size (see the header); every other request is limited to timeout_ms.
absl::StatusOr<HttpResponse> Perform(const HttpRequest& request, int timeout_ms,
                                     std::string_view op, std::string_view path) {
  EnsureCurlInitialized();
  std::unique_ptr<CURL, CurlEasyDeleter> curl(curl_easy_init());
  if (curl == nullptr) {
    return absl::InternalError(StrCat("WebHDFS ", op, " ", path, ": curl_easy_init failed"));
  }
  HttpResponse response;
  TransferState state{&response.body, request.body, absl::OkStatus()};
  char error_buffer[CURL_ERROR_SIZE] = {0};
  CURL* handle = curl.get();
  curl_easy_setopt(handle, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  // The cluster is reached directly: an http_proxy meant for the outside world must not apply.
  curl_easy_setopt(handle, CURLOPT_PROXY, "");
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &OnResponseBytes);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &state);

  int64_t total_timeout_ms = timeout_ms;
  std::unique_ptr<curl_slist, CurlSlistDeleter> headers;
  switch (request.method) {
    case HttpRequest::Method::kGet:
      break;
    case HttpRequest::Method::kDelete:
      curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, "DELETE");
      break;
    case HttpRequest::Method::kPut:
    case HttpRequest::Method::kPost: {
      int64_t size = request.body == nullptr ? 0 : request.body->size;
      if (request.method == HttpRequest::Method::kPost) {
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
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(total_timeout_ms));

  CURLcode result = curl_easy_perform(handle);
  if (result != CURLE_OK) {
    std::string where = StrCat("WebHDFS ", op, " ", path, ": ", Authority(request.url));
    std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(result);
    switch (result) {
      case CURLE_ABORTED_BY_CALLBACK:
        if (!state.read_error.ok()) {
          return absl::Status(state.read_error.code(),
                              StrCat("WebHDFS ", op, " ", path, ": ", state.read_error.message()));
        }
        return absl::InternalError(StrCat(where, ": ", detail));
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

// The first step of CREATE and OPEN: the NameNode's redirect to a DataNode.
absl::StatusOr<std::string> DataNodeLocation(const HttpRequest& request, int timeout_ms,
                                             std::string_view op, std::string_view path) {
  absl::StatusOr<HttpResponse> response = Perform(request, timeout_ms, op, path);
  if (!response.ok()) return response.status();
  if (response->status < 300 || response->status >= 400) {
    return HttpErrorStatus(op, path, response->status, response->body);
  }
  if (response->location.empty()) {
    return absl::InternalError(StrCat("WebHDFS ", op, " ", path, ": HTTP ", response->status,
                                      " redirect without a Location"));
  }
  return response->location;
}

// An upload of `data` from memory; `offset` (the caller's, starting at 0) tracks what was sent.
UploadBody BodyOf(std::string_view data, size_t* offset) {
  return {static_cast<int64_t>(data.size()),
          [data, offset](char* buffer, size_t size, absl::Status&) {
            const size_t n = std::min(size, data.size() - *offset);
            std::memcpy(buffer, data.data() + *offset, n);
            *offset += n;
            return n;
          }};
}

// url: the NameNode's CREATE URL; authorization as HttpRequest's.
absl::Status UploadTo(const std::string& url, const std::string& authorization, int timeout_ms,
                      const std::string& path, const UploadBody& body) {
  absl::StatusOr<std::string> location = DataNodeLocation(
      {HttpRequest::Method::kPut, url, nullptr, authorization}, timeout_ms, "CREATE", path);
  if (!location.ok()) return location.status();
  absl::StatusOr<HttpResponse> response =
      Perform({HttpRequest::Method::kPut, *location, &body}, timeout_ms, "CREATE", path);
  if (!response.ok()) return response.status();
  if (response->status != 201 && response->status != 200) {
    return HttpErrorStatus("CREATE", path, response->status, response->body);
  }
  return absl::OkStatus();
}

absl::Status MalformedResponse(std::string_view op, std::string_view path,
                               const absl::Status& parse_error) {
  return absl::InternalError(
      StrCat("WebHDFS ", op, " ", path, ": unexpected response: ", parse_error.message()));
}

}  // namespace

WebHdfsClient::WebHdfsClient(std::string namenode_http, std::string user, int timeout_ms)
    : WebHdfsClient(std::move(namenode_http), WebHdfsAuth{std::move(user), nullptr, std::nullopt},
                    timeout_ms) {}

WebHdfsClient::WebHdfsClient(std::string namenode_http, WebHdfsAuth auth, int timeout_ms)
    : namenode_http_(std::move(namenode_http)), auth_(std::move(auth)), timeout_ms_(timeout_ms) {}

WebHdfsAuth WebHdfsClient::Auth() const {
  MutexLock lock(*auth_mu_);
  return auth_;
}

void WebHdfsClient::SetDelegationToken(Token token) {
  MutexLock lock(*auth_mu_);
  auth_.delegation = std::move(token);
}

absl::StatusOr<WebHdfsClient::Prepared> WebHdfsClient::Prepare(
    std::string_view path, std::string_view op,
    std::vector<std::pair<std::string, std::string>> params) const {
  const WebHdfsAuth auth = Auth();
  std::string user;
  bool spnego = false;
  if (auth.delegation.has_value()) {
    params.emplace_back("delegation", EncodeTokenUrlString(*auth.delegation));
  } else if (auth.kerberos != nullptr) {
    spnego = true;
  } else {
    user = auth.user;
  }
  Prepared prepared;
  absl::StatusOr<std::string> url =
      webhdfs_internal::BuildUrl(namenode_http_, path, op, user, params);
  if (!url.ok()) return url.status();
  prepared.url = *std::move(url);
  if (spnego) {
    std::string_view host = namenode_http_;
    if (size_t colon = host.rfind(':'); colon != std::string_view::npos) {
      host = host.substr(0, colon);
    }
    absl::StatusOr<std::string> token = SpnegoToken(*auth.kerberos, host);
    if (!token.ok()) {
      return absl::Status(token.status().code(),
                          StrCat("WebHDFS ", op, " ", path, ": ", ToStd(token.status().message())));
    }
    prepared.authorization = StrCat("Authorization: Negotiate ", *token);
  }
  return prepared;
}

absl::StatusOr<Token> WebHdfsClient::GetDelegationToken(const std::string& renewer) {
  if (Auth().kerberos == nullptr) {
    return absl::FailedPreconditionError(
        "WebHDFS GETDELEGATIONTOKEN: the NameNode gives tokens only to Kerberos logins");
  }
  absl::StatusOr<Prepared> request = Prepare("/", "GETDELEGATIONTOKEN", {{"renewer", renewer}});
  if (!request.ok()) return request.status();
  absl::StatusOr<HttpResponse> response =
      Perform({HttpRequest::Method::kGet, request->url, nullptr, request->authorization},
              timeout_ms_, "GETDELEGATIONTOKEN", "/");
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("GETDELEGATIONTOKEN", "/", response->status, response->body);
  }
  absl::StatusOr<Token> token = webhdfs_internal::ParseDelegationToken(response->body);
  if (!token.ok()) return MalformedResponse("GETDELEGATIONTOKEN", "/", token.status());
  return token;
}

absl::StatusOr<int64_t> WebHdfsClient::RenewDelegationToken(const Token& token) {
  absl::StatusOr<Prepared> request =
      Prepare("/", "RENEWDELEGATIONTOKEN", {{"token", EncodeTokenUrlString(token)}});
  if (!request.ok()) return request.status();
  absl::StatusOr<HttpResponse> response =
      Perform({HttpRequest::Method::kPut, request->url, nullptr, request->authorization},
              timeout_ms_, "RENEWDELEGATIONTOKEN", "/");
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("RENEWDELEGATIONTOKEN", "/", response->status, response->body);
  }
  absl::StatusOr<int64_t> expiry = webhdfs_internal::ParseLong(response->body);
  if (!expiry.ok()) return MalformedResponse("RENEWDELEGATIONTOKEN", "/", expiry.status());
  return expiry;
}

Token AsHdfsToken(Token token, std::string service) {
  token.kind = "HDFS_DELEGATION_TOKEN";
  token.service = std::move(service);
  return token;
}

absl::Status WebHdfsClient::Mkdirs(const std::string& path, int permission) {
  char octal[8];
  std::snprintf(octal, sizeof(octal), "%o", permission & 07777);
  absl::StatusOr<Prepared> url = Prepare(path, "MKDIRS", {{"permission", octal}});
  if (!url.ok()) return url.status();
  absl::StatusOr<HttpResponse> response =
      Perform({HttpRequest::Method::kPut, url->url, nullptr, url->authorization}, timeout_ms_,
              "MKDIRS", path);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("MKDIRS", path, response->status, response->body);
  }
  absl::StatusOr<bool> created = webhdfs_internal::ParseBoolean(response->body);
  if (!created.ok()) return MalformedResponse("MKDIRS", path, created.status());
  if (!*created) {
    return absl::FailedPreconditionError(
        StrCat("WebHDFS MKDIRS ", path, ": the NameNode did not create the directory"));
  }
  return absl::OkStatus();
}

absl::Status WebHdfsClient::Create(const std::string& path, std::string_view data, bool overwrite) {
  size_t offset = 0;
  const UploadBody body = BodyOf(data, &offset);
  absl::StatusOr<Prepared> url =
      Prepare(path, "CREATE", {{"overwrite", overwrite ? "true" : "false"}});
  if (!url.ok()) return url.status();
  return UploadTo(url->url, url->authorization, timeout_ms_, path, body);
}

absl::Status WebHdfsClient::CreateFromFile(const std::string& path, const std::string& local_file,
                                           bool overwrite, int permission) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(local_file.c_str(), "rb"));
  if (file == nullptr) {
    int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        StrCat("WebHDFS CREATE ", path, ": cannot open local file '", local_file,
                               "': ", std::strerror(error)));
  }
  struct stat info {};
  if (fstat(fileno(file.get()), &info) != 0 || !S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(
        StrCat("WebHDFS CREATE ", path, ": local '", local_file, "' is not a regular file"));
  }
  UploadBody body{static_cast<int64_t>(info.st_size),
                  [&file, &local_file](char* buffer, size_t size, absl::Status& error) -> size_t {
                    size_t n = std::fread(buffer, 1, size, file.get());
                    if (n == 0 && std::ferror(file.get())) {
                      error = absl::DataLossError(StrCat("cannot read local file '", local_file,
                                                         "': ", std::strerror(errno)));
                      return CURL_READFUNC_ABORT;
                    }
                    return n;
                  }};
  char octal[8];
  std::snprintf(octal, sizeof(octal), "%o", permission & 07777);
  absl::StatusOr<Prepared> url =
      Prepare(path, "CREATE", {{"overwrite", overwrite ? "true" : "false"}, {"permission", octal}});
  if (!url.ok()) return url.status();
  return UploadTo(url->url, url->authorization, timeout_ms_, path, body);
}

absl::StatusOr<FileStatus> WebHdfsClient::GetFileStatus(const std::string& path) {
  absl::StatusOr<Prepared> url = Prepare(path, "GETFILESTATUS", {});
  if (!url.ok()) return url.status();
  absl::StatusOr<HttpResponse> response =
      Perform({HttpRequest::Method::kGet, url->url, nullptr, url->authorization}, timeout_ms_,
              "GETFILESTATUS", path);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("GETFILESTATUS", path, response->status, response->body);
  }
  absl::StatusOr<FileStatus> status = webhdfs_internal::ParseFileStatus(response->body);
  if (!status.ok()) return MalformedResponse("GETFILESTATUS", path, status.status());
  return status;
}

absl::Status WebHdfsClient::Append(const std::string& path, std::string_view data) {
  size_t offset = 0;
  const UploadBody body = BodyOf(data, &offset);
  absl::StatusOr<Prepared> url = Prepare(path, "APPEND", {});
  if (!url.ok()) return url.status();
  absl::StatusOr<std::string> location =
      DataNodeLocation({HttpRequest::Method::kPost, url->url, nullptr, url->authorization},
                       timeout_ms_, "APPEND", path);
  if (!location.ok()) return location.status();
  absl::StatusOr<HttpResponse> response =
      Perform({HttpRequest::Method::kPost, *location, &body}, timeout_ms_, "APPEND", path);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("APPEND", path, response->status, response->body);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> WebHdfsClient::Open(const std::string& path) {
  return Open(path, 0, -1);
}

absl::StatusOr<std::string> WebHdfsClient::Open(const std::string& path, int64_t offset,
                                                int64_t length) {
  std::vector<std::pair<std::string, std::string>> range;
  if (offset > 0) {
    // The NameNode refuses an offset at or past the end: that is an empty read here.
    absl::StatusOr<FileStatus> status = GetFileStatus(path);
    if (!status.ok()) return status.status();
    if (offset >= status->length) return std::string();
    range.emplace_back("offset", std::to_string(offset));
  }
  if (length >= 0) range.emplace_back("length", std::to_string(length));
  absl::StatusOr<Prepared> url = Prepare(path, "OPEN", range);
  if (!url.ok()) return url.status();
  absl::StatusOr<std::string> location =
      DataNodeLocation({HttpRequest::Method::kGet, url->url, nullptr, url->authorization},
                       timeout_ms_, "OPEN", path);
  if (!location.ok()) return location.status();
  absl::StatusOr<HttpResponse> response =
      Perform({HttpRequest::Method::kGet, *location, nullptr}, timeout_ms_, "OPEN", path);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("OPEN", path, response->status, response->body);
  }
  return std::move(response->body);
}

absl::StatusOr<std::vector<FileStatus>> WebHdfsClient::ListStatus(const std::string& path) {
  absl::StatusOr<Prepared> url = Prepare(path, "LISTSTATUS", {});
  if (!url.ok()) return url.status();
  absl::StatusOr<HttpResponse> response =
      Perform({HttpRequest::Method::kGet, url->url, nullptr, url->authorization}, timeout_ms_,
              "LISTSTATUS", path);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("LISTSTATUS", path, response->status, response->body);
  }
  absl::StatusOr<std::vector<FileStatus>> entries =
      webhdfs_internal::ParseListStatus(response->body);
  if (!entries.ok()) return MalformedResponse("LISTSTATUS", path, entries.status());
  return entries;
}

absl::Status WebHdfsClient::Delete(const std::string& path, bool recursive) {
  absl::StatusOr<Prepared> url =
      Prepare(path, "DELETE", {{"recursive", recursive ? "true" : "false"}});
  if (!url.ok()) return url.status();
  absl::StatusOr<HttpResponse> response =
      Perform({HttpRequest::Method::kDelete, url->url, nullptr, url->authorization}, timeout_ms_,
              "DELETE", path);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("DELETE", path, response->status, response->body);
  }
  absl::StatusOr<bool> deleted = webhdfs_internal::ParseBoolean(response->body);
  if (!deleted.ok()) return MalformedResponse("DELETE", path, deleted.status());
  if (!*deleted) {
    return absl::NotFoundError(StrCat("WebHDFS DELETE ", path, ": no such file or directory"));
  }
  return absl::OkStatus();
}

absl::Status WebHdfsClient::Rename(const std::string& path, const std::string& destination) {
  absl::StatusOr<Prepared> url = Prepare(path, "RENAME", {{"destination", destination}});
  if (!url.ok()) return url.status();
  absl::StatusOr<HttpResponse> response =
      Perform({HttpRequest::Method::kPut, url->url, nullptr, url->authorization}, timeout_ms_,
              "RENAME", path);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("RENAME", path, response->status, response->body);
  }
  absl::StatusOr<bool> renamed = webhdfs_internal::ParseBoolean(response->body);
  if (!renamed.ok()) return MalformedResponse("RENAME", path, renamed.status());
  if (!*renamed) {
    return absl::FailedPreconditionError(
        StrCat("WebHDFS RENAME ", path, " to ", destination, ": the NameNode did not rename it"));
  }
  return absl::OkStatus();
}

absl::Status WebHdfsClient::SetModificationTime(const std::string& path, int64_t time_ms) {
  absl::StatusOr<Prepared> url = Prepare(
      path, "SETTIMES", {{"modificationtime", std::to_string(time_ms)}, {"accesstime", "-1"}});
  if (!url.ok()) return url.status();
  absl::StatusOr<HttpResponse> response =
      Perform({HttpRequest::Method::kPut, url->url, nullptr, url->authorization}, timeout_ms_,
              "SETTIMES", path);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("SETTIMES", path, response->status, response->body);
  }
  return absl::OkStatus();
}

}  // namespace tony::hadoop
