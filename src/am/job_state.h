#pragma once
// The job's state machine: tasks, their attempts and states, the gang barrier, timeouts and the
// failure policy (TonY's failure rules: docs/running-jobs.md, "How a job ends"). Plain data driven
// by events; it performs no IO and returns what the AM must do as Actions. Time comes from the
// injected Clock.
//
// Thread: owned by the AM's event loop; not thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/task_exit.h"
#include "config/job_spec.h"

namespace tony::am {

using config::TaskRef;
struct RecoveredJob;  // am/job_recovery.h

enum class TaskState {
  kNew,
  kRequested,   // container asked for
  kAllocated,   // container granted, executor starting
  kRegistered,  // address known, waiting for the cluster spec
  kRunning,     // cluster spec handed out
  kSucceeded,
  kFailed,
  kFinished,  // stopped by the AM
};
bool IsTerminal(TaskState state);
std::string_view ToString(TaskState state);

enum class JobState { kRunning, kSucceeded, kFailed, kKilled };
std::string_view ToString(JobState state);

// How far a task is, as it reports it (rpc::TaskProgress).
struct TaskProgress {
  bool has_step = false;
  int64_t step = 0;
  int64_t total = 0;  // 0: not said
  std::map<std::string, double> metrics;
};

// What an executor's heartbeat says of its task.
struct HeartbeatReport {
  int64_t rss_bytes = 0;
  TaskProgress progress;
  int64_t quiet_ms = 0;  // how long the task has made no progress, by the executor's clock
  int attempt = -1;      // the executor's attempt; -1: not said
};
// The AM's answer to it.
struct HeartbeatAnswer {
  bool stop = false;         // stop the task
  bool dump_stacks = false;  // write the stacks of its processes to its log first
  std::string reason;        // why either
};

// One ended attempt of a task that was restarted.
struct AttemptRecord {
  int attempt = 0;
  std::string container_id;
  int exit_code = 0;
  std::string diagnostics;
  int64_t end_wall_ms = 0;
};

// Something other tasks and clients may want to react to.
struct TaskEvent {
  // "RESTARTED", "GANG_RESTART", "HUNG", "STRAGGLER", "PREEMPTING", "MODEL_PARAMS"
  std::string kind;
  TaskRef task;
  int attempt = 0;  // the new attempt
  int64_t wall_ms = 0;
  std::string detail;
  // Of a notice (TakeNotices): where the state machine made it, among notices and transitions.
  uint64_t seq = 0;
};

// A task's change of state, as the job's history records it. A restart is two: the ended attempt
// (to kFailed, with its exit code) and the new one (to kNew).
struct TaskTransition {
  TaskRef task;
  int attempt = 0;
  TaskState from = TaskState::kNew;
  TaskState to = TaskState::kNew;
  int64_t wall_ms = 0;
  std::string container_id;
  std::string host;
  int port = 0;
  std::optional<int> exit_code;  // terminal states
  std::string diagnostics;       // terminal states, and why a restart
  uint64_t seq = 0;              // where the state machine made it, among transitions and notices
};

struct TaskRecord {
  TaskRef ref;
  config::JobTypeRole role = config::JobTypeRole::kTracked;
  bool stop_on_failure = false;
  std::string stop_on_failure_reason;  // config::JobTypeSpec's
  TaskState state = TaskState::kNew;
  int attempt = 0;
  std::string container_id;
  std::string host;
  int port = 0;
  std::string log_dir;
  std::optional<int> exit_code;
  std::string diagnostics;
  int64_t allocated_at_ms = 0;
  int64_t last_heartbeat_ms = 0;
  int64_t heartbeats = 0;  // taken from its executors, every attempt's (/metrics)
  int64_t start_wall_ms = 0;
  int64_t end_wall_ms = 0;
  int64_t peak_rss_bytes = 0;
  TaskProgress progress;
  int64_t progress_wall_ms = 0;  // when the task last made progress; 0 before a heartbeat said
  // Why the task counts as hung ("" while it does not): it was told to stop, and its end counts
  // as a failure with kExitHung whatever its exit code.
  std::string hung;
  // Why the task is being stopped for its gang's restart ("" while it is not): its end, whatever
  // its exit code, ends its attempt and it runs again with the gang.
  std::string gang_restart;
  // Why the task is being stopped ahead of its container's preemption ("" while it is not): its
  // end counts as preempted (kExitPreempted), whatever its exit code, and it restarts elsewhere.
  std::string preempting;
  bool gang = false;               // its type's restart policy is gang
  int elastic_min = 0;             // its type's tony.<type>.min-instances: 0 unless elastic
  std::string dump_stacks_reason;  // its stacks are wanted with its next heartbeat: why
  // Why the task counts as a straggler (tony.task.straggler-steps), "" while it does not.
  std::string straggler;
  bool straggler_reported = false;  // its STRAGGLER event was recorded in this attempt
  bool stop_requested = false;
  // Past an ignored dependency timeout (TonY's `.ignored`): the job no longer waits for this
  // tracked task, which runs on until the job ends; its failure still counts as any other's.
  bool not_waited_for = false;
  int max_restarts = 0;
  int restarts_used = 0;  // of max_restarts: the restarts after a failure of the task's own
  int free_restarts = 0;  // restarts that used none (ExitCountsAgainstRestarts)
  std::set<int> transient_exit_codes;
  // The memory its containers ask for: its type's, or grown (tony.<type>.memory-growth) once it
  // was killed over its memory; 0 in a spec built by hand.
  int64_t memory_mb = 0;
  double memory_growth = 1;
  bool memory_grown = false;  // it was restarted with more memory
  int64_t restart_backoff_ms = 0;
  int64_t restart_at_ms = 0;    // a restart is due at this time (state kNew)
  bool awaiting_stage = false;  // a task waiting for an earlier stage to succeed (kNew)
  // An executor's result that waits for the container's end (ReportResultRequest's
  // provisional): the exit code and diagnostics, and until when (steady ms) to wait.
  std::optional<std::pair<int, std::string>> pending_result;
  int64_t pending_result_until_ms = 0;
  bool pending_executor_stopping = false;  // its executor goes, whatever the answer
  // It was restarted in its container and its executor has not registered the new attempt yet:
  // should the container end first, the task needs a new one, which is no failure of its own.
  bool awaiting_in_place = false;
  // Taken up from an earlier AM attempt, running in the container that attempt gave it (Recover),
  // until its attempt ends or its executor registers.
  bool adopted = false;
  std::vector<AttemptRecord> previous_attempts;
};

// What the AM must do.
struct RequestContainer {
  std::string job_type;
  int64_t memory_mb = 0;  // the task's memory when its type's was grown for it; 0: the type's
};
struct LaunchTask {
  TaskRef task;
};
struct StopContainer {
  std::string container_id;
};
struct ReleaseContainer {
  std::string container_id;
};
struct SendClusterSpec {
  TaskRef task;
};
struct JobDecided {};  // the final status was just decided
using Action = std::variant<RequestContainer, LaunchTask, StopContainer, ReleaseContainer,
                            SendClusterSpec, JobDecided>;
using Actions = std::vector<Action>;

// Whether a task that ended with `exit_code` uses up a restart of tony.<type>.max-restarts. An end
// that is the cluster's doing (preempted, lost with its node, its disks failed) does not, nor one
// of the type's transient exit codes: the task is restarted regardless; past kMaxFreeRestarts
// such restarts, they count like any other end.
bool ExitCountsAgainstRestarts(int exit_code, const std::set<int>& transient_exit_codes);
inline constexpr int kMaxFreeRestarts = 100;

// How long a provisional executor result waits for its container's end.
inline constexpr int64_t kProvisionalResultWaitMs = 5000;

class JobStateMachine {
 public:
  JobStateMachine(config::JobSpec spec, const Clock* clock);

  // Asks for one container per task.
  Actions Start();
  // Instead of Start, in an AM attempt that adopts the running tasks of an earlier one: takes up
  // each task as the earlier attempt's history recorded it (job_state_recovery.cc). A task in a
  // container that still runs (`live_containers`) goes on in it: its executor heartbeats on, or
  // registers again if it had no cluster spec yet. A task whose container is gone ended while no
  // AM ran (kExitAborted: it uses no restart) and the failure policy applies; a task without a
  // container asks for one. Live containers (id -> log directory) that no task claims are stopped.
  Actions Recover(const RecoveredJob& job,
                  const std::map<std::string, std::string>& live_containers);
  // A container was granted for `job_type` (asking for `memory_mb`, 0: unsaid): it goes to the
  // lowest-index task of that type still waiting for one of that size, else of any size; a
  // surplus container is released.
  Actions OnContainerAllocated(const std::string& container_id, const std::string& job_type,
                               const std::string& host, const std::string& log_dir,
                               int64_t memory_mb = 0);
  // An executor registered its address. Errors (unknown task, stale container) go back to the
  // executor and change nothing.
  absl::StatusOr<Actions> OnTaskRegistered(const TaskRef& task, const std::string& container_id,
                                           const std::string& host, int port);
  // A heartbeat: keeps its memory sample and progress, and finds a task hung that made no progress
  // for spec().hang_timeout_ms. The answer says whether the AM wants the task stopped (a hung task
  // with its stacks first); stale containers are ignored.
  HeartbeatAnswer OnHeartbeat(const TaskRef& task, const std::string& container_id,
                              const HeartbeatReport& report);
  // The same with no more than a memory sample; returns whether to stop.
  bool OnHeartbeat(const TaskRef& task, const std::string& container_id, int64_t rss_bytes) {
    return OnHeartbeat(task, container_id, HeartbeatReport{rss_bytes, {}, 0}).stop;
  }
  // The cluster warns that it will take this container back: its task is asked to stop (with its
  // next heartbeat, SIGTERM and the grace period) so that it can checkpoint, and its end counts as
  // preempted.
  Actions OnPreemptionNotice(const std::string& container_id);
  // A measurement of the task's resident memory; the largest is kept (TaskRecord::peak_rss_bytes).
  void OnMemorySample(const TaskRef& task, const std::string& container_id, int64_t rss_bytes);
  // The executor's report of the user process's exit. `provisional`: the executor or the user
  // process was signalled by the container's owner, so the container's end (which follows) decides,
  // unless it brings no more than a plain exit code or does not come within
  // kProvisionalResultWaitMs. `executor_stopping`: the executor itself was signalled and goes,
  // so the task cannot run again in this container.
  // `attempt`: the attempt that ended (-1: not said); the result of an attempt older than the
  // task's (an earlier AM attempt took it and restarted the task in its container, then died)
  // changes nothing, and the executor is told to run the current one.
  Actions OnExecutorResult(const TaskRef& task, const std::string& container_id, int exit_code,
                           const std::string& diagnostics, bool provisional = false,
                           bool executor_stopping = false, int attempt = -1);
  // The backend's (authoritative) report of a container's end.
  Actions OnContainerCompleted(const std::string& container_id, int exit_code,
                               const std::string& diagnostics, bool launch_failed);
  // Timeouts and heartbeats; call it periodically (every fraction of a heartbeat interval). A gap
  // between two calls longer than kMinStallMs and two heartbeat intervals is the AM's own stall:
  // the running tasks' heartbeat deadlines start again (see last_stall_ms).
  Actions OnTick();
  // Names the running tasks whose step lags their type's median by more than
  // spec().straggler_steps (TaskRecord::straggler); OnTick calls it.
  void FindStragglers();
  // How long the AM did not run at the last stall OnTick found (0: none), for its log.
  int64_t last_stall_ms() const { return last_stall_ms_; }
  static constexpr int64_t kMinStallMs = 3000;
  // How often the gang restarted (its members' TORCHELASTIC_RESTART_COUNT).
  int gang_restarts() const { return gang_restarts_; }
  // Ends the job as KILLED, stopping every task.
  Actions Kill(const std::string& reason);
  // Ends the job as FAILED (a problem found by the AM itself), stopping every task.
  Actions Fail(const std::string& reason);
  // After the job was decided: tasks whose containers did not confirm their stop in time count
  // as finished.
  void FinishRemaining();

  // Whether the task's cluster spec has been released.
  bool ClusterSpecReleased(const TaskRef& task) const;
  // Every task with an address, by type and index ("host:port"); "" for a task without one in a
  // type that has others. Types with no address at all (a later stage) are left out.
  std::map<std::string, std::vector<std::string>> ClusterSpec() const;

  const config::JobSpec& spec() const { return spec_; }
  JobState state() const { return state_; }
  bool decided() const { return state_ != JobState::kRunning; }
  const std::string& diagnostics() const { return diagnostics_; }
  int64_t version() const { return version_; }
  int64_t start_wall_ms() const { return start_wall_ms_; }
  int64_t end_wall_ms() const { return end_wall_ms_; }
  const std::vector<TaskRecord>& tasks() const { return tasks_; }
  // How far the job is, 0 to 1: the mean over its tracked tasks of each one's share (1 once
  // succeeded, step/total while it reports both, 0 otherwise); where no tracked task reports a
  // total, the share of tracked tasks that have ended. 1 once decided.
  float Progress() const;
  const std::vector<TaskEvent>& events() const { return events_; }
  const TaskRecord* Find(const TaskRef& task) const;
  // Every task transition since the last call, oldest first (the AM drains them after each event).
  std::vector<TaskTransition> TakeTransitions() { return std::exchange(transitions_, {}); }
  // The HUNG, GANG_RESTART, PREEMPTING and STRAGGLER events since the last call, for the job's
  // history.
  std::vector<TaskEvent> TakeNotices() { return std::exchange(notices_, {}); }
  bool IsChief(const TaskRef& task) const { return spec_.chief && *spec_.chief == task; }
  // The preprocessing job's parameters (the text after config::kModelParamsMarker in its stdout),
  // once its task succeeded: every later task gets them with its cluster spec. "" for none.
  const std::string& model_params() const { return model_params_; }
  // The preprocessing task reported its parameters with a successful end of `attempt` in
  // `container_id`: kept, and recorded (a MODEL_PARAMS notice) so that a later AM attempt has them
  // too. A report of an attempt or container the task no longer runs, or of a task that already
  // ended, changes nothing.
  void SetModelParams(const TaskRef& task, const std::string& container_id, int attempt,
                      std::string params);

 private:
  TaskRecord* MutableFind(const TaskRef& task);
  TaskRecord* FindByContainer(const std::string& container_id);
  // `executor_waits`: the task's executor reported the end and waits for the AM's answer, so the
  // task can run again in its container.
  void TaskEnded(TaskRecord& task, int exit_code, std::string diagnostics, Actions& actions,
                 bool executor_waits = false);
  // Provisional executor results whose container's end did not come in time: they stand.
  void ResolveOverdueResults(int64_t now, Actions& actions);
  void ApplyFailurePolicy(const TaskRecord& task, TaskState state_before, Actions& actions);
  void CheckTrackedDone(Actions& actions);
  void Decide(JobState state, std::string diagnostics, Actions& actions);
  void StopTask(TaskRecord& task, Actions& actions);
  void ReleaseGangIfComplete(Actions& actions);
  // Starts the training stage once every prepare-stage task succeeded.
  void MaybeStartTraining(Actions& actions);
  // The stage a job type's tasks start in (job_state_stages.cc): 0 first; with the preprocessing
  // job every other type one later, and training-stage types one more.
  int StageOf(const std::string& type) const;
  // The job types all of whose tasks must succeed before the stage after `stage` starts.
  std::vector<std::string> StageGate(int stage) const;
  void CheckDependencyTimeouts(int64_t now, Actions& actions);
  // Whether the failed task, killed over its memory, is restarted with more (once, using no
  // restart: tony.<type>.memory-growth); if so, grows its memory ask.
  bool GrowMemory(TaskRecord& task);
  // Whether the failed task gets another attempt; if so, schedules it (restart policy task).
  bool MaybeRestart(TaskRecord& task, Actions& actions);
  // The same for a member of the gang: whether the gang restarts; if so, stops its running members
  // and restarts `failed` (job_state_restarts.cc).
  bool MaybeRestartGang(TaskRecord& failed, bool executor_waits, Actions& actions);
  // A member's attempt ended for its gang's restart: its next one, in its container when its
  // executor waits, else in a new one.
  void RestartMember(TaskRecord& task, bool executor_waits, const std::string& detail,
                     Actions& actions);
  // An elastic type (job_state_elastic.cc): whether a member of `type` has succeeded, after which
  // the group is done and no member is replaced.
  bool ElasticDone(const std::string& type) const;
  // A member succeeded: replacements that have not started their user process are not needed.
  void ElasticMemberSucceeded(const TaskRecord& task, Actions& actions);
  // A member failed for good: the job goes on while at least tony.<type>.min-instances members
  // are running, waiting for a replacement, or succeeded; else it fails.
  void ElasticMemberLost(const TaskRecord& task, Actions& actions);
  // Whether the failed members of `type` are excused at the job's end: it is elastic and at least
  // min-instances of its members succeeded.
  bool ElasticFailuresExcused(const std::string& type) const;
  // Records the end of the task's attempt (a RESTARTED event with `detail`) and starts its next
  // in state `next`: kNew (it leaves its container) or kAllocated (it runs again in it).
  void EndAttempt(TaskRecord& task, const std::string& detail, TaskState next);
  void Changed() { ++version_; }
  // Every change of a task's state goes through here, so that it is recorded.
  void SetState(TaskRecord& task, TaskState state);
  // Queue a transition and a notice for the history, numbered in the order they were made.
  void AddTransition(TaskTransition transition) {
    transition.seq = ++changes_;
    transitions_.push_back(std::move(transition));
  }
  void AddNotice(TaskEvent notice) {
    notice.seq = ++changes_;
    notices_.push_back(std::move(notice));
  }

  config::JobSpec spec_;
  const Clock* clock_;
  std::vector<TaskRecord> tasks_;  // by type, then index; fixed after construction
  std::map<std::pair<std::string, int>, size_t> task_index_;  // (type, index) -> position in tasks_
  std::vector<TaskEvent> events_;
  std::vector<TaskEvent> notices_;
  std::vector<TaskTransition> transitions_;
  uint64_t changes_ = 0;        // notices and transitions made: the last one's seq
  bool gang_released_ = false;  // the cluster spec went out; later registrations get it at once
  int gang_restarts_ = 0;
  int counted_gang_restarts_ = 0;   // of tony.application.max-gang-restarts
  int64_t gang_hold_until_ms_ = 0;  // no cluster spec goes out before (a gang restart's backoff)
  int64_t gang_formed_ms_ = 0;      // the allocation timeout counts from here
  std::map<std::string, int64_t> group_done_at_ms_;  // when every task of a group had ended
  int stage_ = 0;                                    // the latest stage whose tasks were asked for
  std::string model_params_;
  JobState state_ = JobState::kRunning;
  std::string diagnostics_;
  int64_t start_ms_ = 0;
  int64_t last_tick_ms_ = 0;   // when OnTick last ran, else when the job started; 0 before
  int64_t last_stall_ms_ = 0;  // how long the AM did not run, at the last stall OnTick found
  int64_t start_wall_ms_ = 0;
  int64_t end_wall_ms_ = 0;
  int64_t version_ = 1;
};

}  // namespace tony::am
