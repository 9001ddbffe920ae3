#include "common/event_loop.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace tony {

bool EventLoop::Enqueue(std::string name, Task task) {
  MutexLock lock(mu_);
  if (stopped_) return false;
  queue_.emplace_back(std::move(name), std::move(task));
  return true;
}

bool EventLoop::Post(std::string name, Task task) {
  if (!Enqueue(std::move(name), std::move(task))) return false;
  wake_.NotifyOne();
  return true;
}

bool EventLoop::PostUnhurried(std::string name, Task task) {
  return Enqueue(std::move(name), std::move(task));
}

void EventLoop::Run(int64_t tick_interval_ms, const Task& tick) {
  using Clock = std::chrono::steady_clock;
  auto next_tick = Clock::now() + std::chrono::milliseconds(tick_interval_ms);
  runner_.store(std::this_thread::get_id());
  mu_.lock();
  while (!stopped_) {
    while (!stopped_ && queue_.empty()) {
      if (!wake_.WaitUntil(mu_, next_tick)) break;
    }
    if (stopped_) break;
    // One task, or, when the tick is due, every task queued by now: unhurried ones waited for
    // this wake, and the tick (the AM's deadlines) must see them.
    size_t run = queue_.empty() ? 0 : 1;
    if (Clock::now() >= next_tick) run = queue_.size();
    for (; run > 0 && !stopped_ && !queue_.empty(); --run) {
      std::string name = std::move(queue_.front().first);
      Task task = std::move(queue_.front().second);
      queue_.pop_front();
      mu_.unlock();
      const auto began = Clock::now();
      task();
      Measure(name, began);
      mu_.lock();
    }
    if (stopped_) break;
    if (Clock::now() >= next_tick) {
      mu_.unlock();
      const auto began = Clock::now();
      tick();
      Measure("tick", began);
      mu_.lock();
      next_tick = Clock::now() + std::chrono::milliseconds(tick_interval_ms);
    }
  }
  mu_.unlock();
}

void EventLoop::Stop() {
  {
    MutexLock lock(mu_);
    stopped_ = true;
  }
  wake_.NotifyAll();
}

void EventLoop::RunPending() {
  while (true) {
    Task task;
    {
      MutexLock lock(mu_);
      if (queue_.empty()) return;
      task = std::move(queue_.front().second);
      queue_.pop_front();
    }
    task();
  }
}

void EventLoop::Measure(const std::string& name, std::chrono::steady_clock::time_point since) {
  const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - since)
                         .count();
  MutexLock lock(mu_);
  if (ms > longest_.ms) longest_ = {ms, name};
}

EventLoop::Stall EventLoop::LongestStall() const {
  MutexLock lock(mu_);
  return longest_;
}

bool EventLoop::IsCurrent() const {
  const std::thread::id runner = runner_.load();
  return runner == std::thread::id() || runner == std::this_thread::get_id();
}

namespace internal {
void NotOnLoop(const char* file, int line) {
  std::fprintf(stderr, "%s:%d: not on the event loop's thread\n", file, line);
  std::abort();
}
}  // namespace internal

bool EventLoop::stopped() const {
  MutexLock lock(mu_);
  return stopped_;
}

}  // namespace tony
