#include "common/event_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace tony {
namespace {

TEST(EventLoopTest, RunsPostedTasksInOrderOnTheLoopThread) {
  EventLoop loop;
  std::vector<int> seen;
  std::thread::id loop_thread;
  std::thread runner([&] {
    loop_thread = std::this_thread::get_id();
    loop.Run(1000, [] {});
  });
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(loop.Post("n", [&, i] {
      EXPECT_EQ(std::this_thread::get_id(), loop_thread);
      seen.push_back(i);
      if (i == 99) loop.Stop();
    }));
  }
  runner.join();
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[i], i);
  EXPECT_FALSE(loop.Post("late", [] {})) << "a stopped loop refuses new tasks";
}

TEST(EventLoopTest, TasksQueuedBeforeStopStillRunInRunPending) {
  EventLoop loop;
  int ran = 0;
  ASSERT_TRUE(loop.Post("stop", [&] { loop.Stop(); }));
  ASSERT_TRUE(loop.Post("queued", [&] { ++ran; }));
  loop.Run(1000, [] {});
  loop.RunPending();
  EXPECT_EQ(ran, 1);
}

TEST(EventLoopTest, TickRunsPeriodically) {
  EventLoop loop;
  std::atomic<int> ticks = 0;
  loop.Run(1, [&] {
    if (++ticks == 3) loop.Stop();
  });
  EXPECT_EQ(ticks, 3);
}

}  // namespace
}  // namespace tony
