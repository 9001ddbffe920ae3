#pragma once
// Time for tony's logic. Code that decides anything by time takes a Clock so that tests can
// advance time by hand (FakeClock) instead of sleeping.

#include <chrono>
#include <cstdint>

#include "common/mutex.h"

namespace tony {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds on a monotonic clock; only differences are meaningful.
  virtual int64_t NowMs() const = 0;
  // Milliseconds since the Unix epoch, for ids and records shown to people.
  virtual int64_t WallMs() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override;
  int64_t WallMs() const override;
  static SystemClock* Get();
};

// Time only moves when Advance() is called. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ms = 1'000'000) : now_ms_(start_ms) {}
  int64_t NowMs() const override {
    MutexLock lock(mu_);
    return now_ms_;
  }
  int64_t WallMs() const override { return NowMs(); }
  void Advance(int64_t ms) {
    MutexLock lock(mu_);
    now_ms_ += ms;
  }

 private:
  mutable Mutex mu_;
  int64_t now_ms_ TONY_GUARDED_BY(mu_);
};

}  // namespace tony
