#pragma once
// The job's history as the AM writes it (history/history_format.h): its events from the state
// machine's task transitions, metric samples from heartbeats, the tasks' output, the resolved
// configuration, and job.json; and the live copy the status page shows (the newest events and
// samples, the configuration, who runs the job). Everything is queued to the HistoryWriter's own
// thread; nothing here waits on a disk or on HDFS. Without a history file system only the live
// copy is kept.
//
// Threads: the AM's loop; Close on the finisher's thread, while the loop may still record (the
// HistoryWriter takes both; what comes after Close is dropped).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "am/job_state.h"
#include "am/status_page.h"
#include "common/clock.h"
#include "history/history_reader.h"
#include "history/history_writer.h"
#include "rpc/tony.pb.h"

namespace tony::am {

struct HistoryRecorderOptions {
  std::string app_id;
  std::string user;
  std::string backend;
  std::string host;       // the AM's
  std::string conf_file;  // the job's resolved configuration (tony-final.xml)
  int am_attempt = 1;
  int64_t submitted_ms = 0;                // wall clock; 0: unknown
  std::shared_ptr<history::HistoryFs> fs;  // none: no history, the live copy only
  history::HistoryDirs dirs;
  // A later AM attempt takes the job up from this history: its events are written at once.
  bool prompt_events = false;
};

class HistoryRecorder {
 public:
  // What the live copy keeps at most of the newest events and samples.
  static constexpr size_t kLiveEvents = 20000;
  static constexpr size_t kLiveSamples = 100000;

  HistoryRecorder(HistoryRecorderOptions options, const config::JobSpec* spec, const Clock* clock);

  // Starts the history: the configuration, job.json from `status`, and the AM's start (and the
  // submission, on the first attempt).
  void Open(const std::string& tracking_url, const rpc::JobStatus& status);
  // What the state machine took its tasks through since it was last asked, in the order it
  // made them (TaskTransition::seq, TaskEvent::seq): an event per transition the history records
  // (see history_format.h), and its HUNG, GANG_RESTART, STRAGGLER, PREEMPTING and MODEL_PARAMS
  // notices (JobStateMachine::TakeNotices) as TASK_HUNG, GANG_RESTARTED, TASK_STRAGGLING, ... with
  // the reason as diagnostics.
  void RecordChanges(const std::vector<TaskTransition>& transitions,
                     const std::vector<TaskEvent>& notices);
  // A heartbeat's sample of `attempt` of its task, at most one per task and metrics interval
  // (every GPU sample: the executor takes those at that interval).
  void RecordMetrics(const rpc::HeartbeatRequest& heartbeat, int attempt);
  // Output of a container at `offset` of its stream: what a retried call sends again is written
  // once, and what never came is marked as a gap.
  void AppendOutput(const TaskRef& task, int attempt, const std::string& container_id,
                    const std::string& stream, int64_t offset, const std::string& data);
  // APPLICATION_DECIDED: the job's end is decided, and its tasks are being stopped.
  void RecordDecision(JobState state, const std::string& diagnostics);
  void RecordJobEnd(JobState state, const std::string& diagnostics);
  // An AM attempt that adopted the running tasks: the events an earlier attempt wrote (empty when
  // there is no history, or it cannot be read: the error says why).
  // When the file's last line is torn (the AM died mid-write), this attempt's first event starts
  // on a line of its own.
  absl::StatusOr<std::vector<history::HistoryEvent>> ReadEarlierEvents();
  // The output of `attempt` of `task` in an adopted container goes on where the history has it.
  void ResumeOutput(const TaskRef& task, int attempt, const std::string& container_id);
  // job.json: the job and its `status`.
  std::string JobJson(const rpc::JobStatus& status) const;
  // Writes what is queued and moves the history to the finished directory, within `timeout_ms`.
  // Returns where it went (OK), or why it is incomplete.
  absl::StatusOr<std::string> Close(const std::string& job_json, int64_t timeout_ms);

  bool writing() const { return writer_ != nullptr; }
  const LiveHistory& live() const { return live_; }

 private:
  void RecordEvent(const history::HistoryEvent& event);
  void RecordTransition(const TaskTransition& t);
  void RecordNotice(const TaskEvent& notice);
  // An event of the job's own with its state (APPLICATION_DECIDED, APPLICATION_FINISHED).
  void RecordJobState(const char* kind, JobState state, const std::string& diagnostics);
  bool torn_events_ = false;  // the earlier attempt's events.jsonl ends in a partial line

  const HistoryRecorderOptions options_;
  const config::JobSpec* const spec_;
  const Clock* const clock_;
  std::unique_ptr<history::HistoryWriter> writer_;
  LiveHistory live_;
  std::map<TaskRef, int64_t> last_metric_ms_;  // when each task's metrics were last recorded
  // How much of each container's stdout and stderr the history has: {container id, stream}.
  std::map<std::pair<std::string, std::string>, int64_t> output_offsets_;
};

}  // namespace tony::am
