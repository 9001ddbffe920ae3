// WebHdfsClient against an HA nameservice's NameNodes that are standby, down or slow: fake
// NameNodes on loopback that answer as Hadoop 3.4.2's do.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "common/strings.h"
#include "hadoop/hdfs/webhdfs.h"

namespace tony::hadoop {
namespace {

using namespace std::literals;

constexpr char kStandbyBody[] =
    R"({"RemoteException":{"exception":"StandbyException","javaClassName":)"
    R"("org.apache.hadoop.ipc.StandbyException","message":"Operation category READ is not )"
    R"(supported in state standby. Visit https://s.apache.org/sbnn-error"}})";
constexpr char kFileStatusBody[] =
    R"({"FileStatus":{"accessTime":0,"blockSize":0,"childrenNum":0,"fileId":16386,)"
    R"("group":"supergroup","length":0,"modificationTime":1796210361349,"owner":"alice",)"
    R"("pathSuffix":"","permission":"755","replication":0,"storagePolicy":0,)"
    R"("type":"DIRECTORY"}})";
constexpr char kTrueBody[] = R"({"boolean":true})";

// A NameNode's HTTP endpoint on loopback, port 0: answers every request with one status and body
// (kAnswer), or accepts and never answers (kSilent), or refuses connections (kDown).
class FakeNameNode {
 public:
  enum class Mode { kAnswer, kSilent, kDown };
  FakeNameNode(Mode mode, int status = 200, std::string body = "")
      : mode_(mode), status_(status), body_(std::move(body)), fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), length), 0);
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length), 0);
    port_ = ntohs(address.sin_port);
    if (mode_ == Mode::kDown) return;  // bound, not listening: connections are refused
    EXPECT_EQ(listen(fd_, 16), 0);
    EXPECT_EQ(pipe(stop_), 0);
    server_ = std::thread([this] { Serve(); });
  }
  ~FakeNameNode() {
    if (server_.joinable()) {
      (void)!write(stop_[1], "x", 1);
      server_.join();
      close(stop_[0]);
      close(stop_[1]);
    }
    for (int fd : held_) close(fd);
    close(fd_);
  }

  std::string address() const { return StrCat("127.0.0.1:", port_); }
  // The request lines received ("GET /webhdfs/v1/tmp?op=GETFILESTATUS&user.name=alice HTTP/1.1").
  std::vector<std::string> requests() const {
    MutexLock lock(mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (true) {
      pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (poll(fds, 2, -1) < 0 || (fds[1].revents & POLLIN)) return;
      const int client = accept(fd_, nullptr, nullptr);
      if (client < 0) continue;
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = read(client, buffer, sizeof(buffer));
        if (n <= 0) break;
        request.append(buffer, static_cast<size_t>(n));
      }
      {
        MutexLock lock(mu_);
        requests_.push_back(request.substr(0, request.find("\r\n")));
      }
      if (mode_ == Mode::kSilent) {
        held_.push_back(client);  // answered never; closed at the end
        continue;
      }
      const std::string response =
          StrCat("HTTP/1.1 ", status_, status_ == 200 ? " OK" : " Forbidden",
                 "\r\nContent-Type: application/json\r\nContent-Length: ", body_.size(),
                 "\r\nConnection: close\r\n\r\n", body_);
      (void)!write(client, response.data(), response.size());
      close(client);
    }
  }

  const Mode mode_;
  const int status_;
  const std::string body_;
  const int fd_;
  int port_ = 0;
  int stop_[2] = {-1, -1};
  std::thread server_;
  std::vector<int> held_;  // the server thread's, then the destructor's
  mutable Mutex mu_;
  std::vector<std::string> requests_ TONY_GUARDED_BY(mu_);
};

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

// A client over `namenodes` whose pauses between rounds are only counted.
struct Client {
  Client(const std::vector<const FakeNameNode*>& namenodes, int rounds, int timeout_ms = 2000)
      : client(List(namenodes), "alice", timeout_ms) {
    FailoverPolicy policy;
    policy.rounds = rounds;
    policy.sleep_base_ms = 500;
    policy.sleep_max_ms = 700;
    client.SetFailoverPolicy(policy, [this](int64_t ms) { pauses.push_back(ms); });
  }
  static std::string List(const std::vector<const FakeNameNode*>& namenodes) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < namenodes.size(); ++i) {
      parts.push_back(StrCat("nn", i + 1, "=", namenodes[i]->address()));
    }
    return Join(parts, ",");
  }
  WebHdfsClient client;
  std::vector<int64_t> pauses;
};

TEST(WebHdfsFailoverTest, StandbyAnswerMovesOnAndTheActiveOneIsKept) {
  FakeNameNode standby(FakeNameNode::Mode::kAnswer, 403, kStandbyBody);
  FakeNameNode active(FakeNameNode::Mode::kAnswer, 200, kFileStatusBody);
  Client c({&standby, &active}, 3);
  absl::StatusOr<FileStatus> status = c.client.GetFileStatus("/user/alice");
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_TRUE(status->is_directory);
  // The next call goes straight to the NameNode found active.
  ASSERT_TRUE(c.client.GetFileStatus("/user/alice").ok());
  EXPECT_EQ(standby.requests().size(), 1u);
  EXPECT_EQ(active.requests().size(), 2u);
  EXPECT_TRUE(c.pauses.empty()) << "the second NameNode of the first round answered";
}

TEST(WebHdfsFailoverTest, NameNodeThatIsDownMovesOnForChangesToo) {
  FakeNameNode down(FakeNameNode::Mode::kDown);
  FakeNameNode active(FakeNameNode::Mode::kAnswer, 200, kTrueBody);
  Client c({&down, &active}, 2);
  EXPECT_TRUE(c.client.Mkdirs("/user/alice/.tony").ok());
  ASSERT_EQ(active.requests().size(), 1u);
  EXPECT_TRUE(active.requests()[0].starts_with("PUT /webhdfs/v1/user/alice/.tony?op=MKDIRS"))
      << active.requests()[0];
}

TEST(WebHdfsFailoverTest, EveryNameNodeStandbyNamesEachAfterTheRounds) {
  FakeNameNode nn1(FakeNameNode::Mode::kAnswer, 403, kStandbyBody);
  FakeNameNode nn2(FakeNameNode::Mode::kDown);
  Client c({&nn1, &nn2}, 3);
  absl::StatusOr<std::vector<FileStatus>> listed = c.client.ListStatus("/tmp");
  EXPECT_EQ(listed.status().code(), absl::StatusCode::kUnavailable);
  const std::string message = Message(listed.status());
  EXPECT_TRUE(message.starts_with(
      "WebHDFS LISTSTATUS /tmp: no active NameNode among 2 after 3 rounds: nn1 (" + nn1.address() +
      "): HTTP 403 StandbyException: Operation category READ is not supported "
      "in state standby."))
      << message;
  EXPECT_NE(message.find("; nn2 (" + nn2.address() + "): " + nn2.address() + ": "),
            std::string::npos)
      << message;
  EXPECT_EQ(nn1.requests().size(), 3u);
  // A growing pause between rounds, at most the maximum.
  EXPECT_EQ(c.pauses, (std::vector<int64_t>{500, 700}));
}

TEST(WebHdfsFailoverTest, SlowNameNodeMovesOnForAReadButNotForAChange) {
  FakeNameNode slow(FakeNameNode::Mode::kSilent);
  FakeNameNode active(FakeNameNode::Mode::kAnswer, 200, kFileStatusBody);
  Client c({&slow, &active}, 2, /*timeout_ms=*/300);
  ASSERT_TRUE(c.client.GetFileStatus("/x").ok());
  EXPECT_EQ(active.requests().size(), 1u);

  // A rename that the slow NameNode may have made is not sent to another: its error is the
  // caller's.
  FakeNameNode slow_again(FakeNameNode::Mode::kSilent);
  FakeNameNode other(FakeNameNode::Mode::kAnswer, 200, kTrueBody);
  Client d({&slow_again, &other}, 2, /*timeout_ms=*/300);
  absl::Status renamed = d.client.Rename("/a", "/b");
  EXPECT_EQ(renamed.code(), absl::StatusCode::kDeadlineExceeded) << renamed;
  EXPECT_TRUE(other.requests().empty());
}

TEST(WebHdfsFailoverTest, OneNameNodeIsNotRetried) {
  FakeNameNode standby(FakeNameNode::Mode::kAnswer, 403, kStandbyBody);
  Client c({&standby}, 4);
  absl::StatusOr<FileStatus> status = c.client.GetFileStatus("/x");
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(Message(status.status()).find("StandbyException") != std::string::npos);
  EXPECT_EQ(standby.requests().size(), 1u);
  EXPECT_TRUE(c.pauses.empty());
}

TEST(WebHdfsFailoverTest, ListThatDoesNotParseFailsEveryCall) {
  WebHdfsClient client("nn1=127.0.0.1:1,=", "alice", 1000);
  absl::StatusOr<FileStatus> status = client.GetFileStatus("/x");
  EXPECT_EQ(status.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Message(status.status()).starts_with("WebHDFS GETFILESTATUS /x: the NameNodes "))
      << status.status();
}

}  // namespace
}  // namespace tony::hadoop
