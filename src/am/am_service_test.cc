// AmService alone, with a handler that records what reaches it: which caller may make each of the
// eleven calls, that an answer the handler keeps for later still reaches its caller, and that a
// call after the service's shutdown is refused, not lost.

#include "am/am_service.h"

#include <gtest/gtest.h>

#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "grpcpp/grpcpp.h"
#include "rpc/auth.h"

namespace tony::am {
namespace {

constexpr char kSecret[] = "0123456789abcdef-test-secret";  // no spaces: words of the auth value

class RecordingHandler final : public AmRequestHandler {
 public:
  explicit RecordingHandler(EventLoop* loop) : loop_(loop) {}

  std::vector<std::string> Calls() const {
    MutexLock lock(mu_);
    return calls_;
  }
  // After the loop ran: a call still kept is answered before the service shuts down.
  void AnswerKept() {
    if (kept_) std::move(*kept_).Send(absl::CancelledError("the test ends"));
    kept_.reset();
  }

  void RegisterTask(const rpc::RegisterTaskRequest&,
                    Reply<rpc::RegisterTaskResponse> reply) override {
    Answer("RegisterTask", std::move(reply));
  }
  // Kept, and answered by the next heartbeat: an answer sent later, from another handler.
  void WaitClusterSpec(const rpc::WaitClusterSpecRequest&,
                       Reply<rpc::WaitClusterSpecResponse> reply) override {
    Record("WaitClusterSpec");
    reply.response()->set_attempt(7);
    kept_.emplace(std::move(reply));
  }
  void Heartbeat(const rpc::HeartbeatRequest&, Reply<rpc::HeartbeatResponse> reply) override {
    if (kept_) {
      std::move(*kept_).Send();
      kept_.reset();
    }
    reply.response()->set_reason("beat");
    Answer("Heartbeat", std::move(reply));
  }
  void ReportResult(const rpc::ReportResultRequest&,
                    Reply<rpc::ReportResultResponse> reply) override {
    Answer("ReportResult", std::move(reply));
  }
  void AppendOutput(const rpc::AppendOutputRequest&,
                    Reply<rpc::AppendOutputResponse> reply) override {
    Answer("AppendOutput", std::move(reply));
  }
  void RegisterTensorBoardUrl(const rpc::RegisterTensorBoardUrlRequest&,
                              Reply<rpc::RegisterTensorBoardUrlResponse> reply) override {
    Answer("RegisterTensorBoardUrl", std::move(reply));
  }
  void PublishRendezvous(const rpc::PublishRendezvousRequest&,
                         Reply<rpc::PublishRendezvousResponse> reply) override {
    Answer("PublishRendezvous", std::move(reply));
  }
  void GetJobStatus(const rpc::GetJobStatusRequest&, Reply<rpc::JobStatus> reply) override {
    Answer("GetJobStatus", std::move(reply));
  }
  void WatchJob(const rpc::WatchJobRequest&, Reply<rpc::JobStatus> reply) override {
    Answer("WatchJob", std::move(reply));
  }
  void KillJob(const rpc::KillJobRequest&, Reply<rpc::KillJobResponse> reply) override {
    Answer("KillJob", std::move(reply));
  }
  // Dropped unanswered: the caller hears INTERNAL, not nothing.
  void AcknowledgeFinal(const rpc::AcknowledgeFinalRequest&,
                        Reply<rpc::AcknowledgeFinalResponse>) override {
    Record("AcknowledgeFinal");
  }

 private:
  void Record(const char* name) {
    EXPECT_TRUE(loop_->IsCurrent()) << name << " ran off the loop";
    MutexLock lock(mu_);
    calls_.emplace_back(name);
  }
  template <typename Response>
  void Answer(const char* name, Reply<Response> reply) {
    Record(name);
    std::move(reply).Send();
  }

  EventLoop* const loop_;
  mutable Mutex mu_;
  std::vector<std::string> calls_ TONY_GUARDED_BY(mu_);
  std::optional<Reply<rpc::WaitClusterSpecResponse>> kept_;  // the loop's
};

class AmServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    loop_thread_ = std::thread([this] { loop_.Run(50, [] {}); });
    grpc::ServerBuilder builder;
    int port = 0;
    // Plaintext on loopback: this tests who may make which call, which the service decides from
    // each call's credential either way; TLS is AmServerCredentials', tested in
    // application_master_test.
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    ASSERT_TRUE(service_.Start(builder));
    ASSERT_NE(port, 0);
    stub_ = rpc::TonyAm::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                     grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    loop_.Stop();
    if (loop_thread_.joinable()) loop_thread_.join();
    loop_.RunPending();
    handler_.AnswerKept();
    service_.Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  }

  static std::string Task(int index, const std::string& container) {
    return rpc::TaskAuthValue("worker", index, container,
                              rpc::TaskCredential(kSecret, "worker", index, container));
  }
  static std::string Job() { return rpc::JobAuthValue(kSecret); }

  // Each call, made with `auth` ("" for none), about worker:0 in container c0 where the call
  // names a task. Returns the codes in the order of AmRequestHandler's methods.
  std::vector<grpc::StatusCode> CallEach(const std::string& auth) {
    std::vector<grpc::StatusCode> codes;
    auto call = [&](auto method, auto request, auto response) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
      if (!auth.empty()) rpc::AttachAuth(&context, auth);
      codes.push_back(((*stub_).*method)(&context, request, &response).error_code());
    };
    rpc::TaskRef task;
    task.set_type("worker");
    task.set_index(0);
    rpc::RegisterTaskRequest reg;
    *reg.mutable_task() = task;
    reg.set_container_id("c0");
    call(&rpc::TonyAm::Stub::RegisterTask, reg, rpc::RegisterTaskResponse());
    rpc::ReportResultRequest report;
    *report.mutable_task() = task;
    report.set_container_id("c0");
    call(&rpc::TonyAm::Stub::ReportResult, report, rpc::ReportResultResponse());
    rpc::AppendOutputRequest output;
    *output.mutable_task() = task;
    output.set_container_id("c0");
    call(&rpc::TonyAm::Stub::AppendOutput, output, rpc::AppendOutputResponse());
    rpc::RegisterTensorBoardUrlRequest url;
    *url.mutable_task() = task;
    call(&rpc::TonyAm::Stub::RegisterTensorBoardUrl, url, rpc::RegisterTensorBoardUrlResponse());
    rpc::PublishRendezvousRequest rendezvous;
    *rendezvous.mutable_task() = task;
    rendezvous.set_container_id("c0");
    call(&rpc::TonyAm::Stub::PublishRendezvous, rendezvous, rpc::PublishRendezvousResponse());
    call(&rpc::TonyAm::Stub::GetJobStatus, rpc::GetJobStatusRequest(), rpc::JobStatus());
    call(&rpc::TonyAm::Stub::WatchJob, rpc::WatchJobRequest(), rpc::JobStatus());
    call(&rpc::TonyAm::Stub::KillJob, rpc::KillJobRequest(), rpc::KillJobResponse());
    rpc::HeartbeatRequest beat;
    *beat.mutable_task() = task;
    beat.set_container_id("c0");
    call(&rpc::TonyAm::Stub::Heartbeat, beat, rpc::HeartbeatResponse());
    call(&rpc::TonyAm::Stub::AcknowledgeFinal, rpc::AcknowledgeFinalRequest(),
         rpc::AcknowledgeFinalResponse());
    return codes;
  }

  EventLoop loop_;
  std::thread loop_thread_;
  RecordingHandler handler_{&loop_};
  AmService service_{"application_1_0001", kSecret, &loop_, &handler_};
  std::unique_ptr<rpc::TonyAm::Stub> stub_;
};

using Code = grpc::StatusCode;

TEST_F(AmServiceTest, EachCallReachesTheHandlerOnlyFromTheCallerItIsFor) {
  // RegisterTask, ReportResult, AppendOutput, RegisterTensorBoardUrl, PublishRendezvous: the
  // task's; GetJobStatus, WatchJob, KillJob: the client's; Heartbeat: the task's;
  // AcknowledgeFinal: the client's (which the handler drops: INTERNAL).
  const Code kDenied = Code::PERMISSION_DENIED;
  const std::vector<Code> task_calls = {Code::OK, Code::OK, Code::OK, Code::OK, Code::OK,
                                        kDenied,  kDenied,  kDenied,  Code::OK, kDenied};
  EXPECT_EQ(CallEach(Task(0, "c0")), task_calls) << "worker:0's executor";
  const std::vector<Code> job_calls = {kDenied,  kDenied,  kDenied,  kDenied, kDenied,
                                       Code::OK, Code::OK, Code::OK, kDenied, Code::INTERNAL};
  EXPECT_EQ(CallEach(Job()), job_calls) << "the client";
  // Another task's executor, and the same task in another container: about worker:0 in c0, none.
  // RegisterTensorBoardUrl names no container, so worker:0's credential from c1 may make it.
  const std::vector<Code> other(10, kDenied);
  EXPECT_EQ(CallEach(Task(1, "c0")), other) << "worker:1's executor";
  std::vector<Code> other_container = other;
  other_container[3] = Code::OK;
  EXPECT_EQ(CallEach(Task(0, "c1")), other_container) << "worker:0 in another container";
  const std::vector<Code> none(10, Code::UNAUTHENTICATED);
  EXPECT_EQ(CallEach(""), none) << "no credential";
  EXPECT_EQ(CallEach(rpc::JobAuthValue("another-jobs-secret")), none) << "another job's";

  // The cluster spec's wait, which the handler keeps: neither the client nor another task.
  rpc::WaitClusterSpecRequest wait;
  wait.mutable_task()->set_type("worker");
  wait.mutable_task()->set_index(0);
  wait.set_container_id("c0");
  for (const std::string& auth : {Job(), Task(1, "c0"), Task(0, "c1")}) {
    grpc::ClientContext context;
    rpc::AttachAuth(&context, auth);
    rpc::WaitClusterSpecResponse spec;
    EXPECT_EQ(stub_->WaitClusterSpec(&context, wait, &spec).error_code(), kDenied);
  }

  const std::vector<std::string> reached = {
      "RegisterTask",      "ReportResult",     "AppendOutput",          "RegisterTensorBoardUrl",
      "PublishRendezvous", "Heartbeat",        "GetJobStatus",          "WatchJob",
      "KillJob",           "AcknowledgeFinal", "RegisterTensorBoardUrl"};
  EXPECT_EQ(handler_.Calls(), reached);
}

TEST_F(AmServiceTest, AKeptAnswerReachesItsCallerAndADroppedOneSaysSo) {
  rpc::WaitClusterSpecRequest wait;
  wait.mutable_task()->set_type("worker");
  wait.mutable_task()->set_index(0);
  wait.set_container_id("c0");
  grpc::ClientContext wait_context;
  rpc::AttachAuth(&wait_context, Task(0, "c0"));
  rpc::WaitClusterSpecResponse spec;
  std::promise<grpc::Status> waited;
  stub_->async()->WaitClusterSpec(&wait_context, &wait, &spec,
                                  [&](const grpc::Status& status) { waited.set_value(status); });
  // The heartbeat answers the kept call; it may come before the wait reaches the loop, so beat
  // until the wait is answered.
  std::future<grpc::Status> answered = waited.get_future();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (answered.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready &&
         std::chrono::steady_clock::now() < deadline) {
    rpc::HeartbeatRequest beat;
    *beat.mutable_task() = wait.task();
    beat.set_container_id("c0");
    rpc::HeartbeatResponse beaten;
    grpc::ClientContext context;
    rpc::AttachAuth(&context, Task(0, "c0"));
    ASSERT_TRUE(stub_->Heartbeat(&context, beat, &beaten).ok());
    EXPECT_EQ(beaten.reason(), "beat");
  }
  ASSERT_EQ(answered.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_TRUE(answered.get().ok());
  EXPECT_EQ(spec.attempt(), 7);

  grpc::ClientContext context;
  rpc::AttachAuth(&context, Job());
  rpc::AcknowledgeFinalResponse acknowledged;
  const grpc::Status dropped =
      stub_->AcknowledgeFinal(&context, rpc::AcknowledgeFinalRequest(), &acknowledged);
  EXPECT_EQ(dropped.error_code(), Code::INTERNAL);
  EXPECT_EQ(dropped.error_message(), "the AM dropped the call unanswered");
}

// The AM answers every call it holds before it stops the service; one it still held after that
// (its Reply sent or dropped late) is freed, not answered on a server that is gone.
TEST_F(AmServiceTest, AnAnswerKeptPastTheShutdownIsFreedNotSent) {
  rpc::WaitClusterSpecRequest wait;
  wait.mutable_task()->set_type("worker");
  wait.mutable_task()->set_index(0);
  wait.set_container_id("c0");
  grpc::ClientContext context;
  rpc::AttachAuth(&context, Task(0, "c0"));
  rpc::WaitClusterSpecResponse spec;
  std::promise<grpc::Status> waited;
  stub_->async()->WaitClusterSpec(&context, &wait, &spec,
                                  [&](const grpc::Status& status) { waited.set_value(status); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (handler_.Calls().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(handler_.Calls(), std::vector<std::string>{"WaitClusterSpec"});
  loop_.Stop();
  loop_thread_.join();
  service_.Shutdown(std::chrono::system_clock::now());
  handler_.AnswerKept();  // after the service: freed
  const grpc::Status status = waited.get_future().get();
  EXPECT_FALSE(status.ok());
}

TEST_F(AmServiceTest, ACallAfterTheLoopStoppedIsRefusedAsUnavailable) {
  loop_.Stop();
  grpc::ClientContext context;
  rpc::AttachAuth(&context, Job());
  rpc::JobStatus status;
  const grpc::Status refused = stub_->GetJobStatus(&context, rpc::GetJobStatusRequest(), &status);
  EXPECT_EQ(refused.error_code(), Code::UNAVAILABLE);
  EXPECT_EQ(refused.error_message(), "the AM is shutting down");
  EXPECT_TRUE(handler_.Calls().empty());
}

}  // namespace
}  // namespace tony::am
