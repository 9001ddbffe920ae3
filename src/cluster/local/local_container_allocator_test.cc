// The local allocator's granting, launching and callbacks: mostly with containers that are never
// launched; the launching cases start /bin/sh (the end-to-end suites launch real executors).

#include "cluster/local/local_container_allocator.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "common/archive.h"
#include "common/files.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "nlohmann/json.hpp"

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

  LocalContainerAllocator& Start(const ResourceAsk& capacity, int am_attempt = 1,
                                 bool keep_containers = false, bool keep_work_dirs = false) {
    LocalAllocatorOptions options;
    options.app_id = "application_1_0001";
    options.job_dir = dir_;
    options.capacity.total = capacity;
    options.enforce_memory = false;
    options.am_attempt = am_attempt;
    options.keep_containers = keep_containers;
    options.keep_work_dirs_on_failure = keep_work_dirs;
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

// A launch returns at once and localizes on the allocator's pool: one that cannot is reported as
// a failed launch, from the allocator's thread, and its capacity goes back.
TEST_F(LocalContainerAllocatorTest, ALaunchThatCannotLocalizeIsReportedAsAFailedLaunch) {
  LocalContainerAllocator& allocator = Start({1024, 4, 0});
  allocator.Request({"worker", {1024, 1, 0}, ""});
  ASSERT_TRUE(WaitForGrants(1));
  LaunchSpec spec;
  spec.argv = {"/bin/true"};
  spec.resources = {{dir_ + "/no-such-venv.zip", "venv", /*is_archive=*/true, /*shared=*/true}};
  const Container container = Granted()[0];
  ASSERT_TRUE(allocator.Launch(container, spec).ok());
  ASSERT_TRUE(WaitForCompletions(1));
  {
    std::lock_guard lock(mu_);
    EXPECT_EQ(completed_[0].container_id, container.id);
    EXPECT_EQ(completed_[0].cause, ContainerExit::Cause::kLaunchFailed);
    EXPECT_EQ(completed_[0].exit_code, kExitLaunchFailed);
    EXPECT_NE(completed_[0].diagnostics.find("no-such-venv.zip"), std::string::npos)
        << completed_[0].diagnostics;
    EXPECT_NE(completed_on_[0], std::this_thread::get_id());
  }
  EXPECT_EQ(allocator.RunningContainers(), 0);
  allocator.Request({"worker", {1024, 1, 0}, ""});  // all of the capacity is free again
  EXPECT_TRUE(WaitForGrants(2));
  // The working directory the launch made is gone with it (Shutdown waits for the removal).
  allocator.Shutdown();
  EXPECT_FALSE(fs::exists(dir_ + "/containers/" + container.id));
}

// An ended container's working directory goes while the job runs (Shutdown before Finish removes
// no working files: the job is not over), not a running one's; with
// tony.local.keep-work-dirs-on-failure the job's end decides, so it stays until then.
TEST_F(LocalContainerAllocatorTest, AnEndedContainersWorkingDirectoryGoesWithIt) {
  for (const bool keep : {false, true}) {
    SCOPED_TRACE(keep ? "keep-work-dirs-on-failure" : "default");
    completed_.clear();
    granted_.clear();
    // The running container says that it runs through a FIFO.
    const std::string ready = dir_ + "/ready";
    ASSERT_EQ(mkfifo(ready.c_str(), 0600), 0);
    const int ready_fd = open(ready.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(ready_fd, 0);
    LocalContainerAllocator& allocator = Start({1024, 4, 0}, 1, false, /*keep_work_dirs=*/keep);
    allocator.Request({"worker", {256, 1, 0}, ""});
    allocator.Request({"worker", {256, 1, 0}, ""});
    ASSERT_TRUE(WaitForGrants(2));
    const std::vector<Container> granted = Granted();
    LaunchSpec runs;
    runs.argv = {"/bin/sh", "-c", "echo x > written; echo > " + ready + "; exec sleep 300"};
    LaunchSpec ends;
    ends.argv = {"/bin/sh", "-c", "echo x > written"};
    ASSERT_TRUE(allocator.Launch(granted[0], runs).ok());
    pollfd fd = {ready_fd, POLLIN, 0};
    ASSERT_EQ(poll(&fd, 1, static_cast<int>(kDeadline.count())), 1);
    close(ready_fd);
    ASSERT_TRUE(allocator.Launch(granted[1], ends).ok());
    ASSERT_TRUE(WaitForCompletions(1));
    {
      std::lock_guard lock(mu_);
      ASSERT_EQ(completed_[0].container_id, granted[1].id);
      EXPECT_EQ(completed_[0].exit_code, 0) << completed_[0].diagnostics;
    }
    // The running container's directory is not the ended one's to take.
    EXPECT_TRUE(fs::exists(dir_ + "/containers/" + granted[0].id + "/written"));
    allocator.Shutdown();  // waits for a removal under way
    EXPECT_EQ(fs::exists(dir_ + "/containers/" + granted[1].id + "/written"), keep);
    allocator_.reset();
    fs::remove_all(dir_ + "/containers");
    fs::remove(ready);
  }
}

// Containers launched together, on the pool's threads at once, share one read-only copy of the
// job's venv, unpacked by one of them while the others wait: every task sees it whole (each
// directory is looked at after its container ended: kept, as tony.local.keep-work-dirs-on-failure
// keeps them).
TEST_F(LocalContainerAllocatorTest, ContainersLaunchedTogetherShareOneUnpackedVenv) {
  const std::string venv = dir_ + "/venv-src";
  fs::create_directories(venv + "/lib");
  // 0644 as a real venv's files are (the zip keeps modes); the test's directory itself is mkdtemp's
  // 0700, so no other user reaches them.
  ASSERT_TRUE(WriteFile(venv + "/lib/marker", "whole\n", 0644).ok());
  for (int i = 0; i < 200; ++i) {  // enough entries that unpacking takes a while
    ASSERT_TRUE(WriteFile(venv + "/lib/f" + std::to_string(i), std::string(4096, 'x'), 0644).ok());
  }
  ASSERT_TRUE(CreateZipFromDirectory(venv, dir_ + "/venv.zip").ok());
  constexpr int kTasks = 4;
  LocalContainerAllocator& allocator =
      Start({int64_t{kTasks} * 256, kTasks, 0}, 1, false, /*keep_work_dirs=*/true);
  for (int i = 0; i < kTasks; ++i) allocator.Request({"worker", {256, 1, 0}, ""});
  ASSERT_TRUE(WaitForGrants(kTasks));
  LaunchSpec spec;
  spec.argv = {"/bin/sh", "-c", "cat venv/lib/marker > seen"};
  spec.resources = {{dir_ + "/venv.zip", "venv", /*is_archive=*/true, /*shared=*/true}};
  for (const Container& container : Granted()) {
    ASSERT_TRUE(allocator.Launch(container, spec).ok());
  }
  ASSERT_TRUE(WaitForCompletions(kTasks));
  {
    std::lock_guard lock(mu_);
    for (const ContainerExit& exit : completed_) {
      EXPECT_EQ(exit.cause, ContainerExit::Cause::kExited) << exit.diagnostics;
      EXPECT_EQ(exit.exit_code, 0) << exit.container_id << ": " << exit.diagnostics;
    }
  }
  for (const Container& container : Granted()) {
    const std::string work_dir = dir_ + "/containers/" + container.id;
    absl::StatusOr<std::string> seen = ReadFile(work_dir + "/seen");
    ASSERT_TRUE(seen.ok()) << seen.status();
    EXPECT_EQ(*seen, "whole\n") << container.id;
    EXPECT_EQ(fs::read_symlink(work_dir + "/venv"), fs::path(dir_) / "shared" / "venv");
  }
  EXPECT_FALSE(fs::exists(dir_ + "/shared/venv.partial"));
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

// What an AM attempt that kept its containers leaves in running/: one record per container.
std::string Record(pid_t pid, uint64_t start_ticks, const std::string& id, int64_t memory_mb) {
  nlohmann::json record = {{"pid", pid},
                           {"start_ticks", start_ticks},
                           {"id", id},
                           {"job_type", "worker"},
                           {"host", "127.0.0.1"},
                           {"log_dir", "/logs/" + id},
                           {"memory_mb", memory_mb},
                           {"vcores", 1},
                           {"env", {{"CUDA_VISIBLE_DEVICES", ""}}},
                           {"gpus", nlohmann::json::array()}};
  return record.dump();
}

// The next attempt adopts what an earlier one left running: the container is its again, holds
// its capacity until it ends, and its end is reported (with an unknown exit status: it is not the
// new AM's child). A record of a process that is gone, or whose pid now names another process, is
// dropped.
TEST_F(LocalContainerAllocatorTest, AKeptContainerOfAnEarlierAttemptIsAdoptedUntilItEnds) {
  SpawnOptions spawn;
  spawn.argv = {"/bin/sleep", "300"};
  spawn.new_session = true;
  absl::StatusOr<pid_t> running = Spawn(spawn);
  ASSERT_TRUE(running.ok()) << running.status();
  const std::optional<ProcessInfo> info = ReadProcessInfo(*running);
  ASSERT_TRUE(info.has_value());
  fs::create_directories(dir_ + "/running");
  const std::string kept = "container_1_0001_01_000002";
  ASSERT_TRUE(
      WriteFile(dir_ + "/running/" + kept + ".json", Record(*running, info->start_ticks, kept, 768))
          .ok());
  // The same pid with another start time: not the process that was recorded.
  const std::string reused = "container_1_0001_01_000003";
  ASSERT_TRUE(WriteFile(dir_ + "/running/" + reused + ".json",
                        Record(*running, info->start_ticks + 1, reused, 256))
                  .ok());

  LocalContainerAllocator& allocator = Start({1024, 4, 0}, /*am_attempt=*/2,
                                             /*keep_containers=*/true);
  const std::vector<Container> previous = allocator.PreviousContainers();
  ASSERT_EQ(previous.size(), 1u);
  EXPECT_EQ(previous[0].id, kept);
  EXPECT_EQ(previous[0].job_type, "worker");
  EXPECT_EQ(previous[0].log_dir, "/logs/" + kept);
  EXPECT_EQ(previous[0].resources.memory_mb, 768);
  EXPECT_EQ(allocator.RunningContainers(), 1);
  EXPECT_FALSE(fs::exists(dir_ + "/running/" + reused + ".json"));
  // Its 768 MB are taken: 512 more wait for its end.
  allocator.Request({"worker", {512, 1, 0}, ""});
  EXPECT_FALSE(WaitForGrants(1, std::chrono::milliseconds(500)));

  kill(*running, SIGKILL);
  ASSERT_TRUE(WaitForCompletions(1));
  {
    std::lock_guard lock(mu_);
    EXPECT_EQ(completed_[0].container_id, kept);
    EXPECT_EQ(completed_[0].exit_code, kExitAborted);
    EXPECT_NE(completed_[0].diagnostics.find("exit status is unknown"), std::string::npos)
        << completed_[0].diagnostics;
  }
  EXPECT_FALSE(fs::exists(dir_ + "/running/" + kept + ".json"));
  ASSERT_TRUE(WaitForGrants(1));
  EXPECT_NE(Granted()[0].id.find("_02_"), std::string::npos) << Granted()[0].id;
  (void)WaitForExit(*running);  // the test's own child
}

}  // namespace
}  // namespace tony::cluster
