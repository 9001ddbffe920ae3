// TaskExecutor's watch over the running user process: Supervision's rules, the heartbeats that
// carry its progress and resources to the AM, and how the attempt ends. Split from
// task_executor.cc; the class is TaskExecutor's (task_executor.h).

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>

#include "common/clock.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "common/resident_pages.h"
#include "common/strings.h"
#include "config/heartbeat_pace.h"
#include "executor/stack_report.h"
#include "executor/supervision.h"
#include "executor/task_context.h"
#include "executor/task_executor.h"
#include "executor/task_files.h"
#include "grpcpp/grpcpp.h"
#include "spdlog/spdlog.h"

namespace tony::executor {

namespace fs = std::filesystem;

int TaskExecutor::Supervise(pid_t pid, int64_t start_ms, const OutputStart& output_start) {
  const Clock* clock = SystemClock::Get();
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  // A large job's executors beat less often, within the same deadline (config/heartbeat_pace.h).
  const config::HeartbeatPace pace = config::ExecutorHeartbeat(spec_);
  if (pace.interval_ms != spec_.heartbeat_interval_ms) {
    spdlog::info(
        "heartbeats every {} ms, {} missed in a row allowed: the job's {} tasks stretch the "
        "configured {} ms x {} (tony.task.heartbeat-interval-ms, tony.task.max-missed-heartbeats) "
        "within the same {} ms",
        pace.interval_ms, pace.max_missed, spec_.TotalTasks(), spec_.heartbeat_interval_ms,
        spec_.max_missed_heartbeats, spec_.heartbeat_interval_ms * spec_.max_missed_heartbeats);
  }
  const int64_t output_pieces_per_beat =
      (pace.interval_ms + spec_.heartbeat_interval_ms - 1) / spec_.heartbeat_interval_ms;
  SupervisionLimits limits;
  limits.heartbeat_interval_ms = pace.interval_ms;
  limits.check_interval_ms = std::min<int64_t>(spec_.heartbeat_interval_ms, 1000);
  limits.stop_grace_ms = spec_.stop_grace_ms;
  limits.execution_timeout_ms = spec_.execution_timeout_ms;
  limits.max_missed_heartbeats = pace.max_missed;
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

  bool released_startup_pages = false;
  std::shared_ptr<HeartbeatCall> beating;  // sent, not answered yet
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
      // Not waited for: the AM answers heartbeats at its next tick, and the task may end, or the
      // executor be stopped, meanwhile (the answer wakes the loop).
      beating = link_->StartHeartbeat(HeartbeatNow(pid, &beat),
                                      std::max<int64_t>(spec_.heartbeat_interval_ms, 1000),
                                      [this] { Wake(); });
      supervision.OnHeartbeatSent();
    }
    if (beating && beating->done()) {
      const grpc::Status status = beating->status();
      if (status.ok()) OnHeartbeatAnswer(pid, beating->response(), &beat, begin_stop);
      beating.reset();
      const bool awaiting_next_am = supervision.awaiting_next_am();
      const int missed_before = supervision.failed_heartbeats();
      const int64_t silent_since_ms = supervision.am_silent_since_ms();
      // Said once each way: an AM that stops answering (stopped, swapping, its host paused) and
      // one that answers again, so that the container's log shows the gap.
      if (!status.ok() && missed_before == 0) {
        spdlog::warn(
            "the AM did not answer a heartbeat ({}); the task runs on, and is given up after {} "
            "missed heartbeats in a row ({} ms, tony.task.heartbeat-interval-ms x "
            "tony.task.max-missed-heartbeats)",
            GrpcError(status), pace.max_missed, pace.interval_ms * pace.max_missed);
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
      // catches up at the end. A stretched interval ships as much per beat as the configured one
      // would have over the same time.
      (void)shipper_->Ship(static_cast<int>(4 * output_pieces_per_beat));
      if (!released_startup_pages) {
        // What starting up touched (loading, TLS, registration, the task's launch) is not touched
        // again; the watch from here on touches its own pages again within a beat.
        released_startup_pages = true;
        const long released_kb = ReleaseCleanFilePages();
        spdlog::debug("let go of {} kB of file pages that starting up touched", released_kb);
      }
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
  // The task's end goes to the AM now; a heartbeat still waiting has nothing more to say.
  if (beating) beating->Abandon();
  if (pidfd >= 0) close(pidfd);
  return Finish(exit, supervision.stop_reason(), beat.peak_rss);
}

rpc::HeartbeatRequest TaskExecutor::HeartbeatNow(pid_t pid, HeartbeatState* beat) {
  const int64_t now = SystemClock::Get()->NowMs();
  rpc::HeartbeatRequest request;
  *request.mutable_task() = ToProto(options_.task);
  request.set_container_id(options_.container_id);
  request.set_attempt(attempt_);
  // The sandbox's init is tony's, not the task's: only what runs below it counts.
  const TreeUsage usage = sandbox_ ? MeasureDescendants(pid) : MeasureTree(pid);
  beat->peak_rss = std::max(beat->peak_rss, usage.rss_bytes);
  request.set_rss_bytes(usage.rss_bytes);
  request.set_tokens_version(beat->tokens_version);
  request.set_cpu_seconds(static_cast<double>(usage.cpu_ticks) /
                          static_cast<double>(sysconf(_SC_CLK_TCK)));
  FeedTaskFile(stdout_fd_, ProgressTracker::Stream::kStdout, &beat->read_stdout, *beat->progress);
  FeedTaskFile(stderr_fd_, ProgressTracker::Stream::kStderr, &beat->read_stderr, *beat->progress);
  FeedTaskFile(progress_fd_, ProgressTracker::Stream::kReports, &beat->read_reports,
               *beat->progress);
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
  return request;
}

void TaskExecutor::OnHeartbeatAnswer(pid_t pid, const rpc::HeartbeatResponse& response,
                                     HeartbeatState* beat,
                                     const std::function<void(const std::string&)>& stop) {
  if (response.dump_stacks()) {
    spdlog::warn("writing the stacks of the task's processes to its stderr: {}", response.reason());
    // At most half of what the AM allows between heartbeats: a healthy member of the gang
    // that writes its stacks must not be taken for lost.
    const int64_t budget_ms = std::min<int64_t>(
        kMaxStacksMs, spec_.heartbeat_interval_ms * spec_.max_missed_heartbeats / 2);
    WriteStacks(pid, sandbox_.has_value(),
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
      spdlog::info("the task has fresh credentials from the AM (version {})", beat->tokens_version);
    } else {
      spdlog::warn("cannot give the task its fresh credentials: {}", ToStd(s.message()));
    }
  }
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
  if (OutputsUploaded(spec_.output_dir)) {
    // What the task wrote, failed or not (a failed task's checkpoints may help its user).
    const std::string local = LocalOutputDir(spec_.output_dir, fs::current_path().string());
    const absl::Status saved = options_.upload_outputs
                                   ? options_.upload_outputs(local)
                                   : absl::FailedPreconditionError("this executor has no HDFS");
    if (!saved.ok()) {
      const std::string why = StrCat("the task's outputs were not saved to ", spec_.output_dir,
                                     ": ", ToStd(saved.message()));
      spdlog::error("{}", why);
      diagnostics = diagnostics.empty() ? why : StrCat(diagnostics, "; ", why);
      if (code == 0) code = 1;
    }
  }
  if (code == 0 && spec_.preprocess && options_.task.type == config::kPreprocessType) {
    absl::StatusOr<std::string> params = FindModelParams(stdout_fd_, config::kModelParamsMarker);
    if (params.ok()) {
      model_params_ = *std::move(params);
      if (!model_params_.empty()) spdlog::info("model parameters: {}", model_params_);
    } else {
      diagnostics =
          StrCat("the preprocessing job's parameters: ", ToStd(params.status().message()));
      code = 1;
    }
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
  if (report_failed_ && !model_params_.empty()) {
    // The container's end alone would read as a success without them: the later tasks would
    // start without their parameters. A failure says what happened.
    spdlog::error("the preprocessing job's parameters did not reach the AM");
    return 1;
  }
  return code > 255 ? 255 : code;
}

}  // namespace tony::executor
