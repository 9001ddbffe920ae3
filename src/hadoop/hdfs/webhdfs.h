#pragma once
// A WebHDFS REST client (HTTP to the NameNode's dfs.namenode.http-address, then to the DataNode
// it redirects to), over libcurl. tony stages job files on HDFS with it without a JVM.
//
// Authentication (WebHdfsAuth): SIMPLE (user.name=), Kerberos (SPNEGO: every NameNode request
// carries "Authorization: Negotiate", so no request is answered 401 and sent twice), or a
// delegation token (delegation=, what the AM and executors use on a secure cluster). The
// NameNode's redirect to a DataNode carries its own delegation token; it gets no SPNEGO header.
//
// Paths are absolute HDFS paths ("/user/alice/.tony/app_1/job.zip"), not URIs; a relative path or
// one with a "." or ".." component is kInvalidArgument.
//
// Errors name the operation, the path and the HTTP status, and carry the RemoteException's
// `exception` and the first line of its `message` from WebHDFS's JSON error body. Codes:
// FileNotFoundException kNotFound, FileAlreadyExistsException kAlreadyExists,
// AccessControlException kPermissionDenied, SafeModeException/StandbyException/RetriableException
// kUnavailable, a NameNode or DataNode that cannot be reached kUnavailable, a request that ran
// past its time limit kDeadlineExceeded.
//
// Time limits: every NameNode request, and Open's DataNode read, is limited to timeout_ms in all
// (connecting included). An upload to a DataNode may take timeout_ms plus one second per MiB of
// data, and is aborted sooner if no byte moves for timeout_ms.
//
// Proxies: requests go directly to the cluster; http_proxy and similar variables are ignored.
//
// NameNode HA: given an HA nameservice's NameNodes ("nn1=host:port,nn2=host:port"), each NameNode
// request goes to the one last found active. A StandbyException or RetriableException answer, or a
// NameNode that cannot be connected to, sends the request to the next, round after round with a
// growing pause (FailoverPolicy, as for ResourceManagers); a read (GET) also moves on when its
// connection breaks or times out. A change whose connection broke is not repeated: whether the
// NameNode made it is unknown, so its error is the caller's. When no NameNode takes the request,
// the error (kUnavailable) names each NameNode and its last answer. Requests to DataNodes are not
// failed over.
//
// HTTPS (swebhdfs): given NameNodes behind "https://" ("https://host:port", or
// "https://nn1=host:port,nn2=host:port"), every request is made over TLS, the DataNodes' too (the
// NameNode redirects to their HTTPS ports), trusting the authorities of SetTls (else the
// system's). A certificate that is not trusted is kInvalidArgument, naming what was trusted.
//
// Threads: all methods are safe to call from any thread, concurrently; each call uses its own
// connections and blocks the calling thread until it completes.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "hadoop/common/credentials.h"
#include "hadoop/http/http_transport.h"
#include "hadoop/ipc/failover.h"
#include "hadoop/sasl/kerberos.h"

namespace tony::hadoop {

// One entry of GETFILESTATUS or LISTSTATUS. YARN's LocalResource for a file takes `length` as its
// size and `modification_time_ms` as its timestamp; the NodeManager refuses to localize a file
// whose HDFS length or modification time differs from them.
struct FileStatus {
  // The entry's name within the listed directory; empty for GETFILESTATUS and for LISTSTATUS of a
  // file.
  std::string path_suffix;
  int64_t length = 0;
  // Milliseconds since the Unix epoch.
  int64_t modification_time_ms = 0;
  bool is_directory = false;
  // Permission bits, e.g. 0755 (sticky bit 01000 included).
  int permission = 0;
  std::string owner;
};

// How WebHDFS requests authenticate: with a delegation token if there is one, else with Kerberos
// if there are credentials, else as `user` (SIMPLE).
struct WebHdfsAuth {
  std::string user;
  std::shared_ptr<const KerberosCredentials> kerberos;
  std::optional<Token> delegation;
};

class WebHdfsClient {
 public:
  // namenode_http: "host:port" of the NameNode's HTTP address, or an HA nameservice's NameNodes
  // as FormatServerList writes them ("nn1=host:port,nn2=host:port"; see nameservice.h), either
  // behind "https://" for HTTPS (NameService::WebHdfsServers writes it); a text that is none of
  // these fails every call with kInvalidArgument. user: sent as user.name (SIMPLE
  // authentication); must not be empty.
  WebHdfsClient(std::string namenode_http, std::string user, int timeout_ms = 30000);
  WebHdfsClient(std::string namenode_http, WebHdfsAuth auth, int timeout_ms = 30000);

  // An HDFS delegation token of the authenticated user that `renewer` (a principal or short name;
  // YARN's ResourceManager, so that it renews the token) may renew. Needs Kerberos: the NameNode
  // issues tokens only to Kerberos-authenticated callers. The token comes back as WebHDFS labels
  // it; see AsHdfsToken.
  [[nodiscard]] absl::StatusOr<Token> GetDelegationToken(const std::string& renewer);
  // Asks the NameNode to extend the token's life (the caller must be its renewer); returns the
  // new expiry time in ms since the epoch.
  [[nodiscard]] absl::StatusOr<int64_t> RenewDelegationToken(const Token& token);

  // Creates the directory, and any missing parents, with exactly `permission` (WebHDFS applies no
  // umask). An existing directory is success and keeps its permission.
  [[nodiscard]] absl::Status Mkdirs(const std::string& path, int permission = 0755);

  // Writes `data` as the whole file, creating missing parents. With overwrite false an existing
  // file is kAlreadyExists.
  [[nodiscard]] absl::Status Create(const std::string& path, std::string_view data,
                                    bool overwrite = true);

  // As Create, with the contents of the local file, streamed (never held in memory whole), and
  // exactly `permission` (0644 is WebHDFS's own default, which the caller narrows for secrets). A
  // local file that cannot be opened is kNotFound or another error naming it.
  [[nodiscard]] absl::Status CreateFromFile(const std::string& path, const std::string& local_file,
                                            bool overwrite = true, int permission = 0644);

  // kNotFound for a missing path.
  [[nodiscard]] absl::StatusOr<FileStatus> GetFileStatus(const std::string& path);

  // The whole file, held in memory: for small files. kNotFound for a missing path.
  [[nodiscard]] absl::StatusOr<std::string> Open(const std::string& path);
  // At most `length` bytes (all, if negative) from `offset`; fewer, or none, past the end.
  [[nodiscard]] absl::StatusOr<std::string> Open(const std::string& path, int64_t offset,
                                                 int64_t length);

  // Appends `data` to an existing file (kNotFound if it is missing).
  [[nodiscard]] absl::Status Append(const std::string& path, std::string_view data);

  // The entries of a directory in the NameNode's order (by name), or the file itself for a file.
  // kNotFound for a missing path.
  [[nodiscard]] absl::StatusOr<std::vector<FileStatus>> ListStatus(const std::string& path);

  // Deletes a file or directory; a non-empty directory needs `recursive` (else
  // kFailedPrecondition). A missing path is kNotFound, which cleanup code may ignore.
  [[nodiscard]] absl::Status Delete(const std::string& path, bool recursive);

  // Renames `path` to `destination` (an absolute path), atomically, as HDFS does. kNotFound when
  // `path` is missing; kFailedPrecondition when the NameNode did not rename (e.g. `destination`
  // exists).
  [[nodiscard]] absl::Status Rename(const std::string& path, const std::string& destination);

  // Sets the modification time of `path` (ms since the epoch); its access time is unchanged.
  [[nodiscard]] absl::Status SetModificationTime(const std::string& path, int64_t time_ms);

  // The NameNodes as given to the constructor.
  const std::string& namenode_http() const { return namenode_http_; }
  // How many NameNodes it was given (1 for a text it cannot read).
  size_t NameNodeCount() const;
  // Whether it speaks HTTPS.
  bool https() const { return https_; }
  // For HTTPS: the authorities to trust instead of the system's (truststore.h's ClientTls). Call
  // before sharing the client.
  void SetTls(http::Tls tls);
  // Authenticates the calls that follow with this token (a fresh one, for a long job).
  void SetDelegationToken(Token token);
  // How long to keep looking for an active NameNode (FailoverPolicy's defaults otherwise), and how
  // to pause between rounds (tests pass one that does not sleep). Call before sharing the client.
  void SetFailoverPolicy(FailoverPolicy policy, std::function<void(int64_t ms)> sleep = nullptr);

 private:
  // A NameNode request's URL, with this client's authentication parameter, and its
  // "Authorization: Negotiate ..." header line with Kerberos (else empty).
  struct Prepared {
    std::string url;
    std::string authorization;
  };
  absl::StatusOr<Prepared> Prepare(const std::string& namenode, std::string_view path,
                                   std::string_view op,
                                   std::vector<std::pair<std::string, std::string>> params) const;
  // The active NameNode's answer to one request (see "NameNode HA" above).
  absl::StatusOr<http::Response> AtNameNode(
      http::Request::Method method, std::string_view path, std::string_view op,
      const std::vector<std::pair<std::string, std::string>>& params) const;
  // CREATE: the NameNode's redirect, then the body to the DataNode.
  absl::Status Upload(const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& params,
                      const http::UploadBody& body);

  WebHdfsAuth Auth() const;

  static constexpr char kHttpsPrefix[] = "https://";
  const std::string namenode_http_;
  const bool https_;
  const absl::StatusOr<std::vector<ServerAddress>> namenodes_;
  // Shared with the client's copies; never null.
  std::shared_ptr<const http::Tls> tls_ = std::make_shared<const http::Tls>();
  // The index in namenodes_ of the NameNode last found active (or the next to try); behind a
  // pointer for the same reason as auth_mu_.
  std::unique_ptr<std::atomic<size_t>> current_ = std::make_unique<std::atomic<size_t>>(0);
  FailoverPolicy policy_;
  std::function<void(int64_t ms)> sleep_;
  // Behind a pointer, so that a client can be returned by value before it is shared.
  std::unique_ptr<Mutex> auth_mu_ = std::make_unique<Mutex>();
  WebHdfsAuth auth_ TONY_GUARDED_BY(*auth_mu_);
  const int timeout_ms_;
};

// The token as Hadoop RPC clients of HDFS look it up (kind HDFS_DELEGATION_TOKEN, service
// "<ip>:<port>" of the NameNode's RPC address), as a client puts it in a job's credentials.
Token AsHdfsToken(Token token, std::string service);

// The pure parts of the client, exposed for tests.
namespace webhdfs_internal {

// Percent-encodes every byte except RFC 3986's unreserved characters (A-Z a-z 0-9 - . _ ~).
std::string PercentEncode(std::string_view text);

// "http://<namenode_http>/webhdfs/v1<path>?op=<op>&user.name=<user>[&key=value...]" (with no
// "http://" added when namenode_http has a scheme: "https://host:port") with each
// path component and each query value percent-encoded; repeated and trailing slashes dropped.
// kInvalidArgument for a relative path or a "." or ".." component.
absl::StatusOr<std::string> BuildUrl(
    std::string_view namenode_http, std::string_view path, std::string_view op,
    std::string_view user, const std::vector<std::pair<std::string, std::string>>& params);

// {"FileStatus": {...}} from GETFILESTATUS.
absl::StatusOr<FileStatus> ParseFileStatus(std::string_view body);

// {"FileStatuses": {"FileStatus": [...]}} from LISTSTATUS.
absl::StatusOr<std::vector<FileStatus>> ParseListStatus(std::string_view body);

// {"Token": {"urlString": "..."}} from GETDELEGATIONTOKEN.
absl::StatusOr<Token> ParseDelegationToken(std::string_view body);

// {"long": N} from RENEWDELEGATIONTOKEN.
absl::StatusOr<int64_t> ParseLong(std::string_view body);

// {"boolean": true|false} from MKDIRS and DELETE.
absl::StatusOr<bool> ParseBoolean(std::string_view body);

// The exception's short name in a RemoteException body ("StandbyException"); empty if the body is
// not one.
std::string RemoteExceptionName(std::string_view body);

// The error for an HTTP response that is not the expected one: "<service> <op> <path>: HTTP
// <status> <exception>: <first line of message>", coded from the exception (else from the HTTP
// status). A body that is not a RemoteException is quoted, shortened, instead. The KMS answers
// in WebHDFS's form too.
absl::Status HttpErrorStatus(std::string_view op, std::string_view path, long http_status,
                             std::string_view body, std::string_view service = "WebHDFS");

}  // namespace webhdfs_internal

}  // namespace tony::hadoop
