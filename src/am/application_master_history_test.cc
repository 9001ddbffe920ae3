// The history the AM writes of a job, on the local disk, with the AM's control plane over real
// gRPC on loopback and a fake allocator (application_master_test_util.h).

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "am/application_master_test_util.h"
#include "history/history_format.h"
#include "history/history_fs.h"
#include "nlohmann/json.hpp"

namespace tony::am {
namespace {

// A wall clock that moves on a millisecond each time it is read, so that anything stamped later
// has a later time; the monotonic clock is the system's, for the AM's timers.
class TickingWallClock final : public Clock {
 public:
  int64_t NowMs() const override { return SystemClock::Get()->NowMs(); }
  int64_t WallMs() const override { return wall_ms_.fetch_add(1) + 1; }

 private:
  mutable std::atomic<int64_t> wall_ms_{1'800'000'000'000};
};

// An AM that keeps the job's history on the local disk.
class ApplicationMasterWithHistoryTest : public ApplicationMasterTest {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/tony-am-history-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    root_ = dir;
    history_fs_ = history::LocalHistoryFs();
    history_dirs_ = {root_ + "/intermediate", root_ + "/finished"};
    clock_ = &ticking_clock_;
    ApplicationMasterTest::SetUp();
  }
  void TearDown() override {
    ApplicationMasterTest::TearDown();
    std::filesystem::remove_all(root_);
  }
  // The finished history's events, in the order written.
  std::vector<nlohmann::json> FinishedEvents() const {
    std::vector<nlohmann::json> events;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root_ + "/finished")) {
      if (entry.path().filename() != history::kEventsFile) continue;
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);) {
        if (!line.empty()) events.push_back(nlohmann::json::parse(line));
      }
    }
    return events;
  }

  TickingWallClock ticking_clock_;
  std::string root_;
};

// The last task's end decides the job in the same step: the history has the task's end first,
// and no event goes back in time (the decision used to be written before what led to it).
TEST_F(ApplicationMasterWithHistoryTest, TheDecisionComesAfterTheTaskEndsThatLedToIt) {
  Allocate("c1");
  Allocate("c2");
  ASSERT_TRUE(allocator_.WaitFor([&] { return allocator_.launched_.size() == 2; }));
  ASSERT_TRUE(Register(0, "c1", 7001).ok());
  ASSERT_TRUE(Register(1, "c2", 7002).ok());
  for (const char* id : {"c1", "c2"}) {
    allocator_.callbacks_.on_completed({id, 0, "", cluster::ContainerExit::Cause::kExited});
  }
  ASSERT_EQ(run_.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(run_.get(), 0);
  run_ = std::async(std::launch::async, [] { return 0; });  // for TearDown's wait

  const std::vector<nlohmann::json> events = FinishedEvents();
  std::vector<std::string> kinds;
  for (size_t i = 0; i < events.size(); ++i) {
    kinds.push_back(events[i].value("kind", "") + " " + events[i].value("task", ""));
    if (i > 0) {
      EXPECT_LE(events[i - 1].value("time_ms", int64_t{0}), events[i].value("time_ms", int64_t{0}))
          << "event " << i << " (" << kinds.back() << ") goes back in time";
    }
  }
  ASSERT_GE(kinds.size(), 4u);
  EXPECT_EQ(kinds[kinds.size() - 4], std::string(history::kEventTaskFinished) + " worker:0");
  EXPECT_EQ(kinds[kinds.size() - 3], std::string(history::kEventTaskFinished) + " worker:1");
  EXPECT_EQ(kinds[kinds.size() - 2], std::string(history::kEventDecided) + " ");
  EXPECT_EQ(kinds.back(), std::string(history::kEventFinished) + " ");
}

}  // namespace
}  // namespace tony::am
