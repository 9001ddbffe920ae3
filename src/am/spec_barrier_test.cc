#include "am/spec_barrier.h"

#include <gtest/gtest.h>

#include "am/job_state_fixture.h"

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
  EXPECT_EQ(first->response.cluster().at("worker").addresses_size(), 2);
  EXPECT_EQ(first->response.num_tracked_tasks(), 2);
  EXPECT_TRUE(first->response.is_chief());
  // A late caller is answered at once.
  Call* second = Wait({"worker", 1}, c1);
  ASSERT_EQ(second->answers, 1);
  EXPECT_FALSE(second->response.is_chief());
  EXPECT_EQ(barrier_->size(), 0u);
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
