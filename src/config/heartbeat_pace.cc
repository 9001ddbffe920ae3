#include "config/heartbeat_pace.h"

#include <algorithm>

namespace tony::config {

HeartbeatPace ExecutorHeartbeat(const JobSpec& spec) {
  const int64_t interval = std::max<int64_t>(spec.heartbeat_interval_ms, 1);
  const int missed = std::max(spec.max_missed_heartbeats, 1);
  const int64_t deadline = interval * missed;
  // The interval at which the job's tasks together beat kHeartbeatsPerSecond times a second.
  const int64_t paced =
      (int64_t{spec.TotalTasks()} * 1000 + kHeartbeatsPerSecond - 1) / kHeartbeatsPerSecond;
  HeartbeatPace pace;
  pace.interval_ms = std::max(interval, std::min(paced, deadline / 3));
  pace.max_missed = static_cast<int>(std::max<int64_t>(deadline / pace.interval_ms, 1));
  return pace;
}

}  // namespace tony::config
