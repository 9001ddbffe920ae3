// The AM's control plane over real gRPC on loopback, with a fake allocator standing in for the
// resource manager (a unit test of the AM's logic; the end-to-end tests use the real backends).
// The fixture is in application_master_test_util.h.

#include "am/application_master.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <thread>

#include "am/application_master_test_util.h"
#include "grpcpp/grpcpp.h"
#include "rpc/auth.h"
#include "rpc/cluster_pack.h"

namespace tony::am {
namespace {

TEST_F(ApplicationMasterTest, CallsWithoutTheJobCredentialAreRefused) {
  rpc::GetJobStatusRequest request;
  rpc::JobStatus status;
  {
    grpc::ClientContext context;
    EXPECT_EQ(stub_->GetJobStatus(&context, request, &status).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext context;
    rpc::AttachAuth(&context, rpc::JobAuthValue(credentials_.secret.substr(1) + "0"));
    EXPECT_EQ(stub_->GetJobStatus(&context, request, &status).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext context;
    rpc::KillJobRequest kill;
    rpc::KillJobResponse killed;
    EXPECT_EQ(stub_->KillJob(&context, kill, &killed).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  grpc::ClientContext context;
  rpc::AttachAuth(&context, JobAuth());
  ASSERT_TRUE(stub_->GetJobStatus(&context, request, &status).ok());
  EXPECT_EQ(status.app_id(), "application_1_0001");
  EXPECT_EQ(status.state(), rpc::JOB_RUNNING);
}

TEST_F(ApplicationMasterTest, GangBarrierAnswersTheWaiterWhenTheLastTaskRegisters) {
  Allocate("c2");
  Allocate("c3");
  ASSERT_TRUE(allocator_.WaitFor([&] { return allocator_.launched_.size() == 2; }));
  EXPECT_EQ(allocator_.launched_[0].second.env.at("TONY_TASK_TYPE"), "worker");
  EXPECT_EQ(allocator_.launched_[0].second.env.at("TONY_CONTAINER_ID"), "c2");
  // The executor's credential travels as a secret of the launch, never in its environment.
  const cluster::LaunchSpec& launch = allocator_.launched_[0].second;
  EXPECT_EQ(launch.secrets.at(rpc::kTaskCredentialAlias),
            rpc::TaskCredential(credentials_.secret, "worker", 0, "c2"));
  EXPECT_EQ(launch.secrets.at(rpc::kAmCertAlias), credentials_.am_cert_pem);
  EXPECT_EQ(launch.secrets.count(rpc::kJobSecretAlias), 0u);
  for (const auto& [key, value] : launch.env) {
    EXPECT_EQ(value.find(credentials_.secret), std::string::npos) << key;
  }
  ASSERT_TRUE(Register(0, "c2", 7001).ok());

  // worker:0 waits for the cluster spec; the call stays open until worker:1 registers.
  auto waiting = std::async(std::launch::async, [this] {
    rpc::WaitClusterSpecRequest request;
    request.mutable_task()->set_type("worker");
    request.mutable_task()->set_index(0);
    request.set_container_id("c2");
    rpc::WaitClusterSpecResponse response;
    grpc::ClientContext context;
    rpc::AttachAuth(&context, TaskAuth(0, "c2"));
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    grpc::Status status = stub_->WaitClusterSpec(&context, request, &response);
    return std::make_pair(status.ok(), response);
  });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "the cluster spec came before the gang was complete";
  EXPECT_FALSE(Register(1, "c9", 7002).ok()) << "a stale container must be refused";
  ASSERT_TRUE(Register(1, "c3", 7002).ok());
  auto [ok, response] = waiting.get();
  ASSERT_TRUE(ok);
  EXPECT_TRUE(response.cluster().empty()) << "the cluster goes packed";
  ASSERT_TRUE(rpc::UnpackCluster(&response).ok());
  ASSERT_EQ(response.cluster().at("worker").addresses_size(), 2);
  EXPECT_EQ(response.cluster().at("worker").addresses(0), "127.0.0.1:7001");
  EXPECT_EQ(response.cluster().at("worker").addresses(1), "127.0.0.1:7002");
  EXPECT_TRUE(response.is_chief());
  EXPECT_EQ(response.num_tracked_tasks(), 2);
}

TEST_F(ApplicationMasterTest, AnExecutorMayCallOnlyAboutItsOwnTask) {
  Allocate("c2");
  Allocate("c3");
  ASSERT_TRUE(allocator_.WaitFor([&] { return allocator_.launched_.size() == 2; }));
  ASSERT_TRUE(Register(0, "c2", 7001).ok());
  ASSERT_TRUE(Register(1, "c3", 7002).ok());

  // worker:0's executor (or a user process that stole its credential) reports worker:1 done.
  rpc::ReportResultRequest report;
  report.mutable_task()->set_type("worker");
  report.mutable_task()->set_index(1);
  report.set_container_id("c3");
  report.set_exit_code(0);
  rpc::ReportResultResponse reported;
  {
    grpc::ClientContext context;
    rpc::AttachAuth(&context, TaskAuth(0, "c2"));
    EXPECT_EQ(stub_->ReportResult(&context, report, &reported).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  rpc::HeartbeatRequest heartbeat;
  heartbeat.mutable_task()->set_type("worker");
  heartbeat.mutable_task()->set_index(1);
  heartbeat.set_container_id("c3");
  rpc::HeartbeatResponse beat;
  {
    grpc::ClientContext context;
    rpc::AttachAuth(&context, TaskAuth(0, "c2"));
    EXPECT_EQ(stub_->Heartbeat(&context, heartbeat, &beat).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {  // Its own task, but another container's: refused too.
    grpc::ClientContext context;
    rpc::AttachAuth(&context, TaskAuth(1, "c2"));
    EXPECT_EQ(stub_->Heartbeat(&context, heartbeat, &beat).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {  // A task's credential is not the client's: it cannot kill the job.
    grpc::ClientContext context;
    rpc::AttachAuth(&context, TaskAuth(0, "c2"));
    rpc::KillJobRequest kill;
    rpc::KillJobResponse killed;
    EXPECT_EQ(stub_->KillJob(&context, kill, &killed).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {  // Nor is the client an executor.
    grpc::ClientContext context;
    rpc::AttachAuth(&context, JobAuth());
    EXPECT_EQ(stub_->Heartbeat(&context, heartbeat, &beat).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  // worker:1 is unaffected: still running, no exit code.
  rpc::GetJobStatusRequest request;
  rpc::JobStatus status;
  grpc::ClientContext context;
  rpc::AttachAuth(&context, JobAuth());
  ASSERT_TRUE(stub_->GetJobStatus(&context, request, &status).ok());
  ASSERT_EQ(status.tasks_size(), 2);
  EXPECT_EQ(status.tasks(1).state(), rpc::TASK_RUNNING);
  EXPECT_FALSE(status.tasks(1).has_exit_code());
  // Its own executor may heartbeat.
  grpc::ClientContext own;
  rpc::AttachAuth(&own, TaskAuth(1, "c3"));
  EXPECT_TRUE(stub_->Heartbeat(&own, heartbeat, &beat).ok());
}

TEST_F(ApplicationMasterTest, FreshTaskTokensGoOutOnceToEachExecutorThatLacksThem) {
  Allocate("c2");
  ASSERT_TRUE(allocator_.WaitFor([&] { return allocator_.launched_.size() == 1; }));
  ASSERT_TRUE(Register(0, "c2", 7001).ok());
  auto beat = [&](int64_t has_version) {
    rpc::HeartbeatRequest request;
    request.mutable_task()->set_type("worker");
    request.mutable_task()->set_index(0);
    request.set_container_id("c2");
    request.set_tokens_version(has_version);
    rpc::HeartbeatResponse response;
    grpc::ClientContext context;
    rpc::AttachAuth(&context, TaskAuth(0, "c2"));
    EXPECT_TRUE(stub_->Heartbeat(&context, request, &response).ok());
    return response;
  };
  // None yet: the container's own are all there is.
  EXPECT_EQ(beat(0).tokens_version(), 0);
  EXPECT_TRUE(beat(0).tokens().empty());

  // The loop takes the tokens before the heartbeat that follows (its tasks run in order).
  allocator_.callbacks_.on_task_tokens("HDTS first");
  rpc::HeartbeatResponse fresh = beat(0);
  EXPECT_EQ(fresh.tokens_version(), 1);
  EXPECT_EQ(fresh.tokens(), "HDTS first");
  // An executor that has them gets nothing more until newer ones come.
  EXPECT_TRUE(beat(1).tokens().empty());
  allocator_.callbacks_.on_task_tokens("HDTS second");
  fresh = beat(1);
  EXPECT_EQ(fresh.tokens_version(), 2);
  EXPECT_EQ(fresh.tokens(), "HDTS second");
}

// The cluster no longer counts the AM's attempt: the AM ends at once, records no final status
// (Finish is never called), and its status never says complete.
TEST_F(ApplicationMasterTest, AnAttemptTheClusterNoLongerCountsStopsWithoutAFinalStatus) {
  Allocate("c2");
  ASSERT_TRUE(allocator_.WaitFor([&] { return allocator_.launched_.size() == 1; }));
  allocator_.callbacks_.on_ended_by_cluster("the ResourceManager no longer knows this attempt");
  ASSERT_EQ(run_.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(run_.get(), 1);
  {
    std::lock_guard lock(allocator_.mu_);
    EXPECT_FALSE(allocator_.finishing_);
  }
  // The history's last events are still queued: the AM's destructors must run (cli/roles.cc).
  EXPECT_FALSE(am_->Finished());
  run_ = std::async(std::launch::async, [] { return 1; });  // for TearDown's wait
}

// A task killed over its memory asks for more (tony.worker.memory-growth = 2), but never for more
// than the cluster can grant: 6000 MB cannot be, so it asks for its type's 3000 MB again.
TEST_F(ApplicationMasterTest, AGrownAskThatCanNeverBeGrantedFallsBackToTheTypesSize) {
  Allocate("c2");
  ASSERT_TRUE(allocator_.WaitFor([&] { return allocator_.launched_.size() == 1; }));
  ASSERT_TRUE(Register(0, "c2", 7001).ok());
  allocator_.callbacks_.on_completed(
      {"c2", -104, "over its memory", cluster::ContainerExit::Cause::kExited});
  ASSERT_TRUE(allocator_.WaitFor([&] { return allocator_.requests_.size() == 3; }));
  std::lock_guard lock(allocator_.mu_);
  EXPECT_EQ(allocator_.requests_.back().job_type, "worker");
  EXPECT_EQ(allocator_.requests_.back().resources.memory_mb, 3000);
}

// An AM that waits for the client to read the final status, as under `tony submit`.
class ApplicationMasterWithClientTest : public ApplicationMasterTest {
 protected:
  void SetUp() override {
    wait_client_ms_ = 20000;
    allocator_.finish_error_ =
        absl::ResourceExhaustedError("cannot write 'final-status.json': No space left on device");
    ApplicationMasterTest::SetUp();
  }
};

TEST_F(ApplicationMasterWithClientTest, AFinalStatusThatCannotBeSavedIsStillReported) {
  {
    rpc::KillJobRequest kill;
    kill.set_reason("test kill");
    rpc::KillJobResponse killed;
    grpc::ClientContext context;
    rpc::AttachAuth(&context, JobAuth());
    ASSERT_TRUE(stub_->KillJob(&context, kill, &killed).ok());
  }
  rpc::JobStatus status;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!status.complete() && std::chrono::steady_clock::now() < deadline) {
    rpc::WatchJobRequest watch;
    watch.set_after_version(status.version());
    watch.set_max_wait_ms(5000);
    grpc::ClientContext context;
    rpc::AttachAuth(&context, JobAuth());
    ASSERT_TRUE(stub_->WatchJob(&context, watch, &status).ok());
  }
  ASSERT_TRUE(status.complete());
  EXPECT_EQ(status.state(), rpc::JOB_KILLED);
  EXPECT_EQ(status.final_status_unsaved(),
            "cannot write 'final-status.json': No space left on device");
  rpc::AcknowledgeFinalRequest ack;
  rpc::AcknowledgeFinalResponse acked;
  grpc::ClientContext context;
  rpc::AttachAuth(&context, JobAuth());
  EXPECT_TRUE(stub_->AcknowledgeFinal(&context, ack, &acked).ok());
  EXPECT_EQ(run_.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(allocator_.final_state_, "KILLED");
  EXPECT_TRUE(am_->Finished());  // the backend could not save it, but it has it
}

// The local backend's record is written before the AM's loop learns that it was: a client that
// read it there acknowledges early, and the AM must still end once the status is recorded
// rather than wait for tony.am.wait-client-signal-stop-timeout-sec.
class ApplicationMasterWithEarlyClientTest : public ApplicationMasterTest {
 protected:
  void SetUp() override {
    wait_client_ms_ = 60000;
    allocator_.hold_finish_ = true;
    ApplicationMasterTest::SetUp();
  }
  void TearDown() override {
    allocator_.ReleaseFinish();
    ApplicationMasterTest::TearDown();
  }
};

TEST_F(ApplicationMasterWithEarlyClientTest,
       AnAcknowledgementBeforeTheRecordEndsTheAmOnceRecorded) {
  {
    rpc::KillJobRequest kill;
    rpc::KillJobResponse killed;
    grpc::ClientContext context;
    rpc::AttachAuth(&context, JobAuth());
    ASSERT_TRUE(stub_->KillJob(&context, kill, &killed).ok());
  }
  ASSERT_TRUE(allocator_.WaitFor([&] { return allocator_.finishing_; }));
  rpc::AcknowledgeFinalRequest ack;
  rpc::AcknowledgeFinalResponse acked;
  grpc::ClientContext context;
  rpc::AttachAuth(&context, JobAuth());
  ASSERT_TRUE(stub_->AcknowledgeFinal(&context, ack, &acked).ok());
  // Not recorded yet: the AM stays.
  EXPECT_EQ(run_.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  allocator_.ReleaseFinish();
  EXPECT_EQ(run_.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(allocator_.final_state_, "KILLED");
}

TEST_F(ApplicationMasterTest, ThePortSpeaksOnlyTlsWithTheJobsCertificate) {
  rpc::GetJobStatusRequest request;
  rpc::JobStatus status;
  {  // Plaintext: no TLS handshake, no answer.
    auto plain = rpc::TonyAm::NewStub(
        grpc::CreateChannel(allocator_.address_, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    rpc::AttachAuth(&context, JobAuth());
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    EXPECT_EQ(plain->GetJobStatus(&context, request, &status).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
  {  // A caller that pins another job's certificate does not trust this AM.
    absl::StatusOr<rpc::JobCredentials> other = rpc::GenerateJobCredentials(true);
    ASSERT_TRUE(other.ok());
    auto stranger = rpc::TonyAm::NewStub(rpc::AmChannel(allocator_.address_, other->am_cert_pem));
    grpc::ClientContext context;
    rpc::AttachAuth(&context, JobAuth());
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    EXPECT_EQ(stranger->GetJobStatus(&context, request, &status).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
  grpc::ClientContext context;
  rpc::AttachAuth(&context, JobAuth());
  EXPECT_TRUE(stub_->GetJobStatus(&context, request, &status).ok());
}

TEST_F(ApplicationMasterTest, OversizedMessagesAreRefused) {
  rpc::KillJobRequest kill;
  kill.set_reason(std::string(size_t{2} * rpc::kAmMaxReceiveBytes, 'x'));
  rpc::KillJobResponse killed;
  {  // Without a credential: refused on its headers.
    grpc::ClientContext context;
    EXPECT_EQ(stub_->KillJob(&context, kill, &killed).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  {  // With one: still too large.
    grpc::ClientContext context;
    rpc::AttachAuth(&context, JobAuth());
    EXPECT_EQ(stub_->KillJob(&context, kill, &killed).error_code(),
              grpc::StatusCode::RESOURCE_EXHAUSTED);
  }
  rpc::GetJobStatusRequest request;
  rpc::JobStatus status;
  grpc::ClientContext context;
  rpc::AttachAuth(&context, JobAuth());
  ASSERT_TRUE(stub_->GetJobStatus(&context, request, &status).ok());
  EXPECT_EQ(status.state(), rpc::JOB_RUNNING) << "the oversized kill must not have been applied";
}

}  // namespace
}  // namespace tony::am
