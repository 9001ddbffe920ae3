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

}  // namespace
}  // namespace tony::cluster
