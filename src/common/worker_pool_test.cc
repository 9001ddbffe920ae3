#include "common/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <vector>

namespace tony {
namespace {

TEST(WorkerPoolTest, EveryResultComesBack) {
  WorkerPool pool(3);
  std::vector<std::future<int>> results;
  results.reserve(100);
  for (int i = 0; i < 100; ++i) results.push_back(pool.Submit([i] { return i * i; }));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(results[i].get(), i * i);
}

TEST(WorkerPoolTest, NoMoreThanItsThreadsRunAtOnce) {
  WorkerPool pool(2);
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  // Each item waits until two run at once (or its neighbours are done), so the pool's bound, not
  // the timing, decides how many overlap.
  std::promise<void> two_running;
  std::shared_future<void> go = two_running.get_future().share();
  std::atomic<bool> signalled{false};
  std::vector<std::future<void>> results;
  results.reserve(8);
  for (int i = 0; i < 8; ++i) {
    results.push_back(pool.Submit([&] {
      const int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      if (now == 2 && !signalled.exchange(true)) two_running.set_value();
      go.wait();
      --running;
    }));
  }
  for (std::future<void>& result : results) result.get();
  EXPECT_EQ(most.load(), 2);
  EXPECT_EQ(pool.threads(), 2);
}

TEST(WorkerPoolTest, TheDestructorFinishesWhatWasSubmitted) {
  std::atomic<int> done{0};
  {
    WorkerPool pool(1);
    for (int i = 0; i < 20; ++i) {
      (void)pool.Submit([&done] {
        ++done;
        return 0;
      });
    }
  }
  EXPECT_EQ(done.load(), 20);
}

TEST(WorkerPoolTest, AtLeastOneThread) {
  WorkerPool pool(0);
  EXPECT_EQ(pool.threads(), 1);
  EXPECT_EQ(pool.Submit([] { return std::string("ran"); }).get(), "ran");
}

}  // namespace
}  // namespace tony
