#include "executor/supervision.h"

#include <algorithm>

#include "common/strings.h"

namespace tony::executor {

Supervision::Supervision(const SupervisionLimits& limits, const Clock* clock, int64_t start_ms)
    : limits_(limits), clock_(clock), start_ms_(start_ms), next_heartbeat_ms_(clock->NowMs()) {}

Supervision::Due Supervision::Check(int stop_signal) {
  Due due;
  const int64_t now = clock_->NowMs();
  if (stop_signal != 0) {
    due.terminate |= BeginStop(StrCat("the executor received signal ", stop_signal));
  }
  if (limits_.execution_timeout_ms > 0 && now - start_ms_ >= limits_.execution_timeout_ms) {
    due.terminate |=
        BeginStop(StrCat("it ran longer than tony.task.executor.execution-timeout-ms = ",
                         limits_.execution_timeout_ms));
  }
  if (kill_at_ms_ != 0 && now >= kill_at_ms_) {
    due.kill = true;
    kill_at_ms_ = now + kKillRepeatMs;  // and again, should something survive
  }
  due.heartbeat = !heartbeat_in_flight_ && now >= next_heartbeat_ms_;
  return due;
}

bool Supervision::BeginStop(const std::string& reason) {
  if (kill_at_ms_ != 0) return false;
  stop_reason_ = reason;
  // At least 1: 0 means that no stop has begun.
  kill_at_ms_ = std::max<int64_t>(clock_->NowMs() + limits_.stop_grace_ms, 1);
  return true;
}

bool Supervision::OnHeartbeat(bool ok) {
  heartbeat_in_flight_ = false;
  if (!ok && failed_heartbeats_ == 0) am_silent_since_ms_ = clock_->NowMs();
  if (ok) am_silent_since_ms_ = 0;
  failed_heartbeats_ = ok ? 0 : failed_heartbeats_ + 1;
  next_heartbeat_ms_ = clock_->NowMs() + limits_.heartbeat_interval_ms;
  if (failed_heartbeats_ < limits_.max_missed_heartbeats) return true;
  return limits_.am_recovery_ms > 0 &&
         clock_->NowMs() - am_silent_since_ms_ < limits_.am_recovery_ms;
}

int64_t Supervision::WaitMs() const {
  const int64_t now = clock_->NowMs();
  // A heartbeat in flight wakes the loop when it ends.
  int64_t wait = heartbeat_in_flight_
                     ? limits_.check_interval_ms
                     : std::min(next_heartbeat_ms_ - now, limits_.check_interval_ms);
  if (kill_at_ms_ != 0) wait = std::min(wait, kill_at_ms_ - now);
  return std::max<int64_t>(0, wait);
}

}  // namespace tony::executor
