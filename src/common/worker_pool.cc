#include "common/worker_pool.h"

#include <algorithm>

namespace tony {

WorkerPool::WorkerPool(int threads) {
  const int n = std::max(1, threads);
  threads_.reserve(n);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  for (std::thread& thread : threads_) thread.join();
}

void WorkerPool::Enqueue(std::function<void()> work) {
  {
    MutexLock lock(mu_);
    queue_.push_back(std::move(work));
  }
  wake_.NotifyOne();
}

void WorkerPool::Run() {
  while (true) {
    std::function<void()> work;
    {
      MutexLock lock(mu_);
      while (queue_.empty() && !stopping_) wake_.Wait(mu_);
      // What was submitted before the destructor still runs: its futures are waited on.
      if (queue_.empty()) return;
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work();
  }
}

}  // namespace tony
