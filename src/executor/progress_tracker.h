#pragma once
// How far a task is and how long it has been quiet, from what it prints and the CPU its processes
// use (docs/running-jobs.md, "Progress and hangs"). A line matching the job type's
// tony.<type>.progress-pattern reports a step (and optionally a total and metrics, from named
// groups). Once a task has reported a step, only a new step is progress: a task that goes on
// printing or spinning at the same step is hung all the same. Before that, any output or CPU use
// is. A task may also report through the file named by TONY_PROGRESS_FILE (the tony_task helper
// writes it; any language may): one line a report, of space-separated name=value pairs, `step`
// required, `total` and metrics optional ("step=700 total=1000 loss=0.231"); a line
// "faulthandler=<pid>" says that process dumps its Python stacks on kStacksSignal. The executor
// feeds it each heartbeat and sends progress() and quiet_ms() to the AM, which
// decides whether the task is hung (tony.task.hang-timeout-ms). Tests drive it with a FakeClock.
//
// Thread: the executor's supervision loop.

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "rpc/tony.pb.h"

namespace re2 {
class RE2;
}

namespace tony::executor {

// The signal on which a process that said "faulthandler=<pid>" writes its Python stacks.
inline constexpr int kStacksSignal = SIGUSR2;

class ProgressTracker {
 public:
  // `pattern`: the job type's progress pattern (validated by config), "" for none. The task
  // starts quiet at `start_ms` on `clock`.
  ProgressTracker(const std::string& pattern, const Clock* clock, int64_t start_ms);
  ~ProgressTracker();
  ProgressTracker(const ProgressTracker&) = delete;
  ProgressTracker& operator=(const ProgressTracker&) = delete;

  // kReports: the TONY_PROGRESS_FILE.
  enum class Stream { kStdout, kStderr, kReports };
  // Bytes the task printed on one stream, in order; lines may be split across calls.
  void OnOutput(Stream stream, std::string_view bytes);
  // Part of a stream was skipped (too much to read at once): its partial line is dropped, and so
  // are the next bytes up to the end of the line they are in.
  void OnSkipped(Stream stream);
  // The stream starts again from its beginning (a file written over): its partial line is dropped.
  void OnRestarted(Stream stream);
  // The task's processes' CPU time so far, in clock ticks.
  void OnCpu(uint64_t cpu_ticks);

  const rpc::TaskProgress& progress() const { return progress_; }
  // The processes that said they dump their Python stacks on kStacksSignal.
  const std::set<pid_t>& faulthandler_pids() const { return faulthandler_pids_; }
  // How long since the task last made progress.
  int64_t quiet_ms() const;
  // A line longer than this is cut there for matching.
  static constexpr size_t kMaxLineBytes = size_t{64} * 1024;
  // Metrics kept per task (the first names seen); more are ignored.
  static constexpr size_t kMaxMetrics = 16;
  static constexpr size_t kMaxMetricName = 64;
  // Pids a task may name for its Python stacks (Linux's largest pid is 2^22).
  static constexpr size_t kMaxFaulthandlerPids = 64;
  static constexpr int64_t kMaxPid = int64_t{1} << 22;

 private:
  void Line(std::string_view line);
  void Report(std::string_view line);
  // A step (with its total, 0 when not said, and metrics): progress when it is a new one.
  void Step(int64_t step, int64_t total, const std::map<std::string, double>& metrics);
  void Active();

  const Clock* clock_;
  std::unique_ptr<re2::RE2> pattern_;         // null: none
  std::string partial_[3];                    // each stream's unfinished line
  bool skipping_[3] = {false, false, false};  // after a skip, until the next line starts
  std::set<pid_t> faulthandler_pids_;
  rpc::TaskProgress progress_;
  uint64_t cpu_ticks_ = 0;
  int64_t last_progress_ms_ = 0;
};

}  // namespace tony::executor
