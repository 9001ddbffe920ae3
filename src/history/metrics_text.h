#pragma once
// Jobs as Prometheus metrics, in its text exposition format (version 0.0.4, which Prometheus and
// OpenMetrics scrapers both read): what the AM's status page and `tony history` serve at /metrics.
//
// Every series is labelled with the job's app_id; a task's also with task_type and task_index.
//   tony_job_info                      1, with name, user, framework, backend and queue
//   tony_job_state                     1 for the job's state, 0 for the others
//   tony_job_start_time_seconds, tony_job_end_time_seconds (once it ended)
//   tony_job_tasks                     tasks by state (every state, 0 included)
//   tony_job_task_restarts_total       attempts that ended and ran again, by cause
//   tony_job_task_failures_total       attempts that ended badly, by cause (the restarted ones and
//                                      the tasks that ended FAILED)
//   tony_task_attempt, tony_task_heartbeats_total, tony_task_peak_memory_bytes
//   tony_task_progress_step, tony_task_progress_total_steps, tony_task_progress_ratio
// and from a task's newest sample of its current attempt (where the caller has samples):
//   tony_task_cpu_seconds_total, tony_task_memory_bytes, tony_task_gpu_utilization_ratio,
//   tony_task_gpu_memory_bytes, tony_task_reported_value (each value the task reported, by name)
//
// A cause is one of exit_code, signal, preempted, node_lost, disks_failed, memory,
// lost_heartbeat, hung, gang_restart (what its exit code says, common/task_exit.h), and for a
// restart also none (the attempt had succeeded); every cause's counter is there, 0 included.
//
// Pure functions: no IO.

#include <string>
#include <string_view>
#include <vector>

#include "history/history_reader.h"

namespace tony::history {

// The Content-Type of the text.
inline constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

struct JobMetrics {
  const JobInfo* job = nullptr;
  // The job's samples (metrics.jsonl), any order; may be empty.
  const std::vector<MetricSample>* samples = nullptr;
};

std::string RenderMetricsText(const std::vector<JobMetrics>& jobs);

// The cause an attempt's exit code gives it (see above); "" for 0.
std::string_view ExitCause(int exit_code);

}  // namespace tony::history
