#include "common/event_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

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

TEST(EventLoopTest, IsCurrentOnlyOnTheLoopsThreadOnceItRuns) {
  EventLoop loop;
  EXPECT_TRUE(loop.IsCurrent()) << "before Run, its owner sets it up";
  std::promise<bool> on_loop;
  std::thread runner([&] { loop.Run(1000, [] {}); });
  ASSERT_TRUE(loop.Post("check", [&] {
    on_loop.set_value(loop.IsCurrent());
    loop.Stop();
  }));
  EXPECT_TRUE(on_loop.get_future().get());
  // The task ran, so Run had started: this thread is not the loop's.
  EXPECT_FALSE(loop.IsCurrent());
  runner.join();
  EXPECT_FALSE(loop.IsCurrent()) << "after Run, still the runner's";
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

// An unhurried task does not wake the loop, but it is not lost or reordered: the next wake runs
// it, in its place in the queue.
TEST(EventLoopTest, AnUnhurriedTaskRunsInItsPlaceAtTheNextWake) {
  EventLoop loop;
  std::vector<std::string> seen;
  std::promise<void> running;
  std::thread runner([&] { loop.Run(3'600'000, [] {}); });  // no tick within the test
  ASSERT_TRUE(loop.Post("first", [&] { running.set_value(); }));
  running.get_future().wait();
  ASSERT_TRUE(loop.PostUnhurried("beat", [&] { seen.emplace_back("beat"); }));
  ASSERT_TRUE(loop.Post("wake", [&] {
    seen.emplace_back("wake");
    loop.Stop();
  }));
  runner.join();
  EXPECT_EQ(seen, (std::vector<std::string>{"beat", "wake"}));
  EXPECT_FALSE(loop.PostUnhurried("late", [] {})) << "a stopped loop refuses new tasks";
}

// With nothing else to wake it, the loop runs an unhurried task by its next tick.
TEST(EventLoopTest, AnUnhurriedTaskRunsByTheNextTickWhenNothingElseWakesTheLoop) {
  EventLoop loop;
  std::promise<void> running;
  std::atomic<bool> ran = false;
  std::thread runner([&] {
    loop.Run(20, [&] {
      if (ran) loop.Stop();
    });
  });
  ASSERT_TRUE(loop.Post("first", [&] { running.set_value(); }));
  running.get_future().wait();
  ASSERT_TRUE(loop.PostUnhurried("beat", [&] { ran = true; }));
  runner.join();  // the tick stops the loop once the task ran: a lost task would hang the test
  EXPECT_TRUE(ran);
}

// The tick sees every unhurried task queued before it was due (the AM's deadline for a silent
// task must not miss heartbeats that waited for the wake).
TEST(EventLoopTest, UnhurriedTasksQueuedBeforeADueTickRunBeforeIt) {
  EventLoop loop;
  std::atomic<int> ran = 0;
  std::promise<void> first_tick;
  int ticks = 0;
  std::vector<int> seen_by_tick;
  std::thread runner([&] {
    loop.Run(50, [&] {
      if (++ticks == 1) first_tick.set_value();
      seen_by_tick.push_back(ran);
      if (ticks == 2) loop.Stop();
    });
  });
  first_tick.get_future().wait();
  // Queued while the loop waits for its next tick, which nothing else wakes it before.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(loop.PostUnhurried("beat", [&] { ++ran; }));
  runner.join();
  ASSERT_EQ(seen_by_tick.size(), 2u);
  EXPECT_EQ(seen_by_tick[1], 5) << "the second tick ran before the beats queued for it";
}

// The longest that one task held the loop is what the AM reports of its loop's stalls.
TEST(EventLoopTest, TheLongestTaskIsMeasuredWithItsName) {
  EventLoop loop;
  EXPECT_EQ(loop.LongestStall().ms, 0);
  ASSERT_TRUE(loop.Post("quick", [] {}));
  ASSERT_TRUE(loop.Post("slow", [] {
    // The task's own work: it holds the loop for 30 ms.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
    while (std::chrono::steady_clock::now() < until) {
    }
  }));
  ASSERT_TRUE(loop.Post("stop", [&] { loop.Stop(); }));
  loop.Run(1000, [] {});
  const EventLoop::Stall stall = loop.LongestStall();
  EXPECT_EQ(stall.name, "slow");
  EXPECT_GE(stall.ms, 30);
}

}  // namespace
}  // namespace tony
