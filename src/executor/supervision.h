#pragma once
// The timing rules of an executor supervising its user process, without the process: when a
// heartbeat is due, when a stop begins and why (the first reason counts), when the stopped tree is
// due for SIGKILL (the grace period, then every second until it is gone), when the AM counts as
// lost, and how long the loop may sleep. TaskExecutor::Supervise does what it says; tests drive
// it with a FakeClock.
//
// Threads: one (the executor's main thread).

#include <cstdint>
#include <string>

#include "common/clock.h"

namespace tony::executor {

struct SupervisionLimits {
  // Between heartbeats: tony.task.heartbeat-interval-ms, stretched for a large job
  // (config/heartbeat_pace.h).
  int64_t heartbeat_interval_ms = 1000;
  // The loop wakes at least this often for what it checks besides heartbeats (the execution
  // timeout, the Horovod driver's port): the configured interval, however far a large job
  // stretches the heartbeats'.
  int64_t check_interval_ms = 1000;
  int64_t stop_grace_ms = 5000;      // tony.task.stop-grace-ms
  int64_t execution_timeout_ms = 0;  // tony.task.executor.execution-timeout-ms; 0: none
  int max_missed_heartbeats = 25;    // tony.task.max-missed-heartbeats
  // When a later AM attempt adopts the running tasks (tony.am.retry-count): how long the AM may be
  // silent before it counts as lost, however many heartbeats failed (tony.am.recovery-timeout-ms);
  // 0: no later attempt, the missed heartbeats alone decide.
  int64_t am_recovery_ms = 0;
};

// A killed tree is killed again this often while anything of it survives.
inline constexpr int64_t kKillRepeatMs = 1000;

class Supervision {
 public:
  // `start_ms`: when the user process started, on `clock`. The first heartbeat is due at once.
  Supervision(const SupervisionLimits& limits, const Clock* clock, int64_t start_ms);

  // What is due now.
  struct Due {
    bool terminate = false;  // a stop began: SIGTERM the user's tree
    bool kill = false;       // the grace period is over: SIGKILL what is left
    bool heartbeat = false;
  };
  // Checks the clock: the executor's stop signal (`stop_signal` != 0) or the execution timeout
  // begins a stop.
  Due Check(int stop_signal);

  // Begins a stop for `reason` (the AM asked, a Horovod driver failed): true when this is the
  // first and the tree must get SIGTERM now; later reasons are ignored.
  bool BeginStop(const std::string& reason);

  // A heartbeat was sent: none is due again, and the wait is not cut short for one, until its
  // outcome (OnHeartbeat).
  void OnHeartbeatSent() { heartbeat_in_flight_ = true; }
  bool heartbeat_in_flight() const { return heartbeat_in_flight_; }
  // The outcome of a heartbeat, which schedules the next one an interval from now. False once
  // max_missed_heartbeats in a row have failed (with am_recovery_ms, once the AM has been silent
  // that long as well): the AM is lost.
  bool OnHeartbeat(bool ok);
  int failed_heartbeats() const { return failed_heartbeats_; }
  // When the current run of failed heartbeats began (the first one's time); 0 while the AM
  // answers.
  int64_t am_silent_since_ms() const { return am_silent_since_ms_; }
  // The AM missed max_missed_heartbeats and the executor waits for its next attempt.
  bool awaiting_next_am() const {
    return limits_.am_recovery_ms > 0 && failed_heartbeats_ >= limits_.max_missed_heartbeats;
  }

  // How long the loop may wait for the process before something is due (never negative).
  int64_t WaitMs() const;

  bool stopping() const { return kill_at_ms_ != 0; }
  const std::string& stop_reason() const { return stop_reason_; }

 private:
  const SupervisionLimits limits_;
  const Clock* const clock_;
  const int64_t start_ms_;
  int64_t next_heartbeat_ms_;
  bool heartbeat_in_flight_ = false;
  int failed_heartbeats_ = 0;
  int64_t am_silent_since_ms_ = 0;
  int64_t kill_at_ms_ = 0;  // when stopping: SIGKILL the tree at this time
  std::string stop_reason_;
};

}  // namespace tony::executor
