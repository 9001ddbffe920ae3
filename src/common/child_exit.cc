#include "common/child_exit.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace tony {
namespace {

// waitpid that retries EINTR. Returns 0 if WNOHANG and the child still runs.
absl::StatusOr<pid_t> WaitPid(pid_t pid, int* status, int flags) {
  while (true) {
    pid_t result = waitpid(pid, status, flags);
    if (result >= 0) return result;
    if (errno != EINTR) {
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot wait for pid ", pid));
    }
  }
}

// Closes the pidfd WaitForExitFor opened.
struct PidFd {
  int fd;
  ~PidFd() { close(fd); }
};

}  // namespace

ExitStatus ExitStatusFromWait(int status) {
  ExitStatus result;
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

int ExitStatus::ShellCode() const { return signal != 0 ? 128 + signal : exit_code; }

std::string ExitStatus::ToString() const {
  if (signal == 0) return absl::StrCat("exit code ", exit_code);
  const char* abbrev = sigabbrev_np(signal);
  if (abbrev == nullptr) return absl::StrCat("killed by signal ", signal);
  return absl::StrCat("killed by signal ", signal, " (SIG", abbrev, ")");
}

absl::StatusOr<ExitStatus> WaitForExit(pid_t pid) {
  int status = 0;
  auto result = WaitPid(pid, &status, 0);
  if (!result.ok()) return result.status();
  return ExitStatusFromWait(status);
}

absl::StatusOr<bool> HasExited(pid_t pid) {
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    if (errno == EINTR) continue;
    return absl::InternalError(StrCat("waitid(", pid, "): ", std::strerror(errno)));
  }
  return info.si_pid == pid;
}

absl::StatusOr<std::optional<ExitStatus>> PollExit(pid_t pid) {
  int status = 0;
  auto result = WaitPid(pid, &status, WNOHANG);
  if (!result.ok()) return result.status();
  if (*result == 0) return std::nullopt;
  return ExitStatusFromWait(status);
}

absl::StatusOr<std::optional<ExitStatus>> WaitForExitFor(pid_t pid, int timeout_ms) {
  if (timeout_ms < 0) {
    auto status = WaitForExit(pid);
    if (!status.ok()) return status.status();
    return *status;
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto remaining_ms = [&] {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::max<int64_t>(left, 0));
  };

  // An unreaped child's pid cannot be reused, so the pidfd refers to this child.
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    PidFd owner{pidfd};
    pollfd entry{pidfd, POLLIN, 0};
    while (true) {
      int ready = poll(&entry, 1, remaining_ms());
      if (ready > 0) break;
      if (ready == 0) return PollExit(pid);  // Time is up; it may have exited just now.
      if (errno != EINTR) {
        return absl::ErrnoToStatus(errno, absl::StrCat("cannot wait for pid ", pid));
      }
    }
    return PollExit(pid);
  }
  if (errno == ESRCH) return PollExit(pid);  // No such process: PollExit reports it.

  // No pidfd (old kernel, or out of descriptors): poll waitpid with a growing sleep.
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    auto status = PollExit(pid);
    if (!status.ok() || status->has_value()) return status;
    int left = remaining_ms();
    if (left == 0) return std::nullopt;
    std::this_thread::sleep_for(std::min(pause, std::chrono::milliseconds(left)));
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

}  // namespace tony
