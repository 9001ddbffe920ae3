#include "executor/task_executor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "common/clock.h"
#include "common/files.h"
#include "common/net.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "common/strings.h"
#include "executor/hadoop_env.h"
#include "executor/stack_report.h"
#include "executor/supervision.h"
#include "executor/task_context.h"
#include "executor/task_helper.h"
#include "grpcpp/grpcpp.h"
#include "rpc/auth.h"
#include "rpc/launch_contract.h"
#include "runtime/runtime.h"
#include "spdlog/spdlog.h"

namespace tony::executor {
namespace {

namespace fs = std::filesystem;

constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};
// Lines of the user process's stdout the executor reports with its result.
constexpr int kOutputTailLines = 10;
// How long a Horovod debug driver may take to publish its rendezvous port (TonY allows 10 s; a
// driver importing Horovod on a loaded machine needs more).
constexpr int64_t kDriverPublishTimeoutMs = 120000;

sigset_t StopSignalSet() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kStopSignals) sigaddset(&set, sig);
  return set;
}

// A stop signal sent to this process that its signal thread has not taken yet.
bool StopSignalPending() {
  sigset_t pending;
  if (sigpending(&pending) != 0) return false;
  for (int sig : kStopSignals) {
    if (sigismember(&pending, sig) == 1) return true;
  }
  return false;
}

rpc::TaskRef ToProto(const config::TaskRef& task) {
  rpc::TaskRef ref;
  ref.set_type(task.type);
  ref.set_index(task.index);
  return ref;
}

// How much new output the progress tracker reads in one heartbeat; more is skipped (a task that
// prints this fast is not quiet, and its latest lines are what say its step).
constexpr int64_t kMaxProgressReadBytes = 1 << 20;

// Opens a file of the task's (its output, its progress file) before the task runs, creating it,
// never through a symbolic link, never blocking on a FIFO; -1 if it cannot be. The executor keeps
// the descriptor and never opens the file by its name again: the task can rename or replace
// what is at that name (and could point it anywhere the executor may write), never the file the
// executor holds.
int OpenTaskFile(const std::string& path, int flags, mode_t mode) {
  const int fd = open(path.c_str(), flags | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
  if (fd < 0) {
    spdlog::warn("cannot open {}: {}", path, std::strerror(errno));
    return -1;
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    spdlog::warn("{} is not a regular file", path);
    close(fd);
    return -1;
  }
  return fd;
}

// Feeds what was appended to a task's file (held open as `fd`) since `*offset` to the tracker.
void FeedOutput(int fd, ProgressTracker::Stream stream, int64_t* offset, ProgressTracker& tracker) {
  if (fd < 0) return;
  struct stat info {};
  if (fstat(fd, &info) != 0) return;
  if (info.st_size < *offset) {
    // Started again (written over, not appended to): read it from its start.
    *offset = 0;
    tracker.OnRestarted(stream);
  }
  if (info.st_size > *offset) {
    if (info.st_size - *offset > kMaxProgressReadBytes) {
      *offset = info.st_size - kMaxProgressReadBytes;
      tracker.OnSkipped(stream);
    }
    std::string bytes(static_cast<size_t>(info.st_size - *offset), '\0');
    const ssize_t n = pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(*offset));
    if (n > 0) {
      bytes.resize(static_cast<size_t>(n));
      *offset += n;
      tracker.OnOutput(stream, bytes);
    }
  }
  // The reports file is read only here: once a MiB of it has been read, it starts again, so a
  // task that reports every step for days does not fill the disk (a report written between the
  // read and the truncation is lost; the next one counts).
  if (stream == ProgressTracker::Stream::kReports && *offset >= kMaxProgressReadBytes &&
      ftruncate(fd, 0) == 0) {
    *offset = 0;
    tracker.OnRestarted(stream);
  }
}

}  // namespace

void BlockStopSignals() {
  sigset_t set = StopSignalSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

TaskExecutor::TaskExecutor(ExecutorOptions options, config::JobSpec spec)
    : options_(std::move(options)), spec_(std::move(spec)) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  AmLinkOptions link;
  link.address = options_.am_address;
  link.address_file = options_.am_address_file;
  link.read_address = options_.read_am_address;
  link.cert_pem = options_.am_cert_pem;
  link.auth = options_.auth;
  link.task = options_.task;
  link.container_id = options_.container_id;
  if (spec_.am_retry_count > 0) link.recovery_ms = spec_.am_recovery_timeout_ms;
  link_ = std::make_unique<AmLink>(std::move(link));
  attempt_ = options_.attempt;
  shipper_ = std::make_unique<OutputShipper>(options_.log_dir, spec_.history_max_log_bytes,
                                             [this](rpc::AppendOutputRequest request) {
                                               return link_->AppendOutput(std::move(request), 5000);
                                             });
}

TaskExecutor::~TaskExecutor() {
  signals_.reset();  // no handler runs after this
  if (wake_fd_ >= 0) close(wake_fd_);
  for (int fd : {stdout_fd_, stderr_fd_, progress_fd_}) {
    if (fd >= 0) close(fd);
  }
}

void TaskExecutor::DrainOutput() {
  const Clock* clock = SystemClock::Get();
  const int64_t give_up = clock->NowMs() + 5000;
  while (!shipper_->Ship(16)) {
    if (clock->NowMs() >= give_up) {
      spdlog::warn("the history misses the end of this task's output (the AM took too long)");
      return;
    }
  }
}

void TaskExecutor::OnStopSignal(int sig) {
  stop_signal_ = sig;  // first: Supervise may be deciding right now whether it was signalled
  spdlog::info("received signal {}", sig);
  link_->Cancel();
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

bool TaskExecutor::WaitForStop(int64_t ms) {
  if (stop_signal_ != 0) return true;
  pollfd fd = {wake_fd_, POLLIN, 0};
  poll(&fd, 1, static_cast<int>(std::max<int64_t>(ms, 0)));
  return stop_signal_ != 0;
}

absl::StatusOr<rpc::WaitClusterSpecResponse> TaskExecutor::JoinCluster(int port) {
  const Clock* clock = SystemClock::Get();
  int64_t give_up_ms = 0;  // set while no AM answers
  while (true) {
    // The AM is up (it launched us, or its next attempt wrote its address), but give a loaded
    // machine some time.
    absl::Status failed = link_->Register(options_.host, port, 30000);
    if (failed.ok()) {
      give_up_ms = 0;  // an AM answered: a later one that goes gets the whole time again
      spdlog::info("registered {} at {}:{}", options_.task.ToString(), options_.host, port);
      // Without tony.task.executor.registry-timeout-sec the call waits as long as the AM keeps
      // the connection; the AM's allocation and registration timeouts bound how long that is.
      absl::StatusOr<rpc::WaitClusterSpecResponse> cluster =
          link_->WaitClusterSpec(spec_.registry_timeout_ms);
      if (cluster.ok()) return cluster;
      failed = cluster.status();
    }
    if (stop_signal_ != 0 || !absl::IsUnavailable(failed) || !link_->awaits_next_am()) {
      return failed;
    }
    if (give_up_ms == 0) {
      give_up_ms = clock->NowMs() + spec_.am_recovery_timeout_ms;
      spdlog::warn(
          "{}; waiting up to {} ms for the AM's next attempt (tony.am.recovery-timeout-ms)",
          ToStd(failed.message()), spec_.am_recovery_timeout_ms);
    }
    if (clock->NowMs() >= give_up_ms) return failed;
    // Registers again: with the next attempt once its address is there, else (an AM that was
    // starting, or did not answer in time) with the same one after a pause.
    if (!link_->FollowNextAm() &&
        WaitForStop(std::min<int64_t>(spec_.heartbeat_interval_ms, 1000))) {
      return failed;
    }
  }
}

void TaskExecutor::RegisterTensorBoardUrl(const std::string& url) {
  const grpc::Status status = link_->RegisterTensorBoardUrl(url, 5000);
  if (!status.ok()) spdlog::warn("could not register TensorBoard's URL: {}", GrpcError(status));
}

std::optional<std::string> TaskExecutor::WatchDriver(int64_t elapsed_ms) {
  if (!driver_watch_ || driver_published_) return std::nullopt;
  if (std::optional<int> port = driver_watch_->FindPort()) {
    const grpc::Status status = link_->PublishRendezvous(*port, 5000);
    if (status.ok()) {
      driver_published_ = true;
      spdlog::info("published the Horovod driver's rendezvous port {}", *port);
      return std::nullopt;
    }
    spdlog::warn("could not publish the Horovod driver's port {}: {}", *port, GrpcError(status));
  }
  if (elapsed_ms < kDriverPublishTimeoutMs) return std::nullopt;
  return StrCat("the Horovod driver published no rendezvous port (a file <port>",
                kDriverPortFileSuffix, " in DRIVER_OUTPUT_PATH) within ",
                kDriverPublishTimeoutMs / 1000, " s");
}

absl::StatusOr<std::vector<std::string>> TaskExecutor::TaskFileTail(int fd, const char* name,
                                                                    int max_lines) const {
  const std::string path = StrCat(options_.log_dir, "/", name);
  // Before the task ran (a command that could not start), by name; after, only as held.
  if (fd >= 0) return ReadTailLines(fd, max_lines, path);
  if (task_started_) return std::vector<std::string>{};
  return ReadTailLines(path, max_lines);
}

std::optional<int> TaskExecutor::Report(int exit_code, const std::string& diagnostics,
                                        bool provisional, int64_t peak_rss_bytes) {
  rpc::ReportResultRequest request;
  request.set_peak_rss_bytes(peak_rss_bytes);
  // The end of what the task printed, for the client's summary (the accuracy line of a training
  // script); its end is what says most.
  if (absl::StatusOr<std::vector<std::string>> tail =
          TaskFileTail(stdout_fd_, "stdout", kOutputTailLines);
      tail.ok() && !tail->empty()) {
    std::string text = Join(*tail, "\n");
    if (text.size() > rpc::kMaxOutputTailBytes) {
      text = text.substr(text.size() - rpc::kMaxOutputTailBytes);
    }
    request.set_output_tail(std::move(text));
  }
  const bool signalled = stop_signal_ != 0 || StopSignalPending();
  request.set_provisional(provisional || signalled);
  request.set_executor_stopping(signalled);
  *request.mutable_task() = ToProto(options_.task);
  request.set_container_id(options_.container_id);
  request.set_exit_code(exit_code);
  request.set_attempt(attempt_);
  // The AM accepts small messages only (rpc::kAmMaxReceiveBytes): keep the end, which says most.
  request.set_diagnostics(
      diagnostics.size() > rpc::kMaxDiagnosticsBytes
          ? StrCat("...", diagnostics.substr(diagnostics.size() - rpc::kMaxDiagnosticsBytes))
          : diagnostics);
  rpc::ReportResultResponse response;
  // A provisional result is answered once the AM has it for good (kProvisionalResultWaitMs).
  const grpc::Status status =
      link_->ReportResult(request, &response, request.provisional() ? 20000 : 5000,
                          [this](int64_t ms) { return WaitForStop(ms); });
  if (!status.ok()) {
    spdlog::warn("could not report the result to the AM: {}", GrpcError(status));
    return std::nullopt;
  }
  // A stopped executor goes, whatever the AM would have it do.
  if (!response.run_again() || stop_signal_ != 0 || StopSignalPending()) return std::nullopt;
  return response.attempt();
}

int TaskExecutor::Run() {
  // Orphans of the user's tree become the executor's children, so that it can always stop them.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  signals_ =
      std::make_unique<SignalThread>(StopSignalSet(), [this](int sig) { OnStopSignal(sig); });
  const std::string task = options_.task.ToString();
  spdlog::info("executor for {} in {} (attempt {}), AM at {}", task, options_.container_id,
               options_.attempt, link_->address());
  const config::JobTypeSpec* type = spec_.Find(options_.task.type);
  if (type == nullptr) {
    spdlog::error("the job has no task type {}", options_.task.type);
    return 2;
  }
  if (type->resources.gpus > 0 && spec_.gpu_metrics) {
    // The container's GPUs, as the backend named them to it (the local backend and YARN's GPU
    // isolation both set one of these).
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (visible == nullptr) visible = std::getenv("NVIDIA_VISIBLE_DEVICES");
    gpu_sampler_ = std::make_unique<GpuSampler>(
        spec_.gpu_exec_path, visible != nullptr ? visible : "",
        (std::filesystem::temp_directory_path() / StrCat("tony-gpu-", options_.container_id))
            .string());
  }

  int code = RunAttempt(*type);
  while (next_attempt_) {
    spdlog::info("{} runs again in {} as attempt {} (its gang restarts)", task,
                 options_.container_id, *next_attempt_);
    attempt_ = *next_attempt_;
    next_attempt_.reset();
    code = RunAttempt(*type);
  }
  return code;
}

int TaskExecutor::RunAttempt(const config::JobTypeSpec& job_type) {
  const config::JobTypeSpec* type = &job_type;
  const std::string task = options_.task.ToString();
  // Held from registration until just before the user process starts (TonY issue 365); each
  // attempt registers a port of its own, so that a restarted gang meets at a fresh address.
  absl::StatusOr<ReservedPort> port = ReservedPort::Reserve(0);
  if (!port.ok()) {
    spdlog::error("cannot reserve a port: {}", ToStd(port.status().message()));
    next_attempt_ = Report(1, StrCat("cannot reserve a port: ", ToStd(port.status().message())));
    return 1;
  }
  absl::StatusOr<rpc::WaitClusterSpecResponse> cluster = JoinCluster(port->port());
  if (!cluster.ok()) {
    if (stop_signal_ != 0) {
      spdlog::info("{}", ToStd(cluster.status().message()));
      return 128 + stop_signal_;
    }
    spdlog::error("{}", ToStd(cluster.status().message()));
    return 1;
  }

  attempt_ = cluster->attempt();
  runtime::TaskContext context = TaskContextFor(options_, spec_, *cluster);
  if (spec_.horovod_debug_driver && options_.task.type == config::kHorovodDriverType &&
      !driver_watch_) {
    absl::StatusOr<HorovodDriverWatch> watch =
        HorovodDriverWatch::Create((fs::current_path() / "horovod_driver").string());
    if (!watch.ok()) {
      spdlog::error("{}", ToStd(watch.status().message()));
      next_attempt_ = Report(1, std::string(ToStd(watch.status().message())));
      return 1;
    }
    context.driver_output_path = watch->dir();
    driver_watch_ = *std::move(watch);
  }
  // TensorBoard's port, as in TonY: the sidecar's is its own registered port; without a sidecar
  // the chief gets one, for a TensorBoard it may start itself.
  std::optional<ReservedPort> chief_tensorboard_port;
  const bool tensorboard_sidecar =
      options_.task.type == config::kTensorBoardType && type->role == config::JobTypeRole::kSidecar;
  if (tensorboard_sidecar) {
    context.tensorboard_port = port->port();
  } else if (context.is_chief && !spec_.job_types.count(config::kTensorBoardType)) {
    absl::StatusOr<ReservedPort> reserved = ReservedPort::Reserve(0);
    if (reserved.ok()) {
      context.tensorboard_port = reserved->port();
      chief_tensorboard_port = *std::move(reserved);
    } else {
      spdlog::warn("no TensorBoard port for the chief: {}", ToStd(reserved.status().message()));
    }
  }
  absl::StatusOr<runtime::Environment> environment = runtime::BuildTaskEnvironment(context);
  if (!environment.ok()) {
    const std::string why =
        StrCat("cannot build the task environment: ", ToStd(environment.status().message()));
    spdlog::error("{}", why);
    next_attempt_ = Report(1, why);
    return 1;
  }

  if (!task_started_) PrepareTaskFiles(*environment);
  for (const auto& [key, value] : helper_env_) (*environment)[key] = value;
  SpawnOptions spawn = UserProcessSpawn(options_, type->command, *environment);
  if (!task_started_) {
    // The output files as the executor reads them (progress) and writes to them (stacks); an
    // attempt that runs again appends to them.
    stdout_fd_ = OpenTaskFile(spawn.stdout_path, O_RDONLY, spawn.output_mode);
    stderr_fd_ = OpenTaskFile(spawn.stderr_path, O_RDWR | O_APPEND, spawn.output_mode);
    shipper_->UseFiles(stdout_fd_, stderr_fd_);
  } else {
    // The reports of the attempt before are not this one's.
    if (progress_fd_ >= 0 && ftruncate(progress_fd_, 0) != 0) {
      spdlog::warn("cannot empty the progress file: {}", std::strerror(errno));
    }
    if (stderr_fd_ >= 0) {
      const std::string line = StrCat("[tony] ", task, " starts again as attempt ",
                                      cluster->attempt(), " (its gang restarts)\n");
      (void)!write(stderr_fd_, line.data(), line.size());
    }
  }
  if (spec_.task_sandbox) {
    absl::StatusOr<SandboxedCommand> sandbox = SandboxedCommand::Prepare(&spawn);
    if (!sandbox.ok()) {
      const std::string why =
          StrCat("cannot start the command of ", task, ": ", ToStd(sandbox.status().message()));
      spdlog::error("{}", why);
      next_attempt_ = Report(127, why);
      return 127;
    }
    sandbox_.emplace(*std::move(sandbox));
    spdlog::info("{} runs in a sandbox that hides {}", task, sandbox_->hidden());
  }
  port->Release();
  if (chief_tensorboard_port) chief_tensorboard_port->Release();
  const int64_t start_ms = SystemClock::Get()->NowMs();
  // Progress is read from what this attempt prints (one that runs again appends to the files):
  // where they end now, before the user process can write a line.
  OutputStart output_start;
  for (auto [fd, offset] : {std::pair{stdout_fd_, &output_start.stdout_bytes},
                            std::pair{stderr_fd_, &output_start.stderr_bytes}}) {
    struct stat info {};
    if (fd >= 0 && fstat(fd, &info) == 0) *offset = info.st_size;
  }
  task_started_ = true;
  absl::StatusOr<pid_t> pid = Spawn(spawn);
  if (sandbox_) sandbox_->Spawned();
  if (!pid.ok()) {
    std::string why =
        StrCat("cannot start the command of ", task, ": ", ToStd(pid.status().message()));
    if (spec_.task_sandbox) why += " (tony.task.sandbox=false runs it unsandboxed)";
    spdlog::error("{}", why);
    next_attempt_ = Report(127, why);
    return 127;
  }
  spdlog::info("started {} as pid {}: {}", task, *pid, type->command);
  // The sidecar's URL only: a chief's TB_PORT serves nothing unless its code starts TensorBoard.
  if (tensorboard_sidecar) {
    RegisterTensorBoardUrl(StrCat("http://", options_.host, ":", *context.tensorboard_port, "/"));
  }
  return Supervise(*pid, start_ms, output_start);
}

void TaskExecutor::PrepareTaskFiles(const runtime::Environment& environment) {
  // The task's checkpoint directory, when it is a local one: made (0700) if missing, so the task
  // can write there at once. A URI (hdfs://...) is the task's to use as its code does.
  if (const char* checkpoints = std::getenv(rpc::kEnvCheckpointDir);
      checkpoints != nullptr && checkpoints[0] == '/') {
    std::error_code ec;
    if (!fs::exists(checkpoints, ec)) {
      if (fs::create_directories(checkpoints, ec); !ec) {
        fs::permissions(checkpoints, fs::perms::owner_all, ec);
      } else {
        spdlog::warn("cannot create the checkpoint directory {}: {}", checkpoints, ec.message());
      }
    }
  }
  // The tony_task helper: a failure to write it costs the task only the helper.
  const std::string helper_dir = (fs::current_path() / ".tony-task").string();
  const auto pythonpath = environment.find("PYTHONPATH");
  const char* inherited_pythonpath = std::getenv("PYTHONPATH");
  absl::StatusOr<std::map<std::string, std::string>> helper =
      InstallTaskHelper(helper_dir, pythonpath != environment.end()   ? pythonpath->second
                                    : inherited_pythonpath != nullptr ? inherited_pythonpath
                                                                      : "");
  if (helper.ok()) {
    helper_env_ = *std::move(helper);
    progress_fd_ = OpenTaskFile(helper_env_["TONY_PROGRESS_FILE"], O_RDWR | O_TRUNC, 0600);
  } else {
    spdlog::warn("the task goes without the tony_task helper: {}",
                 ToStd(helper.status().message()));
  }
}

int TaskExecutor::Supervise(pid_t pid, int64_t start_ms, const OutputStart& output_start) {
  const Clock* clock = SystemClock::Get();
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  SupervisionLimits limits;
  limits.heartbeat_interval_ms = spec_.heartbeat_interval_ms;
  limits.stop_grace_ms = spec_.stop_grace_ms;
  limits.execution_timeout_ms = spec_.execution_timeout_ms;
  limits.max_missed_heartbeats = spec_.max_missed_heartbeats;
  if (link_->awaits_next_am()) limits.am_recovery_ms = spec_.am_recovery_timeout_ms;
  Supervision supervision(limits, clock, start_ms);
  HeartbeatState beat;
  beat.read_stdout = output_start.stdout_bytes;
  beat.read_stderr = output_start.stderr_bytes;
  const config::JobTypeSpec* type = spec_.Find(options_.task.type);
  beat.progress =
      std::make_unique<ProgressTracker>(type ? type->progress_pattern : "", clock, start_ms);
  auto begin_stop = [&](const std::string& reason) {
    if (!supervision.BeginStop(reason)) return;
    spdlog::info("stopping the user process: {}", reason);
    SignalTree(pid, SIGTERM);
    // A stopped process (SIGSTOP, a debugger gone) acts on SIGTERM only once it runs again.
    SignalTree(pid, SIGCONT);
  };

  std::optional<ExitStatus> exit;
  while (!exit) {
    const Supervision::Due due = supervision.Check(stop_signal_);
    if (due.terminate) {
      spdlog::info("stopping the user process: {}", supervision.stop_reason());
      SignalTree(pid, SIGTERM);
      SignalTree(pid, SIGCONT);
    }
    if (due.kill) {
      spdlog::warn("the user process outlived the {} ms grace period; killing its tree",
                   spec_.stop_grace_ms);
      SignalDescendants(SIGKILL);
    }
    if (due.heartbeat) {
      // A silent AM may have been followed by its next attempt, which adopts the task.
      if (supervision.failed_heartbeats() > 0) link_->FollowNextAm();
      const bool awaiting_next_am = supervision.awaiting_next_am();
      const grpc::Status status = Heartbeat(pid, &beat, begin_stop);
      const int missed_before = supervision.failed_heartbeats();
      const int64_t silent_since_ms = supervision.am_silent_since_ms();
      // Said once each way: an AM that stops answering (stopped, swapping, its host paused) and
      // one that answers again, so that the container's log shows the gap.
      if (!status.ok() && missed_before == 0) {
        spdlog::warn(
            "the AM did not answer a heartbeat ({}); the task runs on, and is given up after {} "
            "missed heartbeats in a row (tony.task.max-missed-heartbeats)",
            GrpcError(status), spec_.max_missed_heartbeats);
      } else if (status.ok() && missed_before > 0) {
        spdlog::info("the AM answers again, after {} missed heartbeats over {} ms", missed_before,
                     clock->NowMs() - silent_since_ms);
      }
      const bool am_alive = supervision.OnHeartbeat(status.ok());
      if (am_alive && !awaiting_next_am && supervision.awaiting_next_am()) {
        spdlog::warn(
            "the AM at {} is gone ({} missed heartbeats); the task runs on while the AM's next "
            "attempt is awaited, for up to {} ms (tony.am.recovery-timeout-ms)",
            link_->address(), supervision.failed_heartbeats(), spec_.am_recovery_timeout_ms);
      }
      if (!am_alive) {
        spdlog::error("lost the AM: {} heartbeats failed, the last with {}",
                      supervision.failed_heartbeats(), GrpcError(status));
        SignalDescendants(SIGKILL);
        (void)WaitForExit(pid);
        if (pidfd >= 0) close(pidfd);
        return 1;
      }
      // The output printed since, for the job's history; a task that prints faster than this
      // catches up at the end.
      (void)shipper_->Ship(4);
    }
    if (std::optional<std::string> why = WatchDriver(clock->NowMs() - start_ms)) begin_stop(*why);
    pollfd fds[2] = {{pidfd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    poll(fds, 2, static_cast<int>(supervision.WaitMs()));
    if (fds[1].revents & POLLIN) {
      uint64_t drained;
      (void)!read(wake_fd_, &drained, sizeof(drained));
    }
    absl::StatusOr<bool> exited = HasExited(pid);
    if (!exited.ok()) {
      spdlog::error("{}", ToStd(exited.status().message()));
      break;
    }
    if (*exited) {
      // Still a zombie, so its pid cannot have been reused: whatever the user process left in
      // its group goes with it, and only then is it reaped.
      SignalDescendants(SIGKILL);
      absl::StatusOr<ExitStatus> status = WaitForExit(pid);
      if (!status.ok()) break;
      exit = sandbox_ ? sandbox_->ExitOf(*status) : *status;
    }
  }
  if (pidfd >= 0) close(pidfd);
  return Finish(exit, supervision.stop_reason(), beat.peak_rss);
}

grpc::Status TaskExecutor::Heartbeat(pid_t pid, HeartbeatState* beat,
                                     const std::function<void(const std::string&)>& stop) {
  const int64_t now = SystemClock::Get()->NowMs();
  rpc::HeartbeatRequest request;
  *request.mutable_task() = ToProto(options_.task);
  request.set_container_id(options_.container_id);
  // The sandbox's init is tony's, not the task's: only what runs below it counts.
  const TreeUsage usage = sandbox_ ? MeasureDescendants(pid) : MeasureTree(pid);
  beat->peak_rss = std::max(beat->peak_rss, usage.rss_bytes);
  request.set_rss_bytes(usage.rss_bytes);
  request.set_tokens_version(beat->tokens_version);
  request.set_cpu_seconds(static_cast<double>(usage.cpu_ticks) /
                          static_cast<double>(sysconf(_SC_CLK_TCK)));
  FeedOutput(stdout_fd_, ProgressTracker::Stream::kStdout, &beat->read_stdout, *beat->progress);
  FeedOutput(stderr_fd_, ProgressTracker::Stream::kStderr, &beat->read_stderr, *beat->progress);
  FeedOutput(progress_fd_, ProgressTracker::Stream::kReports, &beat->read_reports, *beat->progress);
  beat->progress->OnCpu(usage.cpu_ticks);
  *request.mutable_progress() = beat->progress->progress();
  request.set_quiet_ms(beat->progress->quiet_ms());
  if (gpu_sampler_ && now >= beat->next_gpu_sample_ms) {
    beat->next_gpu_sample_ms = now + spec_.metrics_interval_ms;
    if (std::optional<GpuUse> gpu = gpu_sampler_->Sample()) {
      request.set_has_gpu_sample(true);
      request.set_gpu_utilization(gpu->utilization);
      request.set_gpu_memory_bytes(gpu->memory_bytes);
    }
  }
  rpc::HeartbeatResponse response;
  grpc::Status status =
      link_->Heartbeat(request, &response, std::max<int64_t>(spec_.heartbeat_interval_ms, 1000));
  if (status.ok()) {
    if (response.dump_stacks()) {
      spdlog::warn("writing the stacks of the task's processes to its stderr: {}",
                   response.reason());
      // At most half of what the AM allows between heartbeats: a healthy member of the gang
      // that writes its stacks must not be taken for lost.
      const int64_t budget_ms = std::min<int64_t>(
          kMaxStacksMs, spec_.heartbeat_interval_ms * spec_.max_missed_heartbeats / 2);
      WriteStacks(
          pid, sandbox_.has_value(),
          StrCat("stacks of ", options_.task.ToString(), "'s processes: ", response.reason()),
          stderr_fd_, budget_ms, beat->progress->faulthandler_pids(), kStacksSignal);
    }
    if (response.stop()) {
      stop(response.reason().empty() ? "the AM asked to stop the task" : response.reason());
    }
    if (response.tokens_version() > beat->tokens_version && options_.apply_tokens) {
      // Not applied: asked for again with the next heartbeat.
      if (absl::Status s = options_.apply_tokens(response.tokens()); s.ok()) {
        beat->tokens_version = response.tokens_version();
        spdlog::info("the task has fresh credentials from the AM (version {})",
                     beat->tokens_version);
      } else {
        spdlog::warn("cannot give the task its fresh credentials: {}", ToStd(s.message()));
      }
    }
  }
  return status;
}

int TaskExecutor::Finish(const std::optional<ExitStatus>& exit, const std::string& stop_reason,
                         int64_t peak_rss) {
  int code = exit ? exit->ShellCode() : 1;
  std::string diagnostics;
  if (!stop_reason.empty()) diagnostics = StrCat("stopped: ", stop_reason);
  if (driver_watch_ && !driver_published_ && stop_reason.empty()) {
    // Workers wait for the driver's rendezvous: a driver that ended without one failed.
    diagnostics = StrCat(
        "the Horovod driver ended before it published its rendezvous port (a "
        "file <port>",
        kDriverPortFileSuffix, " in DRIVER_OUTPUT_PATH)");
    if (code == 0) code = 1;
  }
  if (code != 0) {
    absl::StatusOr<std::vector<std::string>> tail =
        TaskFileTail(stderr_fd_, "stderr", spec_.error_message_max_lines);
    if (tail.ok() && !tail->empty()) {
      if (!diagnostics.empty()) diagnostics += "; ";
      diagnostics += StrCat("last lines of stderr:\n", Join(*tail, "\n"));
    }
  }
  // The heartbeats' samples miss a task shorter than their interval.
  peak_rss = std::max(peak_rss, ReapedPeakRss(sandbox_ ? &*sandbox_ : nullptr));
  spdlog::info("{} exited: {} (peak RSS {} MiB)", options_.task.ToString(),
               exit ? exit->ToString() : "unknown", peak_rss >> 20);
  // A signal that neither the AM nor this executor sent: whoever owns the container (YARN's
  // NodeManager signals its whole process group) may be ending it, and its status will say why.
  // The user process can die of that signal before the signal thread has noted the executor's.
  const bool killed_from_outside = exit && exit->signal != 0 && stop_reason.empty();
  DrainOutput();
  next_attempt_ = Report(code, diagnostics, killed_from_outside, peak_rss);
  return code > 255 ? 255 : code;
}

}  // namespace tony::executor
