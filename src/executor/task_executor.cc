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
#include "common/resident_pages.h"
#include "common/strings.h"
#include "executor/hadoop_env.h"
#include "executor/stack_report.h"
#include "executor/supervision.h"
#include "executor/task_context.h"
#include "executor/task_files.h"
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
  Wake();
}

void TaskExecutor::Wake() {
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

bool TaskExecutor::WaitForStop(int64_t ms) {
  // The whole time unless a stop comes: the descriptor may also have been woken for something
  // else (a heartbeat's answer just before it was abandoned), which is drained and waited past.
  const Clock* clock = SystemClock::Get();
  const int64_t until = clock->NowMs() + std::max<int64_t>(ms, 0);
  while (stop_signal_ == 0) {
    const int64_t left = until - clock->NowMs();
    if (left <= 0) break;
    pollfd fd = {wake_fd_, POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(left)) > 0 && (fd.revents & POLLIN) != 0) {
      uint64_t drained;
      (void)!read(wake_fd_, &drained, sizeof(drained));
    }
  }
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
  if (exit_code == 0) request.set_model_params(model_params_);
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
    report_failed_ = true;
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
  // Reading the job and setting up the channel is done: its pages of code need not stay resident
  // while the TLS handshake and the registration touch theirs (the executor's peak).
  (void)ReleaseCleanFilePages();
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
  // Joining the cluster (the TLS handshake, registration) is done: nor need its pages stay while
  // the task's command starts and runs.
  (void)ReleaseCleanFilePages();
  runtime::TaskContext context = TaskContextFor(options_, spec_, *cluster);
  context.output_dir = LocalOutputDir(spec_.output_dir, fs::current_path().string());
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
  (void)ReleaseCleanFilePages();  // and the launch's, before the task's command grows
  // The sidecar's URL only: a chief's TB_PORT serves nothing unless its code starts TensorBoard.
  if (tensorboard_sidecar) {
    RegisterTensorBoardUrl(StrCat("http://", options_.host, ":", *context.tensorboard_port, "/"));
  }
  return Supervise(*pid, start_ms, output_start);
}

void TaskExecutor::PrepareTaskFiles(const runtime::Environment& environment) {
  // The task's output directory: the job's (made by the client, or on YARN by the first task on
  // each node for a file:// one), or one in the container that Finish copies to HDFS.
  if (auto dir = environment.find("TONY_OUTPUT_DIR"); dir != environment.end()) {
    if (absl::Status made = EnsureOutputDir(dir->second); !made.ok()) {
      spdlog::warn("the task's output directory: {}", ToStd(made.message()));
    }
  }
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

}  // namespace tony::executor
