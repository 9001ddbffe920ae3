// The local allocator's granting and its callbacks, with containers that are never launched (no
// processes: the end-to-end suites launch real ones).

#include "cluster/local/local_container_allocator.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::milliseconds kDeadline(10000);

// An allocator over a temporary job directory with `capacity`, and what its callbacks delivered.
class LocalContainerAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tony-local-allocator-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (allocator_) allocator_->Shutdown();
    fs::remove_all(dir_);
  }

  LocalContainerAllocator& Start(const ResourceAsk& capacity) {
    LocalAllocatorOptions options;
    options.app_id = "application_1_0001";
    options.job_dir = dir_;
    options.capacity.total = capacity;
    options.enforce_memory = false;
    allocator_ = std::make_unique<LocalContainerAllocator>(options);
    ContainerAllocator::Callbacks callbacks;
    callbacks.on_allocated = [this](Container container) {
      std::lock_guard lock(mu_);
      granted_.push_back(std::move(container));
      changed_.notify_all();
    };
    callbacks.on_completed = [this](ContainerExit exit) {
      std::lock_guard lock(mu_);
      completed_.push_back(std::move(exit));
      completed_on_.push_back(std::this_thread::get_id());
      changed_.notify_all();
    };
    EXPECT_TRUE(allocator_->Start("127.0.0.1", 1, "", callbacks).ok());
    return *allocator_;
  }

  // What was granted so far.
  std::vector<Container> Granted() {
    std::lock_guard lock(mu_);
    return granted_;
  }
  // Whether `n` containers were granted (or completed) within `timeout`.
  bool WaitForGrants(size_t n, std::chrono::milliseconds timeout = kDeadline) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, timeout, [&] { return granted_.size() >= n; });
  }
  bool WaitForCompletions(size_t n) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, kDeadline, [&] { return completed_.size() >= n; });
  }

  std::string dir_;
  std::unique_ptr<LocalContainerAllocator> allocator_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Container> granted_;
  std::vector<ContainerExit> completed_;
  std::vector<std::thread::id> completed_on_;
};

// Every callback comes from the allocator's own thread (container_allocator.h), the end of a
// container that was stopped before it was launched included.
TEST_F(LocalContainerAllocatorTest, ContainerStoppedBeforeLaunchIsReportedOnTheAllocatorsThread) {
  LocalContainerAllocator& allocator = Start({1024, 4, 0});
  allocator.Request({"worker", {256, 1, 0}, ""});
  ASSERT_TRUE(WaitForGrants(1));
  const std::string id = Granted()[0].id;
  allocator.Stop(id, 0);
  ASSERT_TRUE(WaitForCompletions(1));
  std::lock_guard lock(mu_);
  EXPECT_EQ(completed_[0].container_id, id);
  EXPECT_EQ(completed_[0].cause, ContainerExit::Cause::kStoppedByAm);
  EXPECT_NE(completed_on_[0], std::this_thread::get_id());
}

// Grants come strictly in the order asked, as capacity frees: a large request is not overtaken
// by smaller ones behind it, and a released container's memory goes to the next in line.
TEST_F(LocalContainerAllocatorTest, RequestsAreGrantedInOrderAsCapacityFrees) {
  LocalContainerAllocator& allocator = Start({1024, 2, 0});
  allocator.Request({"worker", {512, 1, 0}, ""});
  allocator.Request({"ps", {768, 1, 0}, ""});      // does not fit beside the worker
  allocator.Request({"worker", {256, 1, 0}, ""});  // would fit, but waits its turn
  ASSERT_TRUE(WaitForGrants(1));
  // Nothing more comes without a release: a second grant would be the small request overtaking
  // the large one, which the monitor would do at once (this bounded wait cannot fail falsely).
  EXPECT_FALSE(WaitForGrants(2, std::chrono::milliseconds(500)))
      << Granted()[1].job_type << " was granted out of order";
  const std::string first = Granted()[0].id;
  EXPECT_EQ(Granted()[0].job_type, "worker");
  allocator.Release(first);
  ASSERT_TRUE(WaitForGrants(3));
  const std::vector<Container> granted = Granted();
  EXPECT_EQ(granted[1].job_type, "ps");
  EXPECT_EQ(granted[1].resources.memory_mb, 768);
  EXPECT_EQ(granted[2].job_type, "worker");
  EXPECT_NE(granted[1].id, first);
  EXPECT_NE(granted[2].id, granted[1].id);
  // What can never be granted is refused up front, with the numbers.
  const absl::Status too_big = allocator.CheckFits({"worker", {4096, 1, 0}, ""});
  EXPECT_FALSE(too_big.ok());
  EXPECT_NE(std::string(too_big.message()).find("asks for 4g of memory"), std::string::npos)
      << too_big;
}

}  // namespace
}  // namespace tony::cluster
