#include "hadoop/hdfs/webhdfs.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "common/strings.h"

namespace tony::hadoop {
namespace {

using namespace std::literals;
using webhdfs_internal::BuildUrl;
using webhdfs_internal::HttpErrorStatus;
using webhdfs_internal::ParseBoolean;
using webhdfs_internal::ParseFileStatus;
using webhdfs_internal::ParseListStatus;
using webhdfs_internal::PercentEncode;

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

// Bodies as Hadoop 3.4.2's NameNode and DataNode send them.
constexpr char kFileStatusBody[] =
    R"({"FileStatus":{"accessTime":1796210367342,"blockSize":16777216,"childrenNum":0,)"
    R"("fileId":16399,"group":"supergroup","length":3,"modificationTime":1796210367755,)"
    R"("owner":"root","pathSuffix":"","permission":"644","replication":1,"storagePolicy":0,)"
    R"("type":"FILE"}})";
constexpr char kListStatusBody[] =
    "{\"FileStatuses\":{\"FileStatus\":[\n"
    R"({"accessTime":0,"blockSize":0,"childrenNum":0,"fileId":16398,"group":"supergroup",)"
    R"("length":0,"modificationTime":1796210361349,"owner":"root","pathSuffix":"probe",)"
    R"("permission":"755","replication":0,"storagePolicy":0,"type":"DIRECTORY"},)"
    "\n"
    R"({"accessTime":1,"blockSize":134217728,"childrenNum":0,"fileId":16400,"group":"g",)"
    R"("length":3145728,"modificationTime":1796210369999,"owner":"alice","pathSuffix":"job.zip",)"
    R"("permission":"1777","replication":3,"storagePolicy":0,"type":"FILE"})"
    "\n]}}";
constexpr char kNotFoundBody[] =
    R"({"RemoteException":{"exception":"FileNotFoundException","javaClassName":)"
    R"("java.io.FileNotFoundException","message":"File does not exist: /tmp/nope"}})";
constexpr char kAlreadyExistsBody[] =
    R"({"RemoteException":{"exception":"FileAlreadyExistsException","javaClassName":)"
    R"("org.apache.hadoop.fs.FileAlreadyExistsException","message":"/tmp/f for client )"
    R"(127.0.0.1 already exists\n\tat org.apache.hadoop.hdfs.server.namenode.FSDirWriteFileOp)"
    R"(.startFile(FSDirWriteFileOp.java:388)\n"}})";

TEST(PercentEncodeTest, KeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(PercentEncode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(PercentEncode("a b/c+d%e&f=g?h#"), "a%20b%2Fc%2Bd%25e%26f%3Dg%3Fh%23");
  EXPECT_EQ(PercentEncode("\xC3\xA9"), "%C3%A9");
  EXPECT_EQ(PercentEncode(""), "");
}

TEST(BuildUrlTest, EncodesEachComponentAndTheQueryValues) {
  absl::StatusOr<std::string> url =
      BuildUrl("nn:9870", "/user/dr who/.tony/app 1/a+b%c.zip", "CREATE", "dr who",
               {{"overwrite", "true"}, {"permission", "755"}});
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(*url,
            "http://nn:9870/webhdfs/v1/user/dr%20who/.tony/app%201/a%2Bb%25c.zip"
            "?op=CREATE&user.name=dr%20who&overwrite=true&permission=755");
}

TEST(BuildUrlTest, DropsRepeatedAndTrailingSlashes) {
  EXPECT_EQ(*BuildUrl("nn:1", "//a///b/", "LISTSTATUS", "u", {}),
            "http://nn:1/webhdfs/v1/a/b?op=LISTSTATUS&user.name=u");
  EXPECT_EQ(*BuildUrl("nn:1", "/", "LISTSTATUS", "u", {}),
            "http://nn:1/webhdfs/v1/?op=LISTSTATUS&user.name=u");
}

TEST(BuildUrlTest, RejectsRelativePathsAndDotComponents) {
  for (const char* path : {"", "tmp/x", "/tmp/../etc", "/tmp/./x", "hdfs://nn/tmp"}) {
    absl::StatusOr<std::string> url = BuildUrl("nn:1", path, "OPEN", "u", {});
    EXPECT_EQ(url.status().code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_NE(Message(url.status()).find(StrCat("'", path, "'")), std::string::npos)
        << url.status();
  }
}

TEST(ParseFileStatusTest, ParsesAFile) {
  absl::StatusOr<FileStatus> status = ParseFileStatus(kFileStatusBody);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->path_suffix, "");
  EXPECT_EQ(status->length, 3);
  EXPECT_EQ(status->modification_time_ms, 1796210367755);
  EXPECT_FALSE(status->is_directory);
  EXPECT_EQ(status->permission, 0644);
  EXPECT_EQ(status->owner, "root");
}

TEST(ParseFileStatusTest, RejectsMalformedBodiesWithoutThrowing) {
  for (const char* body :
       {"", "not json", "[1,2]", R"({"FileStatus":[]})", R"({"Other":{}})",
        R"({"FileStatus":{"pathSuffix":"","length":"3","modificationTime":1,"type":"FILE",)"
        R"("permission":"644","owner":"o"}})",
        R"({"FileStatus":{"pathSuffix":"","length":3,"modificationTime":1,"type":"FILE",)"
        R"("permission":"648","owner":"o"}})",
        R"({"FileStatus":{"pathSuffix":"","length":3,"modificationTime":1,"type":"PIPE",)"
        R"("permission":"644","owner":"o"}})",
        R"({"FileStatus":{"pathSuffix":"","length":3,"type":"FILE","permission":"644",)"
        R"("owner":"o"}})",
        R"({"FileStatus":{"length":1)", "{\"FileStatus\":\xff}"}) {
    absl::StatusOr<FileStatus> status = ParseFileStatus(body);
    EXPECT_FALSE(status.ok()) << body;
  }
}

TEST(ParseListStatusTest, ParsesEntriesInOrder) {
  absl::StatusOr<std::vector<FileStatus>> entries = ParseListStatus(kListStatusBody);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].path_suffix, "probe");
  EXPECT_TRUE((*entries)[0].is_directory);
  EXPECT_EQ((*entries)[0].permission, 0755);
  EXPECT_EQ((*entries)[1].path_suffix, "job.zip");
  EXPECT_FALSE((*entries)[1].is_directory);
  EXPECT_EQ((*entries)[1].length, 3145728);
  EXPECT_EQ((*entries)[1].modification_time_ms, 1796210369999);
  EXPECT_EQ((*entries)[1].permission, 01777);
  EXPECT_EQ((*entries)[1].owner, "alice");
}

TEST(ParseListStatusTest, EmptyDirectoryAndMalformedBodies) {
  absl::StatusOr<std::vector<FileStatus>> empty =
      ParseListStatus(R"({"FileStatuses":{"FileStatus":[]}})");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());

  EXPECT_FALSE(ParseListStatus(R"({"FileStatuses":{}})").ok());
  EXPECT_FALSE(ParseListStatus(R"({"FileStatuses":[]})").ok());
  absl::StatusOr<std::vector<FileStatus>> bad_entry =
      ParseListStatus(R"({"FileStatuses":{"FileStatus":[{"pathSuffix":"x"}]}})");
  ASSERT_FALSE(bad_entry.ok());
  EXPECT_NE(Message(bad_entry.status()).find("entry 0"), std::string::npos) << bad_entry.status();
}

TEST(ParseBooleanTest, TrueFalseAndMalformed) {
  EXPECT_EQ(ParseBoolean(R"({"boolean":true})").value_or(false), true);
  EXPECT_EQ(ParseBoolean(R"({"boolean":false})").value_or(true), false);
  EXPECT_FALSE(ParseBoolean(R"({"boolean":"true"})").ok());
  EXPECT_FALSE(ParseBoolean("").ok());
}

TEST(BuildUrlTest, AnHttpsBaseKeepsItsScheme) {
  EXPECT_EQ(*BuildUrl("https://nn:9871", "/a", "GETFILESTATUS", "u", {}),
            "https://nn:9871/webhdfs/v1/a?op=GETFILESTATUS&user.name=u");
}

TEST(WebHdfsClientTest, AnHttpsServerListIsReadWithItsScheme) {
  WebHdfsClient https("https://nn1=10.0.0.1:9871,nn2=10.0.0.2:9871", "u");
  EXPECT_TRUE(https.https());
  EXPECT_EQ(https.NameNodeCount(), 2u);
  WebHdfsClient plain("10.0.0.1:9870", "u");
  EXPECT_FALSE(plain.https());
  EXPECT_EQ(plain.NameNodeCount(), 1u);
}

TEST(BuildUrlTest, NoUserNameWithoutAUser) {
  absl::StatusOr<std::string> url =
      BuildUrl("nn:9870", "/", "GETDELEGATIONTOKEN", "", {{"renewer", "rm/host@R"}});
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(*url, "http://nn:9870/webhdfs/v1/?op=GETDELEGATIONTOKEN&renewer=rm%2Fhost%40R");
}

TEST(ParseDelegationTokenTest, DecodesTheUrlStringAndRejectsMalformedBodies) {
  Token token{"\x00\x05alice"s, "\xfe\xff\x01pw"s, "WEBHDFS delegation", "127.0.0.1:8020"};
  absl::StatusOr<Token> parsed = webhdfs_internal::ParseDelegationToken(
      StrCat(R"({"Token":{"urlString":")", EncodeTokenUrlString(token), R"("}})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, token);
  EXPECT_FALSE(webhdfs_internal::ParseDelegationToken(R"({"Token":{}})").ok());
  EXPECT_FALSE(webhdfs_internal::ParseDelegationToken(R"({"Token":{"urlString":"@@"}})").ok());
  EXPECT_FALSE(webhdfs_internal::ParseDelegationToken("not json").ok());
  EXPECT_EQ(*webhdfs_internal::ParseLong(R"({"long":1796300000000})"), 1796300000000);
  EXPECT_FALSE(webhdfs_internal::ParseLong(R"({"long":"x"})").ok());
}

TEST(HttpErrorStatusTest, NamesThePathStatusAndRemoteException) {
  absl::Status status = HttpErrorStatus("GETFILESTATUS", "/tmp/nope", 404, kNotFoundBody);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Message(status),
            "WebHDFS GETFILESTATUS /tmp/nope: HTTP 404 FileNotFoundException: File does not "
            "exist: /tmp/nope");
}

TEST(HttpErrorStatusTest, DropsTheJavaStackTrace) {
  absl::Status status = HttpErrorStatus("CREATE", "/tmp/f", 403, kAlreadyExistsBody);
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Message(status),
            "WebHDFS CREATE /tmp/f: HTTP 403 FileAlreadyExistsException: /tmp/f for client "
            "127.0.0.1 already exists");
}

TEST(HttpErrorStatusTest, CodesFromExceptionThenHttpStatus) {
  auto body = [](const char* exception) {
    return StrCat(R"({"RemoteException":{"exception":")", exception, R"(","message":"m"}})");
  };
  EXPECT_EQ(HttpErrorStatus("X", "/p", 403, body("AccessControlException")).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(HttpErrorStatus("X", "/p", 403, body("PathIsNotEmptyDirectoryException")).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(HttpErrorStatus("X", "/p", 403, body("SafeModeException")).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(HttpErrorStatus("X", "/p", 403, body("StandbyException")).code(),
            absl::StatusCode::kUnavailable);
  // A lease another writer holds is waited out, as the history writer does.
  EXPECT_EQ(HttpErrorStatus("X", "/p", 403, body("AlreadyBeingCreatedException")).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(HttpErrorStatus("X", "/p", 403, body("RecoveryInProgressException")).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(HttpErrorStatus("X", "/p", 403, body("DSQuotaExceededException")).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(HttpErrorStatus("X", "/p", 400, body("IllegalArgumentException")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HttpErrorStatus("X", "/p", 500, body("NullPointerException")).code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(HttpErrorStatus("X", "/p", 401, "").code(), absl::StatusCode::kUnauthenticated);
}

TEST(HttpErrorStatusTest, QuotesABodyThatIsNotARemoteException) {
  absl::Status status = HttpErrorStatus(
      "OPEN", "/p", 502, StrCat("<html>Bad gateway</html>\n", std::string(500, 'x')));
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(Message(status), "WebHDFS OPEN /p: HTTP 502: '<html>Bad gateway</html>'");
  EXPECT_EQ(Message(HttpErrorStatus("OPEN", "/p", 404, "")), "WebHDFS OPEN /p: HTTP 404");
}

// A loopback TCP socket bound to port 0; listening only if asked (then it never accepts, so a
// client's connection succeeds and its request is never answered).
class LoopbackSocket {
 public:
  explicit LoopbackSocket(bool listening) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), length), 0);
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length), 0);
    port_ = ntohs(address.sin_port);
    if (listening) {
      EXPECT_EQ(listen(fd_, 8), 0);
    }
  }
  ~LoopbackSocket() { close(fd_); }
  [[nodiscard]] std::string address() const { return StrCat("127.0.0.1:", port_); }

 private:
  int fd_;
  int port_ = 0;
};

TEST(WebHdfsClientTest, ClosedPortIsUnavailableQuickly) {
  LoopbackSocket bound_not_listening(/*listening=*/false);
  WebHdfsClient client(bound_not_listening.address(), "alice", /*timeout_ms=*/2000);
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<FileStatus> status = client.GetFileStatus("/tmp/x");
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnavailable) << status.status();
  EXPECT_NE(Message(status.status()).find("/tmp/x"), std::string::npos) << status.status();
  EXPECT_NE(Message(status.status()).find(bound_not_listening.address()), std::string::npos)
      << status.status();
  EXPECT_EQ(client.Create("/tmp/x", "data").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(client.Open("/tmp/x").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(client.Delete("/tmp/x", true).code(), absl::StatusCode::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(WebHdfsClientTest, SilentServerTimesOutWithinTheLimit) {
  LoopbackSocket never_answers(/*listening=*/true);
  WebHdfsClient client(never_answers.address(), "alice", /*timeout_ms=*/300);
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<FileStatus>> entries = client.ListStatus("/tmp");
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(entries.status().code(), absl::StatusCode::kDeadlineExceeded) << entries.status();
  EXPECT_NE(Message(entries.status()).find("LISTSTATUS /tmp"), std::string::npos)
      << entries.status();
  EXPECT_GE(elapsed, 250ms);
  EXPECT_LT(elapsed, 5s);
}

TEST(WebHdfsClientTest, InvalidPathsFailBeforeAnyRequest) {
  WebHdfsClient client("127.0.0.1:1", "alice", 1000);
  EXPECT_EQ(client.Mkdirs("relative").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client.GetFileStatus("/a/../b").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WebHdfsClientTest, MissingLocalFileNamesIt) {
  WebHdfsClient client("127.0.0.1:1", "alice", 1000);
  absl::Status status = client.CreateFromFile("/tmp/x", "/nonexistent/tony-local-file");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_NE(Message(status).find("/nonexistent/tony-local-file"), std::string::npos) << status;
}

}  // namespace
}  // namespace tony::hadoop
