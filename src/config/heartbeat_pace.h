#pragma once
// How often each executor of a job heartbeats. Every heartbeat is a TLS call the AM answers on its
// loop, 150 to 200 us of its CPU, so a job of thousands of tasks beating every second would keep
// a good part of a core busy for nothing but liveness. A job of more than
// kHeartbeatsPerSecond tasks stretches the configured interval (tony.task.heartbeat-interval-ms)
// until the AM receives about that many heartbeats a second, and never past a third of the
// deadline the configuration sets for a silent task (interval x tony.task.max-missed-heartbeats):
// a lost task is found within that same deadline, by the AM, as in a small job. The executor then
// gives the AM as many missed beats as fit in the deadline. What a stretched interval costs: the
// AM's stop of a task (a gang restart, a kill), fresh credentials and the metric samples reach or
// leave each task once per stretched interval instead of once per configured one.

#include <cstdint>

#include "config/job_spec.h"

namespace tony::config {

inline constexpr int kHeartbeatsPerSecond = 512;

struct HeartbeatPace {
  int64_t interval_ms = 1000;  // between an executor's heartbeats
  int max_missed = 25;         // in a row, before the executor takes the AM for gone
};

// The pace of `spec`'s executors: the configured one up to kHeartbeatsPerSecond tasks.
HeartbeatPace ExecutorHeartbeat(const JobSpec& spec);

}  // namespace tony::config
