#include "cluster/local/local_container_allocator.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

// Every callback comes from the allocator's own thread (container_allocator.h), the end of a
// container that was stopped before it was launched included.
TEST(LocalContainerAllocatorTest, ContainerStoppedBeforeLaunchIsReportedOnTheAllocatorsThread) {
  char pattern[] = "/tmp/tony-local-allocator-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  LocalAllocatorOptions options;
  options.app_id = "application_1_0001";
  options.job_dir = pattern;
  options.capacity.total = {1024, 4, 0};
  options.enforce_memory = false;
  LocalContainerAllocator allocator(options);

  std::mutex mu;
  std::condition_variable changed;
  std::optional<Container> granted;
  std::optional<ContainerExit> completed;
  std::thread::id completed_on;
  ContainerAllocator::Callbacks callbacks;
  callbacks.on_allocated = [&](Container container) {
    std::lock_guard lock(mu);
    granted = std::move(container);
    changed.notify_all();
  };
  callbacks.on_completed = [&](ContainerExit exit) {
    std::lock_guard lock(mu);
    completed = std::move(exit);
    completed_on = std::this_thread::get_id();
    changed.notify_all();
  };
  ASSERT_TRUE(allocator.Start("127.0.0.1", 1, "", callbacks).ok());
  allocator.Request({"worker", {256, 1, 0}, ""});
  std::unique_lock lock(mu);
  ASSERT_TRUE(
      changed.wait_for(lock, std::chrono::seconds(10), [&] { return granted.has_value(); }));
  const std::string id = granted->id;
  lock.unlock();
  allocator.Stop(id, 0);
  lock.lock();
  ASSERT_TRUE(
      changed.wait_for(lock, std::chrono::seconds(10), [&] { return completed.has_value(); }));
  EXPECT_EQ(completed->container_id, id);
  EXPECT_EQ(completed->cause, ContainerExit::Cause::kStoppedByAm);
  EXPECT_NE(completed_on, std::this_thread::get_id());
  lock.unlock();
  allocator.Shutdown();
  fs::remove_all(pattern);
}

// Grants come strictly in the order asked, as capacity frees: a large request is not overtaken
// by smaller ones behind it, and a released container's memory goes to the next in line.
TEST(LocalContainerAllocatorTest, RequestsAreGrantedInOrderAsCapacityFrees) {
  char pattern[] = "/tmp/tony-local-allocator-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  LocalAllocatorOptions options;
  options.app_id = "application_1_0002";
  options.job_dir = pattern;
  options.capacity.total = {1024, 2, 0};
  options.enforce_memory = false;
  LocalContainerAllocator allocator(options);

  std::mutex mu;
  std::condition_variable changed;
  std::vector<Container> granted;
  ContainerAllocator::Callbacks callbacks;
  callbacks.on_allocated = [&](Container container) {
    std::lock_guard lock(mu);
    granted.push_back(std::move(container));
    changed.notify_all();
  };
  callbacks.on_completed = [](ContainerExit) {};
  ASSERT_TRUE(allocator.Start("127.0.0.1", 1, "", callbacks).ok());
  auto wait_for_grants = [&](size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu);
    return changed.wait_for(lock, timeout, [&] { return granted.size() >= n; });
  };
  const std::chrono::milliseconds deadline(10000);
  allocator.Request({"worker", {512, 1, 0}, ""});
  allocator.Request({"ps", {768, 1, 0}, ""});      // does not fit beside the worker
  allocator.Request({"worker", {256, 1, 0}, ""});  // would fit, but waits its turn
  ASSERT_TRUE(wait_for_grants(1, deadline));
  // Nothing more comes without a release: a second grant would be the small request overtaking
  // the large one, which the monitor would do at once (this bounded wait cannot fail falsely).
  EXPECT_FALSE(wait_for_grants(2, std::chrono::milliseconds(500)))
      << granted[1].job_type << " was granted out of order";
  const std::string first = granted[0].id;
  EXPECT_EQ(granted[0].job_type, "worker");
  allocator.Release(first);
  ASSERT_TRUE(wait_for_grants(3, deadline));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(granted[1].job_type, "ps");
    EXPECT_EQ(granted[1].resources.memory_mb, 768);
    EXPECT_EQ(granted[2].job_type, "worker");
    EXPECT_NE(granted[1].id, first);
    EXPECT_NE(granted[2].id, granted[1].id);
  }
  // What can never be granted is refused up front, with the numbers.
  const absl::Status too_big = allocator.CheckFits({"worker", {4096, 1, 0}, ""});
  EXPECT_FALSE(too_big.ok());
  EXPECT_NE(std::string(too_big.message()).find("asks for 4g of memory"), std::string::npos)
      << too_big;
  allocator.Shutdown();
  fs::remove_all(pattern);
}

}  // namespace
}  // namespace tony::cluster
