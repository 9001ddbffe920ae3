#pragma once
// A mutex, its scoped lock and a condition variable that clang's thread-safety analysis
// understands (libstdc++'s std::mutex carries no annotations). Members declared
// TONY_GUARDED_BY(mu_) may only be touched with mu_ held, and functions marked
// TONY_REQUIRES(mu_) only called so; scripts/check-thread-safety proves it with clang's
// -Wthread-safety. Under GCC the annotations are empty.
//
// Waiting on a condition is written as a loop in the annotated function, where the analysis
// sees the lock held, rather than as a predicate lambda, which it cannot see into:
//   MutexLock lock(mu_);
//   while (!ready_) changed_.Wait(mu_);

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "absl/base/thread_annotations.h"

#define TONY_GUARDED_BY(x) ABSL_GUARDED_BY(x)
#define TONY_PT_GUARDED_BY(x) ABSL_PT_GUARDED_BY(x)
#define TONY_REQUIRES(...) ABSL_EXCLUSIVE_LOCKS_REQUIRED(__VA_ARGS__)
#define TONY_EXCLUDES(...) ABSL_LOCKS_EXCLUDED(__VA_ARGS__)

namespace tony {

class ABSL_LOCKABLE Mutex {
 public:
  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  // Tells the analysis what the caller knows: the lock is held (a callback that its caller runs
  // under the lock).
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its scope.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

class CondVar {
 public:
  // Releases `mu` while waiting for a notification (or a spurious wake-up); holds it again on
  // return.
  void Wait(Mutex& mu) TONY_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait, for at most `timeout_ms`; false when the time ran out.
  bool WaitFor(Mutex& mu, int64_t timeout_ms) TONY_REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms));
  }
  // As Wait, until `deadline`; false when it has passed.
  bool WaitUntil(Mutex& mu, std::chrono::steady_clock::time_point deadline) TONY_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace tony
