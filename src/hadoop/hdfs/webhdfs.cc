#include "hadoop/hdfs/webhdfs.h"

#include <curl/curl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "common/strings.h"
#include "hadoop/http/http_transport.h"

namespace tony::hadoop {
namespace {

using http::BodyOf;
using http::Perform;
using http::Request;
using http::Response;
using http::UploadBody;
using webhdfs_internal::HttpErrorStatus;

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

// The redirect of a NameNode's answer to CREATE, APPEND or OPEN: the DataNode's URL.
absl::StatusOr<std::string> DataNodeLocation(const absl::StatusOr<Response>& response,
                                             std::string_view op, std::string_view path) {
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

// "<text>" without its leading "WebHDFS <op> <path>: ", for a list of each NameNode's answer.
std::string_view WithoutPrefix(std::string_view text, std::string_view op, std::string_view path) {
  const std::string prefix = StrCat("WebHDFS ", op, " ", path, ": ");
  return text.starts_with(prefix) ? text.substr(prefix.size()) : text;
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
    : namenode_http_(std::move(namenode_http)),
      https_(namenode_http_.starts_with(kHttpsPrefix)),
      namenodes_(ParseServerList(
          https_ ? namenode_http_.substr(std::string_view(kHttpsPrefix).size()) : namenode_http_)),
      auth_(std::move(auth)),
      timeout_ms_(timeout_ms) {}

void WebHdfsClient::SetTls(http::Tls tls) {
  tls_ = std::make_shared<const http::Tls>(std::move(tls));
}

size_t WebHdfsClient::NameNodeCount() const { return namenodes_.ok() ? namenodes_->size() : 1; }

void WebHdfsClient::SetFailoverPolicy(FailoverPolicy policy, std::function<void(int64_t)> sleep) {
  policy_ = policy;
  if (sleep) sleep_ = std::move(sleep);
}

absl::StatusOr<Response> WebHdfsClient::AtNameNode(
    Request::Method method, std::string_view path, std::string_view op,
    const std::vector<std::pair<std::string, std::string>>& params) const {
  if (!namenodes_.ok()) {
    return absl::InvalidArgumentError(StrCat("WebHDFS ", op, " ", path, ": the NameNodes '",
                                             namenode_http_,
                                             "': ", ToStd(namenodes_.status().message())));
  }
  const std::vector<ServerAddress>& targets = *namenodes_;
  // Each NameNode's last answer, for the message when none is active.
  std::vector<std::string> last(targets.size(), "not tried");
  const int rounds = std::max(1, policy_.rounds);
  int64_t pause_ms = policy_.sleep_base_ms;
  for (int round = 0; round < rounds; ++round) {
    if (round > 0) {
      if (sleep_) {
        sleep_(pause_ms);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      }
      pause_ms = std::min(policy_.sleep_max_ms, pause_ms * 2);
    }
    // Each NameNode once a round, from the one last found active (other threads may move it).
    const size_t first = current_->load() % targets.size();
    for (size_t tried = 0; tried < targets.size(); ++tried) {
      const size_t index = (first + tried) % targets.size();
      absl::StatusOr<Prepared> prepared =
          Prepare(targets[index].address.ToString(), path, op, params);
      if (!prepared.ok()) return prepared.status();
      bool connected = true;
      absl::StatusOr<Response> response =
          Perform({method, prepared->url, nullptr, prepared->authorization, &*tls_, https_},
                  timeout_ms_, op, path, &connected);
      // Without HA, the one NameNode's answer is the caller's, whatever it is.
      if (targets.size() == 1) return response;
      bool next = false;
      if (response.ok()) {
        const std::string exception = webhdfs_internal::RemoteExceptionName(response->body);
        next = response->status >= 400 &&
               (exception == "StandbyException" || exception == "RetriableException");
      } else {
        // A request that never reached the NameNode, or a read that may be repeated, goes on;
        // a change that may have been made does not (its outcome is unknown: the caller's).
        next = !connected || (method == Request::Method::kGet &&
                              (response.status().code() == absl::StatusCode::kUnavailable ||
                               response.status().code() == absl::StatusCode::kDeadlineExceeded));
      }
      if (!next) {
        current_->store(index);
        return response;
      }
      const absl::Status failed = response.ok()
                                      ? HttpErrorStatus(op, path, response->status, response->body)
                                      : response.status();
      last[index] = std::string(WithoutPrefix(ToStd(failed.message()), op, path));
    }
  }
  std::vector<std::string> each;
  each.reserve(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    each.push_back(StrCat(targets[i].Name(), ": ", last[i]));
  }
  return NoActiveServerError(StrCat("WebHDFS ", op, " ", path, ": no active NameNode among ",
                                    targets.size(), " after ", rounds,
                                    rounds == 1 ? " round: " : " rounds: ", Join(each, "; ")));
}

WebHdfsAuth WebHdfsClient::Auth() const {
  MutexLock lock(*auth_mu_);
  return auth_;
}

void WebHdfsClient::SetDelegationToken(Token token) {
  MutexLock lock(*auth_mu_);
  auth_.delegation = std::move(token);
}

absl::StatusOr<WebHdfsClient::Prepared> WebHdfsClient::Prepare(
    const std::string& namenode, std::string_view path, std::string_view op,
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
  absl::StatusOr<std::string> url = webhdfs_internal::BuildUrl(
      StrCat(https_ ? kHttpsPrefix : "http://", namenode), path, op, user, params);
  if (!url.ok()) return url.status();
  prepared.url = *std::move(url);
  if (spnego) {
    std::string_view host = namenode;
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
  absl::StatusOr<Response> response =
      AtNameNode(Request::Method::kGet, "/", "GETDELEGATIONTOKEN", {{"renewer", renewer}});
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("GETDELEGATIONTOKEN", "/", response->status, response->body);
  }
  absl::StatusOr<Token> token = webhdfs_internal::ParseDelegationToken(response->body);
  if (!token.ok()) return MalformedResponse("GETDELEGATIONTOKEN", "/", token.status());
  return token;
}

absl::StatusOr<int64_t> WebHdfsClient::RenewDelegationToken(const Token& token) {
  absl::StatusOr<Response> response = AtNameNode(Request::Method::kPut, "/", "RENEWDELEGATIONTOKEN",
                                                 {{"token", EncodeTokenUrlString(token)}});
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
  absl::StatusOr<Response> response =
      AtNameNode(Request::Method::kPut, path, "MKDIRS", {{"permission", octal}});
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
  return Upload(path, {{"overwrite", overwrite ? "true" : "false"}}, BodyOf(data, &offset));
}

absl::Status WebHdfsClient::Upload(const std::string& path,
                                   const std::vector<std::pair<std::string, std::string>>& params,
                                   const UploadBody& body) {
  absl::StatusOr<std::string> location =
      DataNodeLocation(AtNameNode(Request::Method::kPut, path, "CREATE", params), "CREATE", path);
  if (!location.ok()) return location.status();
  absl::StatusOr<Response> response = Perform(
      {Request::Method::kPut, *location, &body, "", &*tls_, https_}, timeout_ms_, "CREATE", path);
  if (!response.ok()) return response.status();
  if (response->status != 201 && response->status != 200) {
    return HttpErrorStatus("CREATE", path, response->status, response->body);
  }
  return absl::OkStatus();
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
  return Upload(path, {{"overwrite", overwrite ? "true" : "false"}, {"permission", octal}}, body);
}

absl::StatusOr<FileStatus> WebHdfsClient::GetFileStatus(const std::string& path) {
  absl::StatusOr<Response> response = AtNameNode(Request::Method::kGet, path, "GETFILESTATUS", {});
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
  absl::StatusOr<std::string> location =
      DataNodeLocation(AtNameNode(Request::Method::kPost, path, "APPEND", {}), "APPEND", path);
  if (!location.ok()) return location.status();
  absl::StatusOr<Response> response = Perform(
      {Request::Method::kPost, *location, &body, "", &*tls_, https_}, timeout_ms_, "APPEND", path);
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
  absl::StatusOr<std::string> location =
      DataNodeLocation(AtNameNode(Request::Method::kGet, path, "OPEN", range), "OPEN", path);
  if (!location.ok()) return location.status();
  absl::StatusOr<Response> response = Perform(
      {Request::Method::kGet, *location, nullptr, "", &*tls_, https_}, timeout_ms_, "OPEN", path);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("OPEN", path, response->status, response->body);
  }
  return std::move(response->body);
}

absl::StatusOr<std::vector<FileStatus>> WebHdfsClient::ListStatus(const std::string& path) {
  absl::StatusOr<Response> response = AtNameNode(Request::Method::kGet, path, "LISTSTATUS", {});
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
  absl::StatusOr<Response> response = AtNameNode(Request::Method::kDelete, path, "DELETE",
                                                 {{"recursive", recursive ? "true" : "false"}});
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
  absl::StatusOr<Response> response =
      AtNameNode(Request::Method::kPut, path, "RENAME", {{"destination", destination}});
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
  absl::StatusOr<Response> response =
      AtNameNode(Request::Method::kPut, path, "SETTIMES",
                 {{"modificationtime", std::to_string(time_ms)}, {"accesstime", "-1"}});
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return HttpErrorStatus("SETTIMES", path, response->status, response->body);
  }
  return absl::OkStatus();
}

}  // namespace tony::hadoop
