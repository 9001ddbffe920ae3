// WebHDFS's wire format, without IO: request URLs, the JSON answers, and the mapping of its
// RemoteExceptions and HTTP statuses onto Status codes (webhdfs.h, namespace webhdfs_internal).
// The HTTP transfers and the client are in webhdfs.cc.

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "hadoop/hdfs/webhdfs.h"

namespace tony::hadoop::webhdfs_internal {
namespace {

// How much of a body that is not a RemoteException goes into an error message.
constexpr size_t kMaxQuotedBodyBytes = 200;

std::string_view FirstLine(std::string_view text) {
  return text.substr(0, std::min(text.find('\n'), text.size()));
}

absl::StatusCode CodeForException(std::string_view exception) {
  if (exception == "FileNotFoundException") return absl::StatusCode::kNotFound;
  if (exception == "FileAlreadyExistsException") return absl::StatusCode::kAlreadyExists;
  if (exception == "AccessControlException" || exception == "SecurityException" ||
      exception == "AuthorizationException") {
    return absl::StatusCode::kPermissionDenied;
  }
  if (exception == "PathIsNotEmptyDirectoryException" ||
      exception == "ParentNotDirectoryException" || exception == "PathIsNotDirectoryException") {
    return absl::StatusCode::kFailedPrecondition;
  }
  // A file whose lease another writer holds (one that died mid-write included) can be written
  // again once the NameNode has recovered the lease: a wait, not a failure.
  if (exception == "SafeModeException" || exception == "StandbyException" ||
      exception == "RetriableException" || exception == "AlreadyBeingCreatedException" ||
      exception == "RecoveryInProgressException") {
    return absl::StatusCode::kUnavailable;
  }
  if (exception == "NSQuotaExceededException" || exception == "DSQuotaExceededException" ||
      exception == "QuotaExceededException") {
    return absl::StatusCode::kResourceExhausted;
  }
  if (exception == "IllegalArgumentException" || exception == "InvalidPathException") {
    return absl::StatusCode::kInvalidArgument;
  }
  return absl::StatusCode::kUnknown;
}

absl::StatusCode CodeForHttpStatus(long http_status) {
  switch (http_status) {
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 503:
      return absl::StatusCode::kUnavailable;
    default:
      return http_status >= 500 ? absl::StatusCode::kInternal : absl::StatusCode::kUnknown;
  }
}

absl::StatusOr<int64_t> IntField(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) {
    return absl::InvalidArgumentError(StrCat("field '", key, "' is missing or not an integer"));
  }
  return it->get<int64_t>();
}

absl::StatusOr<std::string> StringField(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return absl::InvalidArgumentError(StrCat("field '", key, "' is missing or not a string"));
  }
  return it->get<std::string>();
}

// WebHDFS sends permissions as an octal string ("755", "1777").
absl::StatusOr<int> ParsePermission(const nlohmann::json& object) {
  absl::StatusOr<std::string> text = StringField(object, "permission");
  if (!text.ok()) return text.status();
  if (text->empty() || text->size() > 4) {
    return absl::InvalidArgumentError(StrCat("permission '", *text, "' is not octal"));
  }
  int permission = 0;
  for (char c : *text) {
    if (c < '0' || c > '7') {
      return absl::InvalidArgumentError(StrCat("permission '", *text, "' is not octal"));
    }
    permission = permission * 8 + (c - '0');
  }
  return permission;
}

absl::StatusOr<FileStatus> FileStatusFromJson(const nlohmann::json& object) {
  if (!object.is_object()) return absl::InvalidArgumentError("a FileStatus is not an object");
  FileStatus status;
  absl::StatusOr<std::string> suffix = StringField(object, "pathSuffix");
  if (!suffix.ok()) return suffix.status();
  status.path_suffix = *std::move(suffix);
  absl::StatusOr<int64_t> length = IntField(object, "length");
  if (!length.ok()) return length.status();
  status.length = *length;
  absl::StatusOr<int64_t> mtime = IntField(object, "modificationTime");
  if (!mtime.ok()) return mtime.status();
  status.modification_time_ms = *mtime;
  absl::StatusOr<std::string> type = StringField(object, "type");
  if (!type.ok()) return type.status();
  if (*type != "FILE" && *type != "DIRECTORY" && *type != "SYMLINK") {
    return absl::InvalidArgumentError(StrCat("unknown type '", *type, "'"));
  }
  status.is_directory = *type == "DIRECTORY";
  absl::StatusOr<int> permission = ParsePermission(object);
  if (!permission.ok()) return permission.status();
  status.permission = *permission;
  absl::StatusOr<std::string> owner = StringField(object, "owner");
  if (!owner.ok()) return owner.status();
  status.owner = *std::move(owner);
  return status;
}

absl::StatusOr<nlohmann::json> ParseJsonObject(std::string_view body) {
  nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(
        StrCat("not a JSON object: '", FirstLine(body.substr(0, kMaxQuotedBodyBytes)), "'"));
  }
  return json;
}

}  // namespace

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

absl::StatusOr<std::string> BuildUrl(
    std::string_view namenode_http, std::string_view path, std::string_view op,
    std::string_view user, const std::vector<std::pair<std::string, std::string>>& params) {
  if (path.empty() || path.front() != '/') {
    return absl::InvalidArgumentError(StrCat("HDFS path '", path, "' is not absolute"));
  }
  std::string url = namenode_http.find("://") == std::string_view::npos
                        ? StrCat("http://", namenode_http, "/webhdfs/v1")
                        : StrCat(namenode_http, "/webhdfs/v1");
  bool any_component = false;
  for (std::string_view component : Split(path, '/')) {
    if (component.empty()) continue;
    if (component == "." || component == "..") {
      return absl::InvalidArgumentError(
          StrCat("HDFS path '", path, "' has a '", component, "' component"));
    }
    url += StrCat("/", PercentEncode(component));
    any_component = true;
  }
  if (!any_component) url += "/";
  url += StrCat("?op=", op);
  if (!user.empty()) url += StrCat("&user.name=", PercentEncode(user));
  for (const auto& [key, value] : params) url += StrCat("&", key, "=", PercentEncode(value));
  return url;
}

absl::StatusOr<FileStatus> ParseFileStatus(std::string_view body) {
  absl::StatusOr<nlohmann::json> json = ParseJsonObject(body);
  if (!json.ok()) return json.status();
  auto it = json->find("FileStatus");
  if (it == json->end()) return absl::InvalidArgumentError("no 'FileStatus' in the response");
  return FileStatusFromJson(*it);
}

absl::StatusOr<std::vector<FileStatus>> ParseListStatus(std::string_view body) {
  absl::StatusOr<nlohmann::json> json = ParseJsonObject(body);
  if (!json.ok()) return json.status();
  auto statuses = json->find("FileStatuses");
  if (statuses == json->end() || !statuses->is_object()) {
    return absl::InvalidArgumentError("no 'FileStatuses' object in the response");
  }
  auto array = statuses->find("FileStatus");
  if (array == statuses->end() || !array->is_array()) {
    return absl::InvalidArgumentError("no 'FileStatuses.FileStatus' array in the response");
  }
  std::vector<FileStatus> entries;
  entries.reserve(array->size());
  for (const nlohmann::json& element : *array) {
    absl::StatusOr<FileStatus> entry = FileStatusFromJson(element);
    if (!entry.ok()) {
      return absl::InvalidArgumentError(
          StrCat("entry ", entries.size(), ": ", entry.status().message()));
    }
    entries.push_back(*std::move(entry));
  }
  return entries;
}

absl::StatusOr<bool> ParseBoolean(std::string_view body) {
  absl::StatusOr<nlohmann::json> json = ParseJsonObject(body);
  if (!json.ok()) return json.status();
  auto it = json->find("boolean");
  if (it == json->end() || !it->is_boolean()) {
    return absl::InvalidArgumentError("no 'boolean' in the response");
  }
  return it->get<bool>();
}

absl::StatusOr<Token> ParseDelegationToken(std::string_view body) {
  absl::StatusOr<nlohmann::json> json = ParseJsonObject(body);
  if (!json.ok()) return json.status();
  auto it = json->find("Token");
  if (it == json->end() || !it->is_object()) {
    return absl::InvalidArgumentError("no 'Token' in the response");
  }
  absl::StatusOr<std::string> url_string = StringField(*it, "urlString");
  if (!url_string.ok()) return url_string.status();
  return DecodeTokenUrlString(*url_string);
}

absl::StatusOr<int64_t> ParseLong(std::string_view body) {
  absl::StatusOr<nlohmann::json> json = ParseJsonObject(body);
  if (!json.ok()) return json.status();
  auto it = json->find("long");
  if (it == json->end() || !it->is_number_integer()) {
    return absl::InvalidArgumentError("no 'long' in the response");
  }
  return it->get<int64_t>();
}

std::string RemoteExceptionName(std::string_view body) {
  nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return "";
  auto remote = json.find("RemoteException");
  if (remote == json.end() || !remote->is_object()) return "";
  absl::StatusOr<std::string> exception = StringField(*remote, "exception");
  return exception.ok() ? *exception : "";
}

absl::Status HttpErrorStatus(std::string_view op, std::string_view path, long http_status,
                             std::string_view body, std::string_view service) {
  std::string prefix = StrCat(service, " ", op, " ", path, ": HTTP ", http_status);
  nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object()) {
    auto remote = json.find("RemoteException");
    if (remote != json.end() && remote->is_object()) {
      absl::StatusOr<std::string> exception = StringField(*remote, "exception");
      absl::StatusOr<std::string> message = StringField(*remote, "message");
      if (exception.ok()) {
        absl::StatusCode code = CodeForException(*exception);
        if (code == absl::StatusCode::kUnknown) code = CodeForHttpStatus(http_status);
        // A DataNode's message carries the Java stack trace after its first line.
        std::string_view first_line = message.ok() ? FirstLine(*message) : std::string_view();
        return absl::Status(code, StrCat(prefix, " ", *exception, ": ", first_line));
      }
    }
  }
  std::string_view quoted = StripWhitespace(FirstLine(body.substr(0, kMaxQuotedBodyBytes)));
  return absl::Status(CodeForHttpStatus(http_status),
                      quoted.empty() ? prefix : StrCat(prefix, ": '", quoted, "'"));
}

}  // namespace tony::hadoop::webhdfs_internal
