#pragma once
// The TaskExecutor: runs in each container. Reserves the task's port, registers with the AM,
// waits for the cluster spec, builds the framework environment, starts the user command in its
// own process group, heartbeats with its metrics, and reports the exit code. It never leaves a
// process behind: the user's tree is killed when the user process ends, when the executor is
// stopped, and when it loses the AM; the user process dies with the executor (PDEATHSIG). What a
// killed executor cannot stop, its guard (executor_guard.h) does.
//
// Threads: Run() on the main thread; a signal thread (sigwait) and gRPC's threads. SIGTERM,
// SIGINT and SIGHUP must be blocked in every thread before any is created (BlockStopSignals).

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "common/process.h"
#include "common/signal_thread.h"
#include "config/job_spec.h"
#include "executor/am_link.h"
#include "executor/gpu_sampler.h"
#include "executor/horovod_driver.h"
#include "executor/output_shipper.h"
#include "executor/progress_tracker.h"
#include "executor/task_sandbox.h"
#include "rpc/tony.grpc.pb.h"
#include "runtime/runtime.h"

namespace tony::executor {

// A task as the AM's protocol names it.
inline rpc::TaskRef ToProto(const config::TaskRef& task) {
  rpc::TaskRef ref;
  ref.set_type(task.type);
  ref.set_index(task.index);
  return ref;
}

struct ExecutorOptions {
  std::string app_id;
  std::string am_address;
  // Where a later AM attempt that adopts the running tasks writes its address; "": none will.
  std::string am_address_file;
  // YARN: am_address_file is on HDFS, read through WebHDFS at these NameNodes with the HDFS
  // token of this service (rpc::ExecutorLaunch).
  std::string am_address_webhdfs;
  std::string am_address_webhdfs_token;
  // Reads am_address_file where it is not a local file (YARN: through WebHDFS); empty: it is.
  std::function<absl::StatusOr<std::string>()> read_am_address;
  std::string auth;         // the task's credential as calls carry it (rpc::TaskAuthValue)
  std::string am_cert_pem;  // the AM's certificate to pin; "" when TLS is off
  std::string conf_file;
  config::TaskRef task;
  int attempt = 0;
  std::string container_id;
  std::string log_dir;
  std::string host;      // the address other tasks reach this one at
  bool on_yarn = false;  // in a YARN container (Hadoop's client environment for the task)
  // Puts fresh credentials from the AM (HeartbeatResponse::tokens) where the task reads its own
  // (YARN: merged into HADOOP_TOKEN_FILE_LOCATION). Empty: they are ignored.
  std::function<absl::Status(const std::string& credentials)> apply_tokens;
  // With the job's outputs on HDFS (YARN): copies the task's local output directory there
  // (TONY_OUTPUT_URI). Empty: this executor cannot, and such a task fails.
  std::function<absl::Status(const std::string& local_dir)> upload_outputs;
};

// Reads the TONY_* variables the AM sets in the container. Errors name the variable.
absl::StatusOr<ExecutorOptions> ExecutorOptionsFromEnvironment();

// Blocks the stop signals in the calling thread; call first thing in main.
void BlockStopSignals();

class TaskExecutor {
 public:
  TaskExecutor(ExecutorOptions options, config::JobSpec spec);
  ~TaskExecutor();

  // Returns the process exit code: the user command's (128 + signal when killed), of its last
  // attempt when it ran again (a gang restart, ReportResultResponse::run_again).
  int Run();

 private:
  // One attempt: registers a fresh port, waits for the cluster spec, runs the user's command to
  // its end and reports it (next_attempt_ says whether to run again).
  int RunAttempt(const config::JobTypeSpec& type);
  // Before the first attempt: the checkpoint directory and the tony_task helper (helper_env_,
  // progress_fd_). Never again: by then the task may have replaced what is at those names.
  void PrepareTaskFiles(const runtime::Environment& environment);
  // Registers `port` and waits for the cluster spec; when the AM goes meanwhile and a later attempt
  // will adopt the task, does both again with that attempt, for up to tony.am.recovery-timeout-ms.
  absl::StatusOr<rpc::WaitClusterSpecResponse> JoinCluster(int port);
  // Waits up to `ms` for a stop signal (the wake descriptor); true if one came.
  bool WaitForStop(int64_t ms);
  // What one heartbeat after another carries over.
  struct HeartbeatState {
    int64_t peak_rss = 0;
    int64_t tokens_version = 0;  // of the credentials from the AM the task has
    int64_t next_gpu_sample_ms = 0;
    std::unique_ptr<ProgressTracker> progress;
    int64_t read_stdout = 0;  // how much of each output file the tracker has seen
    int64_t read_stderr = 0;
    int64_t read_reports = 0;  // of the TONY_PROGRESS_FILE
  };
  // How long the task's output files were when its user process started.
  struct OutputStart {
    int64_t stdout_bytes = 0;
    int64_t stderr_bytes = 0;
  };
  // Watches the user process until it exits (Supervision's rules), heartbeating; then Finish.
  int Supervise(pid_t pid, int64_t start_ms, const OutputStart& output_start);
  // A heartbeat with the tree's usage and the task's progress, as of now.
  rpc::HeartbeatRequest HeartbeatNow(pid_t pid, HeartbeatState* state);
  // The AM's answer to a heartbeat: writes the task's stacks, calls `stop` or applies fresh
  // credentials where it asks.
  void OnHeartbeatAnswer(pid_t pid, const rpc::HeartbeatResponse& response, HeartbeatState* state,
                         const std::function<void(const std::string&)>& stop);
  // Wakes Supervise (and WaitForStop); any thread.
  void Wake();
  // Reports the task's end with its diagnostics; returns the executor's exit code.
  int Finish(const std::optional<ExitStatus>& exit, const std::string& stop_reason,
             int64_t peak_rss);
  // Tells the AM where this task's TensorBoard listens (TB_PORT); best effort.
  void RegisterTensorBoardUrl(const std::string& url);
  // A Horovod debug driver: publishes the port it wrote, once; past kDriverPublishTimeoutMs
  // without one, returns why the driver must be stopped.
  std::optional<std::string> WatchDriver(int64_t elapsed_ms);
  // Reports the end of the attempt; returns the attempt to run next in this container, if the AM
  // says so.
  std::optional<int> Report(int exit_code, const std::string& diagnostics, bool provisional = false,
                            int64_t peak_rss_bytes = 0);
  void OnStopSignal(int sig);
  // Sends the rest of the task's output to the AM for the job's history, for at most a few
  // seconds (a stopping job has a grace period).
  void DrainOutput();

  const ExecutorOptions options_;
  const config::JobSpec spec_;
  std::unique_ptr<AmLink> link_;
  std::unique_ptr<OutputShipper> shipper_;
  std::unique_ptr<GpuSampler> gpu_sampler_;         // a task with GPUs, when their use is sampled
  std::optional<HorovodDriverWatch> driver_watch_;  // only in a Horovod debug driver
  bool driver_published_ = false;
  int wake_fd_ = -1;                         // the signal thread wakes Supervise through it
  std::optional<SandboxedCommand> sandbox_;  // the user's command's, if tony.task.sandbox
  // The task's files as the executor holds them, opened before the task ran (-1: none): its
  // stdout and stderr (read for progress; stacks appended to stderr) and TONY_PROGRESS_FILE.
  // The last lines of the task's stdout or stderr (held as `fd`).
  absl::StatusOr<std::vector<std::string>> TaskFileTail(int fd, const char* name,
                                                        int max_lines) const;
  bool task_started_ = false;  // the user process was spawned: its files are read only as held
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  int progress_fd_ = -1;
  std::map<std::string, std::string> helper_env_;  // what the tony_task helper adds to the env
  std::optional<int> next_attempt_;                // the AM's answer to the last Report
  int attempt_ = 0;             // the task's attempt this executor runs (reported with its end)
  std::string model_params_;    // the preprocessing job's, found in its stdout once it succeeded
  bool report_failed_ = false;  // the last Report did not reach the AM
  std::atomic<int> stop_signal_{0};        // the stop signal received, 0 if none
  std::unique_ptr<SignalThread> signals_;  // last: destroyed first, before what it uses
};

}  // namespace tony::executor
