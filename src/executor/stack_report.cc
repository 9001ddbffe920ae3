#include "executor/stack_report.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "common/clock.h"
#include "common/files.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "common/strings.h"
#include "spdlog/spdlog.h"

namespace tony::executor {
namespace {

std::string ReadSmall(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return "";
  while (!text->empty() && (text->back() == '\n' || text->back() == '\0')) text->pop_back();
  return *text;
}

// "R (running)"-style state from /proc/<pid>/task/<tid>/stat: the field after the command's ')'.
char StateOf(const std::string& stat) {
  const size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '?';
}

std::string_view StateName(char state) {
  switch (state) {
    case 'R':
      return "running";
    case 'S':
      return "sleeping";
    case 'D':
      return "in uninterruptible wait (I/O)";
    case 'T':
      return "stopped";
    case 't':
      return "stopped by a tracer";
    case 'Z':
      return "zombie";
    default:
      return "unknown";
  }
}

// How long the processes that catch the stacks signal get to write their stacks.
constexpr int64_t kHandlersWaitMs = 3000;

std::string PySpy() {
  const char* path = std::getenv("PATH");
  for (std::string_view dir : Split(path != nullptr ? path : "", ':')) {
    if (dir.empty()) continue;
    std::string candidate = StrCat(dir, "/py-spy");
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// One process: each thread's state and wait, and the kernel's stack where it may be read.
std::string DescribeProcess(pid_t pid) {
  const std::string base = StrCat("/proc/", pid);
  std::string out = StrCat("process ", pid, " (", ReadSmall(base + "/comm"),
                           "): ", ReadSmall(base + "/cmdline").substr(0, 300), "\n");
  for (char& c : out) {
    if (c == '\0') c = ' ';
  }
  std::vector<pid_t> threads;
  if (DIR* dir = opendir((base + "/task").c_str())) {
    while (const dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') threads.push_back(std::atoi(entry->d_name));
    }
    closedir(dir);
  }
  std::sort(threads.begin(), threads.end());
  for (pid_t tid : threads) {
    const std::string task = StrCat(base, "/task/", tid);
    const char state = StateOf(ReadSmall(task + "/stat"));
    const std::string wchan = ReadSmall(task + "/wchan");
    out += StrCat("  thread ", tid, " (", ReadSmall(task + "/comm"), ") ", StateName(state),
                  wchan.empty() || wchan == "0" ? "" : StrCat(", waiting in ", wchan), "\n");
    // Readable with CAP_SYS_ADMIN only on most kernels; shown where it is.
    if (const std::string stack = ReadSmall(task + "/stack"); !stack.empty()) {
      for (std::string_view line : Split(stack, '\n')) out += StrCat("    ", line, "\n");
    }
  }
  return out;
}

// The bit of `signal` in a /proc/<pid>/status mask line ("SigPnd:", "SigCgt:", ...).
bool MaskHas(const std::string& status, std::string_view field, int signal) {
  for (std::string_view line : Split(status, '\n')) {
    if (!line.starts_with(field)) continue;
    const std::string mask(StripWhitespace(line.substr(field.size())));
    if ((std::strtoull(mask.c_str(), nullptr, 16) >> (signal - 1)) & 1) return true;
  }
  return false;
}

// Whether `signal` is still pending for the process (its own or its thread group's).
bool Pending(pid_t pid, int signal) {
  const std::string status = ReadSmall(StrCat("/proc/", pid, "/status"));
  // A process that died of it (or of anything) has nothing pending any more.
  for (std::string_view line : Split(status, '\n')) {
    if (line.starts_with("State:") && line.find('Z') != std::string_view::npos) return false;
  }
  return MaskHas(status, "SigPnd:", signal) || MaskHas(status, "ShdPnd:", signal);
}

// The log's size, as its descriptor sees it.
int64_t SizeOf(int fd) {
  struct stat info {};
  return fstat(fd, &info) == 0 ? static_cast<int64_t>(info.st_size) : -1;
}

// Waits (until `deadline_ms`) until the signalled processes have taken the signal and the log has
// stopped growing for a moment: the stacks are written before the task is stopped, which would
// otherwise cut them short.
void WaitForHandlers(const std::vector<pid_t>& pids, int signal, int log_fd, int64_t deadline_ms) {
  constexpr int64_t kQuietMs = 100;
  constexpr int64_t kPollMs = 20;
  const Clock* clock = SystemClock::Get();
  int64_t size = SizeOf(log_fd);
  int64_t unchanged_since = clock->NowMs();
  while (clock->NowMs() < deadline_ms) {
    usleep(kPollMs * 1000);
    const int64_t now_size = SizeOf(log_fd);
    if (now_size != size) {
      size = now_size;
      unchanged_since = clock->NowMs();
      continue;
    }
    const bool taken =
        std::none_of(pids.begin(), pids.end(), [&](pid_t pid) { return Pending(pid, signal); });
    if (taken && clock->NowMs() - unchanged_since >= kQuietMs) return;
  }
}

// Signals the process `info` describes, only if it is still that process (not a pid reused since
// the table was read) and it catches the signal (a process that does not would die of it).
bool SignalIfStill(const ProcessInfo& info, int signal) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, info.pid, 0));
  if (pidfd < 0) return false;
  bool sent = false;
  // Checked after the pidfd is open: from now on the pid cannot be reused under it.
  const std::optional<ProcessInfo> now = ReadProcessInfo(info.pid);
  if (now && now->start_ticks == info.start_ticks &&
      MaskHas(ReadSmall(StrCat("/proc/", info.pid, "/status")), "SigCgt:", signal)) {
    sent = syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0) == 0;
  }
  close(pidfd);
  return sent;
}

}  // namespace

pid_t InnermostPid(pid_t pid) {
  const std::string status = ReadSmall(StrCat("/proc/", pid, "/status"));
  for (std::string_view line : Split(status, '\n')) {
    if (!line.starts_with("NSpid:")) continue;
    std::vector<std::string_view> ids = Split(line.substr(6), '\t');
    std::erase(ids, std::string_view());
    if (!ids.empty()) {
      const std::string last(ids.back());
      if (const int inner = std::atoi(last.c_str()); inner > 0) return inner;
    }
  }
  return pid;
}

void WriteStacks(pid_t root, bool below_root, const std::string& title, int out_fd,
                 int64_t budget_ms, const std::set<pid_t>& faulthandler_pids, int stacks_signal) {
  const Clock* clock = SystemClock::Get();
  const int64_t deadline = clock->NowMs() + budget_ms;
  const std::vector<ProcessInfo> table = ListProcesses();
  std::vector<pid_t> pids = ProcessTree(root, table);
  if (below_root) std::erase(pids, root);
  std::string report = StrCat("\n[tony] ", title, "\n");
  if (pids.empty()) report += "[tony] no process of the task is left\n";
  for (pid_t pid : pids) report += DescribeProcess(pid);
  if (out_fd < 0 || write(out_fd, report.data(), report.size()) < 0) {
    spdlog::warn("cannot write the task's stacks to its log");
    return;
  }
  // Python's own stacks from the processes that asked for the signal (they write to their stderr,
  // which is this log).
  if (stacks_signal != 0 && !faulthandler_pids.empty()) {
    std::vector<pid_t> signalled;
    for (pid_t pid : pids) {
      if (!faulthandler_pids.contains(InnermostPid(pid))) continue;
      const auto info = std::find_if(table.begin(), table.end(),
                                     [&](const ProcessInfo& p) { return p.pid == pid; });
      if (info == table.end() || !SignalIfStill(*info, stacks_signal)) continue;
      signalled.push_back(pid);
      // A stopped process runs its handler only once continued. (Continued with a stop's SIGTERM
      // already pending, it would die before the handler ran.)
      if (std::optional<ProcessInfo> now = ReadProcessInfo(pid); now && now->state == 'T') {
        kill(pid, SIGCONT);
      }
    }
    if (!signalled.empty()) {
      WaitForHandlers(signalled, stacks_signal, out_fd,
                      std::min(deadline, clock->NowMs() + kHandlersWaitMs));
    }
  }

  const std::string py_spy = PySpy();
  if (py_spy.empty()) return;
  for (pid_t pid : pids) {
    const int64_t left = deadline - clock->NowMs();
    if (left <= 0) break;
    if (ReadSmall(StrCat("/proc/", pid, "/comm")).find("python") == std::string::npos) continue;
    SpawnOptions spawn;
    spawn.argv = {py_spy, "dump", "--nonblocking", "--pid", std::to_string(pid)};
    // The executor's own descriptor, reopened: never the log's name, which the task can change.
    spawn.stdout_path = StrCat("/proc/self/fd/", out_fd);
    spawn.stderr_path = spawn.stdout_path;
    absl::StatusOr<pid_t> child = Spawn(spawn);
    if (!child.ok()) continue;
    absl::StatusOr<std::optional<ExitStatus>> done = WaitForExitFor(*child, static_cast<int>(left));
    if (done.ok() && !done->has_value()) {
      kill(*child, SIGKILL);
      (void)WaitForExit(*child);
    }
  }
}

}  // namespace tony::executor
