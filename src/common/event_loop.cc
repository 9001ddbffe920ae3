#include "common/event_loop.h"

#include <chrono>

namespace tony {

bool EventLoop::Post(std::string name, Task task) {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return false;
    queue_.emplace_back(std::move(name), std::move(task));
  }
  wake_.notify_one();
  return true;
}

void EventLoop::Run(int64_t tick_interval_ms, const Task& tick) {
  using Clock = std::chrono::steady_clock;
  auto next_tick = Clock::now() + std::chrono::milliseconds(tick_interval_ms);
  std::unique_lock lock(mu_);
  while (!stopped_) {
    if (queue_.empty()) {
      wake_.wait_until(lock, next_tick, [&] { return stopped_ || !queue_.empty(); });
    }
    if (stopped_) break;
    if (!queue_.empty()) {
      Task task = std::move(queue_.front().second);
      queue_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
    if (Clock::now() >= next_tick) {
      lock.unlock();
      tick();
      lock.lock();
      next_tick = Clock::now() + std::chrono::milliseconds(tick_interval_ms);
    }
  }
}

void EventLoop::Stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  wake_.notify_all();
}

void EventLoop::RunPending() {
  while (true) {
    Task task;
    {
      std::lock_guard lock(mu_);
      if (queue_.empty()) return;
      task = std::move(queue_.front().second);
      queue_.pop_front();
    }
    task();
  }
}

bool EventLoop::stopped() const {
  std::lock_guard lock(mu_);
  return stopped_;
}

}  // namespace tony
