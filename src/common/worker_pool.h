#pragma once
// A fixed number of threads that run submitted work in the order it came: for work that would
// otherwise start one thread per item (a job's uploads, archives to unpack), so that a job of a
// thousand files does not start a thousand threads. Each Submit returns a future of the work's
// result. The destructor runs what was submitted to the end, then joins the threads.
//
// Threads: Submit from any thread; the work runs on the pool's threads.

#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace tony {

class WorkerPool {
 public:
  // At least one thread.
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  template <typename F>
  auto Submit(F work) -> std::future<decltype(work())> {
    using Result = decltype(work());
    auto task = std::make_shared<std::packaged_task<Result()>>(std::move(work));
    std::future<Result> result = task->get_future();
    Enqueue([task] { (*task)(); });
    return result;
  }

  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  void Enqueue(std::function<void()> work);
  void Run();

  Mutex mu_;
  CondVar wake_;
  std::deque<std::function<void()>> queue_ TONY_GUARDED_BY(mu_);
  bool stopping_ TONY_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace tony
