#include "executor/stack_report.h"

#include <dirent.h>
#include <fcntl.h>
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
  std::string out = StrCat("process ", pid, " (", ReadSmall(base + "/comm"), "): ",
                           ReadSmall(base + "/cmdline").substr(0, 300), "\n");
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

// Whether `signal` is still pending for the process (its own or its thread group's).
bool Pending(pid_t pid, int signal) {
  const std::string status = ReadSmall(StrCat("/proc/", pid, "/status"));
  for (std::string_view line : Split(status, '\n')) {
    // A process that died of it (or of anything) has nothing pending any more.
    if (line.starts_with("State:") && line.find('Z') != std::string_view::npos) return false;
    if (!line.starts_with("SigPnd:") && !line.starts_with("ShdPnd:")) continue;
    const std::string mask(StripWhitespace(line.substr(7)));
    if ((std::strtoull(mask.c_str(), nullptr, 16) >> (signal - 1)) & 1) return true;
  }
  return false;
}

// Waits (at most kHandlersWaitMs) until the signalled processes have taken the signal and the log
// has stopped growing for a moment: the stacks are written before the task is stopped, which would
// otherwise cut them short.
void WaitForHandlers(const std::vector<pid_t>& pids, int signal, const std::string& log) {
  constexpr int64_t kHandlersWaitMs = 3000;
  constexpr int64_t kQuietMs = 100;
  constexpr int64_t kPollMs = 20;
  const Clock* clock = SystemClock::Get();
  const int64_t deadline = clock->NowMs() + kHandlersWaitMs;
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(log, ec);
  int64_t unchanged_since = clock->NowMs();
  while (clock->NowMs() < deadline) {
    usleep(kPollMs * 1000);
    const uintmax_t now_size = std::filesystem::file_size(log, ec);
    if (now_size != size) {
      size = now_size;
      unchanged_since = clock->NowMs();
      continue;
    }
    const bool taken = std::none_of(pids.begin(), pids.end(),
                                    [&](pid_t pid) { return Pending(pid, signal); });
    if (taken && clock->NowMs() - unchanged_since >= kQuietMs) return;
  }
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

void WriteStacks(pid_t root, bool below_root, const std::string& title, const std::string& path,
                 const std::set<pid_t>& faulthandler_pids, int stacks_signal) {
  std::vector<pid_t> pids = ProcessTree(root, ListProcesses());
  if (below_root) std::erase(pids, root);
  std::string report = StrCat("\n[tony] ", title, "\n");
  if (pids.empty()) report += "[tony] no process of the task is left\n";
  for (pid_t pid : pids) report += DescribeProcess(pid);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    spdlog::warn("cannot write the task's stacks to {}", path);
    return;
  }
  (void)!write(fd, report.data(), report.size());
  close(fd);
  // Python's own stacks from the processes that asked for the signal (they write to their stderr,
  // which is this log).
  if (stacks_signal != 0 && !faulthandler_pids.empty()) {
    std::vector<pid_t> signalled;
    for (pid_t pid : pids) {
      if (!faulthandler_pids.contains(InnermostPid(pid))) continue;
      if (kill(pid, stacks_signal) != 0) continue;
      signalled.push_back(pid);
      // A stopped process runs its handler only once continued. (Continued with a stop's SIGTERM
      // already pending, it would die before the handler ran.)
      if (std::optional<ProcessInfo> info = ReadProcessInfo(pid); info && info->state == 'T') {
        kill(pid, SIGCONT);
      }
    }
    WaitForHandlers(signalled, stacks_signal, path);
  }

  const std::string py_spy = PySpy();
  if (py_spy.empty()) return;
  for (pid_t pid : pids) {
    if (ReadSmall(StrCat("/proc/", pid, "/comm")).find("python") == std::string::npos) continue;
    SpawnOptions spawn;
    spawn.argv = {py_spy, "dump", "--pid", std::to_string(pid)};
    spawn.stdout_path = path;
    spawn.stderr_path = path;
    absl::StatusOr<pid_t> child = Spawn(spawn);
    if (!child.ok()) continue;
    absl::StatusOr<std::optional<ExitStatus>> done =
        WaitForExitFor(*child, static_cast<int>(kPySpyTimeoutMs));
    if (done.ok() && !done->has_value()) {
      kill(*child, SIGKILL);
      (void)WaitForExit(*child);
    }
  }
}

}  // namespace tony::executor
