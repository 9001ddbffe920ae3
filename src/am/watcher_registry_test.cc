#include "am/watcher_registry.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace tony::am {
namespace {

// One watch as its client sees it: the status it got, once answered.
struct Watch {
  rpc::JobStatus response;
  int answers = 0;
  absl::Status status;
};

class WatcherRegistryTest : public ::testing::Test {
 protected:
  Watch* Add(int64_t after_version, int64_t max_wait_ms) {
    auto watch = std::make_unique<Watch>();
    Watch* w = watch.get();
    registry_.Add(after_version, max_wait_ms,
                  Reply<rpc::JobStatus>(&w->response, [w](const absl::Status& status) {
                    ++w->answers;
                    w->status = status;
                  }));
    watches_.push_back(std::move(watch));
    return w;
  }
  // Answers with the job at `version`.
  void Poll(int64_t version, bool complete = false) {
    registry_.Poll(version, complete,
                   [version](rpc::JobStatus* status) { status->set_version(version); });
  }

  FakeClock clock_;
  WatcherRegistry registry_{&clock_};
  std::vector<std::unique_ptr<Watch>> watches_;
};

TEST_F(WatcherRegistryTest, AnUnchangedJobIsAnsweredAtTheDeadlineAndNotBefore) {
  Watch* watch = Add(/*after_version=*/4, /*max_wait_ms=*/1000);
  Poll(4);
  clock_.Advance(999);
  Poll(4);
  EXPECT_EQ(watch->answers, 0);
  clock_.Advance(1);
  Poll(4);
  EXPECT_EQ(watch->answers, 1);
  EXPECT_TRUE(watch->status.ok());
  EXPECT_EQ(watch->response.version(), 4);
  EXPECT_EQ(registry_.size(), 0u);
}

TEST_F(WatcherRegistryTest, ANewerJobIsAnsweredAtOnce) {
  Watch* watch = Add(4, 60000);
  Poll(5);
  EXPECT_EQ(watch->answers, 1);
  EXPECT_EQ(watch->response.version(), 5);
}

TEST_F(WatcherRegistryTest, TheWaitIsClampedToAMinute) {
  Watch* forever = Add(4, int64_t{3600} * 1000);
  Watch* negative = Add(4, -5);
  Poll(4);
  EXPECT_EQ(negative->answers, 1);
  clock_.Advance(WatcherRegistry::kMaxWaitMs);
  Poll(4);
  EXPECT_EQ(forever->answers, 1);
}

TEST_F(WatcherRegistryTest, ChangesCloseTogetherGoOutTogetherButCompletionAtOnce) {
  Watch* first = Add(4, 60000);
  Poll(5);
  EXPECT_EQ(first->answers, 1);
  // The client comes back for what follows 5; 6 comes within the coalescing window.
  Watch* second = Add(5, 60000);
  clock_.Advance(WatcherRegistry::kCoalesceMs - 1);
  Poll(6);
  EXPECT_EQ(second->answers, 0);
  clock_.Advance(1);
  Poll(7);
  EXPECT_EQ(second->answers, 1);
  EXPECT_EQ(second->response.version(), 7);
  // The job's completion is not held back by the window.
  Watch* third = Add(7, 60000);
  Poll(8, /*complete=*/true);
  EXPECT_EQ(third->answers, 1);
}

TEST_F(WatcherRegistryTest, AnswerAllAnswersEveryWatcherOnce) {
  Watch* a = Add(4, 60000);
  Watch* b = Add(9, 60000);
  registry_.AnswerAll([](rpc::JobStatus* status) { status->set_complete(true); });
  EXPECT_EQ(registry_.size(), 0u);
  EXPECT_EQ(a->answers, 1);
  EXPECT_EQ(b->answers, 1);
  EXPECT_TRUE(b->response.complete());
  Poll(20);
  EXPECT_EQ(a->answers, 1);
}

}  // namespace
}  // namespace tony::am
