#pragma once
// A single thread that runs posted tasks in order and a periodic tick. The state a loop owns is
// touched only by tasks running on it, so it needs no locks. Post() may be called from any
// thread; Run() blocks the calling thread until Stop().

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>

#include "common/mutex.h"

namespace tony {

class EventLoop {
 public:
  using Task = std::function<void()>;

  // Queues `task`; `name` is for logs. Returns false, dropping the task, after Stop().
  bool Post(std::string name, Task task);
  // Queues `task` without waking the loop: it runs at the loop's next wake, at the latest just
  // before the next tick. For work that many callers send at a steady pace and that may wait a
  // tick.
  bool PostUnhurried(std::string name, Task task);
  // Runs tasks, and `tick` every `tick_interval_ms` (measured on the steady clock), until Stop().
  // A due tick runs after every task queued before it was due.
  void Run(int64_t tick_interval_ms, const Task& tick);
  // Ends Run() after the task in progress; tasks already queued stay queued. Any thread.
  void Stop();
  // After Run() returned: runs the tasks that were queued before Stop(). Their owners may rely on
  // them running (a queued RPC handler must finish its call).
  void RunPending();
  bool stopped() const;
  // Whether the calling thread may touch the loop's state: it is the thread that runs (or ran)
  // the loop, or the loop has not run yet (its owner is still setting up). Any thread.
  bool IsCurrent() const;

  // The longest that one task or tick held the loop, and its name ("tick" for the tick): how long
  // the loop could not answer anything else. Measured on the steady clock.
  struct Stall {
    int64_t ms = 0;
    std::string name;
  };
  Stall LongestStall() const;

 private:
  mutable Mutex mu_;
  CondVar wake_;
  std::deque<std::pair<std::string, Task>> queue_ TONY_GUARDED_BY(mu_);
  bool stopped_ TONY_GUARDED_BY(mu_) = false;
  Stall longest_ TONY_GUARDED_BY(mu_);
  bool Enqueue(std::string name, Task task) TONY_EXCLUDES(mu_);
  std::atomic<std::thread::id> runner_{};  // the thread of the last Run; none before it
  // Notes how long `name` held the loop since `since`.
  void Measure(const std::string& name, std::chrono::steady_clock::time_point since)
      TONY_EXCLUDES(mu_);
};

// Debug builds (no NDEBUG: the sanitizer builds): aborts, naming the place, when the calling
// thread is not `loop`'s (EventLoop::IsCurrent). Release builds: nothing.
#ifndef NDEBUG
#define TONY_DCHECK_ON_LOOP(loop) \
  ((loop).IsCurrent() ? (void)0 : ::tony::internal::NotOnLoop(__FILE__, __LINE__))
#else
#define TONY_DCHECK_ON_LOOP(loop) ((void)0)
#endif

namespace internal {
[[noreturn]] void NotOnLoop(const char* file, int line);
}  // namespace internal

}  // namespace tony
