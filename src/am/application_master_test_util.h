// The AM's unit tests' fixture: an AM of two workers on its control plane over real gRPC on
// loopback, and a fake of the resource manager's side that records what the AM asks for and lets
// a test complete containers through the AM's own callbacks.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "am/application_master.h"
#include "cluster/container_allocator.h"
#include "config/key_catalog.h"
#include "grpcpp/grpcpp.h"
#include "history/history_fs.h"
#include "rpc/auth.h"

namespace tony::am {

class FakeAllocator final : public cluster::ContainerAllocator {
 public:
  absl::Status Start(const std::string& host, int port, const std::string&,
                     Callbacks callbacks) override {
    std::lock_guard lock(mu_);
    address_ = host + ":" + std::to_string(port);
    callbacks_ = std::move(callbacks);
    changed_.notify_all();
    return absl::OkStatus();
  }
  absl::Status CheckFits(const cluster::ContainerRequest& request) const override {
    if (request.resources.memory_mb > kMaxMemoryMb) {
      return absl::ResourceExhaustedError("more memory than the cluster's largest container");
    }
    return absl::OkStatus();
  }
  static constexpr int64_t kMaxMemoryMb = 4096;
  void Request(const cluster::ContainerRequest& request) override {
    std::lock_guard lock(mu_);
    requests_.push_back(request);
    changed_.notify_all();
  }
  absl::Status Launch(const cluster::Container& container,
                      const cluster::LaunchSpec& spec) override {
    std::lock_guard lock(mu_);
    launched_.emplace_back(container, spec);
    changed_.notify_all();
    return absl::OkStatus();
  }
  void Stop(const std::string& id, int64_t) override {
    // The container ends at once, as if its executor obeyed.
    Callbacks callbacks;
    {
      std::lock_guard lock(mu_);
      callbacks = callbacks_;
    }
    callbacks.on_completed({id, 143, "", cluster::ContainerExit::Cause::kStoppedByAm});
  }
  void Release(const std::string&) override {}
  absl::Status Finish(cluster::FinalStatus status, const std::string&,
                      const std::string&) override {
    std::unique_lock lock(mu_);
    finishing_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return !hold_finish_; });
    final_state_ = cluster::ToString(status);
    return finish_error_;
  }
  // Lets a Finish held by `hold_finish_` record its status.
  void ReleaseFinish() {
    std::lock_guard lock(mu_);
    hold_finish_ = false;
    changed_.notify_all();
  }
  int RunningContainers() const override { return 0; }
  void Shutdown() override {}

  // Waits until `predicate` holds, with a deadline.
  template <typename Predicate>
  bool WaitFor(Predicate predicate) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return predicate(); });
  }

  std::mutex mu_;
  std::condition_variable changed_;
  std::string address_;
  Callbacks callbacks_;
  std::vector<cluster::ContainerRequest> requests_;
  std::vector<std::pair<cluster::Container, cluster::LaunchSpec>> launched_;
  std::string final_state_;
  absl::Status finish_error_;  // what Finish answers
  bool hold_finish_ = false;   // Finish waits for ReleaseFinish
  bool finishing_ = false;     // Finish was called
};

inline config::JobSpec TwoWorkers() {
  config::Configuration conf = config::KeyCatalog::BuiltIn().Defaults();
  for (auto [key, value] :
       {std::pair{"tony.containers.command", "true"}, std::pair{"tony.worker.instances", "2"},
        std::pair{"tony.am.wait-client-signal-stop-timeout-sec", "0"},
        std::pair{"tony.worker.memory", "3000m"}, std::pair{"tony.worker.memory-growth", "2"},
        std::pair{"tony.worker.restart-backoff-ms", "0"}}) {
    conf.Set(key, value, config::ValueSource::ConfFlag());
  }
  return *config::BuildJobSpec(conf);
}

class ApplicationMasterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AmOptions options;
    options.app_id = "application_1_0001";
    absl::StatusOr<rpc::JobCredentials> credentials = rpc::GenerateJobCredentials(/*tls=*/true);
    ASSERT_TRUE(credentials.ok());
    credentials_ = *credentials;
    options.credentials = credentials_;
    options.bind_host = "127.0.0.1";
    options.host = "127.0.0.1";
    options.executable = "/bin/false";
    options.wait_client_ms = wait_client_ms_;
    options.history_fs = history_fs_;
    options.history_dirs = history_dirs_;
    am_ = std::make_unique<ApplicationMaster>(options, TwoWorkers(), &allocator_, clock_);
    run_ = std::async(std::launch::async, [this] { return am_->Run(); });
    ASSERT_TRUE(allocator_.WaitFor([&] { return allocator_.requests_.size() == 2; }));
    stub_ = rpc::TonyAm::NewStub(rpc::AmChannel(allocator_.address_, credentials_.am_cert_pem));
  }
  void TearDown() override {
    am_->RequestKill("test over");
    EXPECT_EQ(run_.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  }

  void Allocate(const std::string& id) {
    cluster::Container container;
    container.id = id;
    container.job_type = "worker";
    container.host = "127.0.0.1";
    allocator_.callbacks_.on_allocated(container);
  }
  // The credential the AM hands the executor of worker:index in `container`.
  std::string TaskAuth(int index, const std::string& container) const {
    return rpc::TaskAuthValue("worker", index, container,
                              rpc::TaskCredential(credentials_.secret, "worker", index, container));
  }
  std::string JobAuth() const { return rpc::JobAuthValue(credentials_.secret); }

  grpc::Status Register(int index, const std::string& container, int port) {
    rpc::RegisterTaskRequest request;
    request.mutable_task()->set_type("worker");
    request.mutable_task()->set_index(index);
    request.set_container_id(container);
    request.set_host("127.0.0.1");
    request.set_port(port);
    rpc::RegisterTaskResponse response;
    grpc::ClientContext context;
    rpc::AttachAuth(&context, TaskAuth(index, container));
    return stub_->RegisterTask(&context, request, &response);
  }

  int64_t wait_client_ms_ = 0;  // the AM's wait for the client's acknowledgement
  std::shared_ptr<history::HistoryFs> history_fs_;  // none: no history
  history::HistoryDirs history_dirs_;
  const Clock* clock_ = SystemClock::Get();
  rpc::JobCredentials credentials_;
  FakeAllocator allocator_;
  std::unique_ptr<ApplicationMaster> am_;
  std::future<int> run_;
  std::unique_ptr<rpc::TonyAm::Stub> stub_;
};

}  // namespace tony::am
