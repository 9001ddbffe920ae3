// The executor's link to its AM, against real gRPC servers standing in for two AM attempts: it
// follows the address file to the next attempt, and a result that finds no AM waits for it.

#include "executor/am_link.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <memory>

#include "common/files.h"
#include "grpcpp/grpcpp.h"

namespace tony::executor {
namespace {

namespace fs = std::filesystem;

// An AM attempt's control plane that answers heartbeats and results, and counts them.
class FakeAm final : public rpc::TonyAm::Service {
 public:
  FakeAm() {
    grpc::ServerBuilder builder;
    // Loopback only, and plaintext on purpose: a stand-in for the AM in a test, which the link
    // reaches without TLS (AmLinkOptions::cert_pem empty), as an AM with tony.am.tls.enabled=false.
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~FakeAm() override { Stop(); }
  void Stop() {
    if (server_) server_->Shutdown();
    server_.reset();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  grpc::Status Heartbeat(grpc::ServerContext*, const rpc::HeartbeatRequest*,
                         rpc::HeartbeatResponse*) override {
    ++heartbeats;
    return grpc::Status::OK;
  }
  grpc::Status ReportResult(grpc::ServerContext*, const rpc::ReportResultRequest* request,
                            rpc::ReportResultResponse*) override {
    ++results;
    last_exit_code = request->exit_code();
    return grpc::Status::OK;
  }

  std::atomic<int> heartbeats{0};
  std::atomic<int> results{0};
  std::atomic<int> last_exit_code{-1};

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

// A port that takes connections and never answers: an AM that holds every call.
class SilentPort {
 public:
  SilentPort() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(address);
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        listen(fd_, 8) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      return;
    }
    port_ = ntohs(address.sin_port);
  }
  ~SilentPort() {
    if (fd_ >= 0) close(fd_);
  }
  SilentPort(const SilentPort&) = delete;
  SilentPort& operator=(const SilentPort&) = delete;
  bool ok() const { return port_ != 0; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// One heartbeat, waited for.
grpc::Status Beat(AmLink& link) {
  // Shared: the callback may still be in set_value when the wait returns.
  auto ended = std::make_shared<std::promise<void>>();
  std::future<void> answered = ended->get_future();
  const std::shared_ptr<HeartbeatCall> call =
      link.StartHeartbeat({}, 5000, [ended] { ended->set_value(); });
  answered.wait();
  EXPECT_TRUE(call->done());
  return call->status();
}

class AmLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tony-am-link-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  AmLinkOptions Options(const std::string& address, int64_t recovery_ms) {
    AmLinkOptions options;
    options.address = address;
    options.address_file = dir_ + "/am.address";
    options.task = {"worker", 0};
    options.container_id = "container_1";
    options.recovery_ms = recovery_ms;
    return options;
  }
  static rpc::ReportResultRequest Result(int exit_code) {
    rpc::ReportResultRequest request;
    request.set_exit_code(exit_code);
    return request;
  }

  std::string dir_;
};

TEST_F(AmLinkTest, FollowsTheAddressFileToTheNextAttemptOnlyWhenItNamesAnotherAm) {
  FakeAm first;
  AmLink link(Options(first.address(), 60000));
  EXPECT_TRUE(link.awaits_next_am());
  ASSERT_TRUE(Beat(link).ok());
  EXPECT_FALSE(link.FollowNextAm());  // no file yet
  ASSERT_TRUE(WriteFile(dir_ + "/am.address", first.address() + "\n").ok());
  EXPECT_FALSE(link.FollowNextAm());  // the same AM

  first.Stop();
  EXPECT_FALSE(Beat(link).ok());
  FakeAm second;
  ASSERT_TRUE(WriteFile(dir_ + "/am.address", second.address() + "\n").ok());
  EXPECT_TRUE(link.FollowNextAm());
  EXPECT_EQ(link.address(), second.address());
  ASSERT_TRUE(Beat(link).ok());
  EXPECT_EQ(second.heartbeats, 1);
}

// A heartbeat returns at once, before the AM answers it (the executor watches its task
// meanwhile). One that is not answered is abandoned when the task ends: the call ends cancelled,
// and its callback, which would wake an executor that may be gone, never runs.
TEST_F(AmLinkTest, AHeartbeatIsNotWaitedForAndCanBeAbandoned) {
  SilentPort silent;
  ASSERT_TRUE(silent.ok());
  AmLink link(Options(silent.address(), 0));
  std::atomic<int> ended{0};
  const std::shared_ptr<HeartbeatCall> held = link.StartHeartbeat({}, 60000, [&ended] { ++ended; });
  EXPECT_FALSE(held->done());
  held->Abandon();
  ASSERT_TRUE(held->WaitFor(10000));
  EXPECT_EQ(held->status().error_code(), grpc::StatusCode::CANCELLED) << GrpcError(held->status());
  EXPECT_EQ(ended, 0);
  // One that is answered runs its callback, once it has ended.
  FakeAm am;
  AmLink answered(Options(am.address(), 0));
  EXPECT_TRUE(Beat(answered).ok());
  EXPECT_EQ(am.heartbeats, 1);
}

TEST_F(AmLinkTest, AResultThatFindsNoAmIsTakenByTheNextAttempt) {
  auto first = std::make_unique<FakeAm>();
  AmLink link(Options(first->address(), 60000));
  first->Stop();
  std::unique_ptr<FakeAm> second;
  int pauses = 0;
  rpc::ReportResultResponse response;
  // The next attempt comes up while the link waits between its tries.
  const grpc::Status status = link.ReportResult(Result(3), &response, 5000, [&](int64_t ms) {
    EXPECT_LE(ms, 1000);
    if (++pauses == 1) {
      second = std::make_unique<FakeAm>();
      EXPECT_TRUE(WriteFile(dir_ + "/am.address", second->address()).ok());
    }
    return false;
  });
  ASSERT_TRUE(status.ok()) << GrpcError(status);
  EXPECT_EQ(pauses, 1);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->results, 1);
  EXPECT_EQ(second->last_exit_code, 3);
}

TEST_F(AmLinkTest, AResultWaitsNoLongerThanTheRecoveryTimeNorPastAStop) {
  FakeAm gone;
  const std::string address = gone.address();
  gone.Stop();
  rpc::ReportResultResponse response;
  // Without a next attempt to come, one try.
  int pauses = 0;
  AmLink alone(Options(address, 0));
  EXPECT_FALSE(alone
                   .ReportResult(Result(0), &response, 5000,
                                 [&](int64_t) {
                                   ++pauses;
                                   return false;
                                 })
                   .ok());
  EXPECT_EQ(pauses, 0);
  // A stop ends the wait.
  AmLink stopped(Options(address, 60000));
  EXPECT_FALSE(stopped
                   .ReportResult(Result(0), &response, 5000,
                                 [&](int64_t) {
                                   ++pauses;
                                   return true;
                                 })
                   .ok());
  EXPECT_EQ(pauses, 1);
  // Past the recovery time it gives up, however often it was told to go on.
  AmLink bounded(Options(address, 1));
  EXPECT_FALSE(
      bounded.ReportResult(Result(0), &response, 5000, [](int64_t) { return false; }).ok());
}

}  // namespace
}  // namespace tony::executor
