#pragma once
// How a child process ended, and waiting for it: reaping at once, without blocking, within a
// time, or only asking whether it has ended.
//
// Threads: any thread may call these. They reap the child, so each pid must be waited for by one
// caller only; reaping is never done behind the caller's back (no SIGCHLD handler), so a pid stays
// valid until one of them has returned its ExitStatus.

#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace tony {

struct ExitStatus {
  int exit_code = 0;  // Valid when signal == 0.
  int signal = 0;     // The terminating signal, 0 if the process exited.

  // The shell's convention: exit_code, or 128 + signal.
  int ShellCode() const;
  // "exit code 3" or "killed by signal 9 (SIGKILL)".
  std::string ToString() const;

  friend bool operator==(const ExitStatus&, const ExitStatus&) = default;
};

// The ExitStatus of a wait status as waitpid() gives it.
ExitStatus ExitStatusFromWait(int wait_status);

// Blocks until the child `pid` exits and reaps it. Fails if pid is not an unreaped child of this
// process.
[[nodiscard]] absl::StatusOr<ExitStatus> WaitForExit(pid_t pid);

// Reaps the child if it has exited; std::nullopt while it still runs. Never blocks.
[[nodiscard]] absl::StatusOr<std::optional<ExitStatus>> PollExit(pid_t pid);
// Whether the child has exited, WITHOUT reaping it: while it is a zombie its pid cannot be
// reused, so its group and session can still be killed safely by that pid. Reap it afterwards
// with WaitForExit.
[[nodiscard]] absl::StatusOr<bool> HasExited(pid_t pid);

// Waits up to timeout_ms (negative: without limit) for the child to exit and reaps it;
// std::nullopt if it still runs when the time is up. Sleeps in poll() on a pidfd, without
// busy-looping and without relying on SIGCHLD.
[[nodiscard]] absl::StatusOr<std::optional<ExitStatus>> WaitForExitFor(pid_t pid, int timeout_ms);

}  // namespace tony
