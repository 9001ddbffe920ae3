#include "am/spec_barrier.h"

#include <gtest/gtest.h>

#include "am/job_state_fixture.h"
#include "rpc/cluster_pack.h"

namespace tony::am {
namespace {

// One executor's WaitClusterSpec as it sees it.
struct Call {
  rpc::WaitClusterSpecResponse response;
  int answers = 0;
  absl::Status status;
};

class SpecBarrierTest : public JobStateTest {
 protected:
  void SetUp() override {
    Init({{"tony.worker.instances", "2"}});
    rendezvous_ = std::make_unique<RendezvousHost>(&job_->spec(), nullptr);
    barrier_ = std::make_unique<SpecBarrier>(job_.get(), rendezvous_.get());
  }
  Call* Wait(const TaskRef& task, const std::string& container) {
    calls_.push_back(std::make_unique<Call>());
    Call* call = calls_.back().get();
    barrier_->Wait(
        task, container,
        Reply<rpc::WaitClusterSpecResponse>(&call->response, [call](const absl::Status& status) {
          ++call->answers;
          call->status = status;
        }));
    return call;
  }

  std::unique_ptr<RendezvousHost> rendezvous_;
  std::unique_ptr<SpecBarrier> barrier_;
  std::vector<std::unique_ptr<Call>> calls_;
};

TEST_F(SpecBarrierTest, EveryoneIsAnsweredWithTheWholeClusterOnceTheGangIsIn) {
  const std::string c0 = Allocate({"worker", 0});
  const std::string c1 = Allocate({"worker", 1});
  Register({"worker", 0}, 1000);
  Call* first = Wait({"worker", 0}, c0);
  EXPECT_EQ(first->answers, 0);  // worker:1 is not in yet
  Register({"worker", 1}, 1001);
  barrier_->Answer();
  ASSERT_EQ(first->answers, 1);
  EXPECT_TRUE(first->status.ok()) << first->status;
  EXPECT_TRUE(first->response.cluster().empty()) << "the cluster goes packed";
  ASSERT_TRUE(rpc::UnpackCluster(&first->response).ok());
  EXPECT_EQ(first->response.cluster().at("worker").addresses_size(), 2);
  EXPECT_EQ(first->response.num_tracked_tasks(), 2);
  EXPECT_TRUE(first->response.is_chief());
  // A late caller is answered at once.
  Call* second = Wait({"worker", 1}, c1);
  ASSERT_EQ(second->answers, 1);
  EXPECT_FALSE(second->response.is_chief());
  EXPECT_EQ(barrier_->size(), 0u);
}

std::vector<std::string> Workers(rpc::WaitClusterSpecResponse response) {
  EXPECT_TRUE(rpc::UnpackCluster(&response).ok());
  const rpc::AddressList& list = response.cluster().at("worker");
  return {list.addresses().begin(), list.addresses().end()};
}

// The packed cluster is kept while the job's addresses stay; new ones are packed anew.
TEST_F(SpecBarrierTest, AGangThatRestartsIsAnsweredWithItsNewAddresses) {
  Init({{"tony.application.framework", "pytorch"},
        {"tony.worker.instances", "2"},
        {"tony.worker.max-restarts", "1"},
        {"tony.worker.restart-backoff-ms", "0"}});
  // Both hold the job Init replaced.
  barrier_.reset();
  rendezvous_ = std::make_unique<RendezvousHost>(&job_->spec(), nullptr);
  barrier_ = std::make_unique<SpecBarrier>(job_.get(), rendezvous_.get());
  StartAll();
  Call* first = Wait({"worker", 0}, "c_worker:0");
  Call* second = Wait({"worker", 1}, "c_worker:1");
  ASSERT_EQ(first->answers, 1);
  ASSERT_EQ(second->answers, 1);
  EXPECT_EQ(first->response.packed_cluster(), second->response.packed_cluster());
  EXPECT_EQ(Workers(first->response), (std::vector<std::string>{"h:1000", "h:1001"}));

  Exit({"worker", 1}, 3);    // restarts the gang in place
  Exit({"worker", 0}, 143);  // stopped for it
  Register({"worker", 0}, 2000);
  Register({"worker", 1}, 2001);
  Call* again = Wait({"worker", 0}, "c_worker:0");
  ASSERT_EQ(again->answers, 1);
  ASSERT_TRUE(again->status.ok()) << again->status;
  EXPECT_EQ(Workers(again->response), (std::vector<std::string>{"h:2000", "h:2001"}));
  EXPECT_EQ(again->response.restart_count(), 1);
}

TEST_F(SpecBarrierTest, AnotherContainersCallIsNotFound) {
  Allocate({"worker", 0});
  Call* call = Wait({"worker", 0}, "container_of_someone_else");
  ASSERT_EQ(call->answers, 1);
  EXPECT_EQ(call->status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(barrier_->size(), 0u);
}

TEST_F(SpecBarrierTest, AWaiterWhoseContainerEndedIsCancelled) {
  const std::string c0 = Allocate({"worker", 0});
  Allocate({"worker", 1});
  Register({"worker", 0}, 1000);
  Call* call = Wait({"worker", 0}, c0);
  barrier_->ContainerEnded("some_other_container");
  EXPECT_EQ(call->answers, 0);
  barrier_->ContainerEnded(c0);
  ASSERT_EQ(call->answers, 1);
  EXPECT_EQ(call->status.code(), absl::StatusCode::kCancelled);
}

TEST_F(SpecBarrierTest, AStoppedTaskIsCancelled) {
  const std::string c0 = Allocate({"worker", 0});
  Allocate({"worker", 1});
  Register({"worker", 0}, 1000);
  Call* stopped = Wait({"worker", 0}, c0);
  job_->Kill("by the test");
  barrier_->Answer();
  ASSERT_EQ(stopped->answers, 1);
  EXPECT_EQ(stopped->status.code(), absl::StatusCode::kCancelled);
}

TEST_F(SpecBarrierTest, TheJobsEndCancelsWhatWaitsOnce) {
  const std::string c0 = Allocate({"worker", 0});
  Allocate({"worker", 1});
  Register({"worker", 0}, 1000);
  Call* waiting = Wait({"worker", 0}, c0);
  barrier_->CancelAll();
  barrier_->CancelAll();
  ASSERT_EQ(waiting->answers, 1);
  EXPECT_EQ(waiting->status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(barrier_->size(), 0u);
}

}  // namespace
}  // namespace tony::am
