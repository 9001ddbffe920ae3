#include "cluster/local/local_capacity.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "cluster/local/local_container_allocator.h"

namespace tony::cluster {
namespace {

TEST(LocalCapacityTest, VcoresAreALimitOnlyWhenTonyLocalVcoresIsSet) {
  config::LocalBackendSpec unset;
  unset.memory_mb = 4096;
  const LocalCapacity shared = ResolveLocalCapacity(unset);
  EXPECT_FALSE(shared.enforce_vcores);
  EXPECT_GE(shared.total.vcores, 1);  // the machine's CPUs, for what is shown
  EXPECT_TRUE(CheckFitsLocally(shared, "job type worker", {1024, 1000, 0}).ok());
  // Memory stays a hard limit.
  absl::Status memory = CheckFitsLocally(shared, "job type worker", {8192, 1, 0});
  ASSERT_FALSE(memory.ok());
  EXPECT_NE(memory.message().find("tony.local.memory"), std::string::npos) << memory;

  config::LocalBackendSpec limited = unset;
  limited.vcores = 2;
  const LocalCapacity enforced = ResolveLocalCapacity(limited);
  EXPECT_TRUE(enforced.enforce_vcores);
  EXPECT_TRUE(CheckFitsLocally(enforced, "job type worker", {1024, 2, 0}).ok());
  absl::Status vcores = CheckFitsLocally(enforced, "job type worker", {1024, 3, 0});
  ASSERT_FALSE(vcores.ok());
  EXPECT_NE(vcores.message().find("asks for 3 vcores, but this machine offers 2"),
            std::string::npos)
      << vcores;
}

// Grants as they come from an allocator on a 4-vcore machine, three 4-vcore asks at once.
class LocalGrantsTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    ASSERT_NE(mkdtemp(dir_), nullptr);
    LocalAllocatorOptions options;
    options.app_id = "application_1_0001";
    options.job_dir = dir_;
    options.capacity.total = {4096, 4, 0};
    options.capacity.enforce_vcores = GetParam();
    options.enforce_memory = false;
    allocator_ = std::make_unique<LocalContainerAllocator>(options);
    ContainerAllocator::Callbacks callbacks;
    callbacks.on_allocated = [this](Container container) {
      std::lock_guard lock(mu_);
      granted_.push_back(container.id);
      changed_.notify_all();
    };
    callbacks.on_completed = [](ContainerExit) {};
    ASSERT_TRUE(allocator_->Start("127.0.0.1", 1, "", callbacks).ok());
    for (int i = 0; i < 3; ++i) allocator_->Request({"worker", {256, 4, 0}, ""});
  }
  void TearDown() override {
    allocator_->Shutdown();
    std::filesystem::remove_all(dir_);
  }
  bool WaitForGrants(size_t n) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return granted_.size() >= n; });
  }

  char dir_[64] = "/tmp/tony-local-capacity-XXXXXX";
  std::unique_ptr<LocalContainerAllocator> allocator_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::string> granted_;
};

TEST_P(LocalGrantsTest, VcoresHoldAsksBackOnlyWhenEnforced) {
  if (!GetParam()) {
    // Time-shared CPUs: all three at once.
    ASSERT_TRUE(WaitForGrants(3));
    return;
  }
  // A hard limit: one at a time, the next once the one before is returned.
  ASSERT_TRUE(WaitForGrants(1));
  for (size_t n = 1; n < 3; ++n) {
    std::string id;
    {
      std::lock_guard lock(mu_);
      ASSERT_EQ(granted_.size(), n);
      id = granted_.back();
    }
    allocator_->Release(id);
    ASSERT_TRUE(WaitForGrants(n + 1));
  }
}

INSTANTIATE_TEST_SUITE_P(Vcores, LocalGrantsTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Enforced" : "TimeShared"; });

}  // namespace
}  // namespace tony::cluster
