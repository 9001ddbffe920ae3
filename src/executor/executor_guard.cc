#include "executor/executor_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/helper_program.h"
#include "common/proc_table.h"
#include "common/resident_pages.h"
#include "spdlog/spdlog.h"

namespace tony::executor {
namespace {

constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP};

// The exit code a shell would report for a wait status.
int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Overwrites the argument in place (what /proc/<pid>/cmdline and ps show), padding with NULs.
void Rename(char* arg, const char* name) {
  if (arg == nullptr) return;
  const size_t room = std::strlen(arg);
  const size_t length = std::min(room, std::strlen(name));
  std::copy_n(name, length, arg);
  std::memset(arg + length, 0, room - length);
}

// Reaps every exited child; true once `executor` is among them (its wait status in *status).
bool ReapChildren(pid_t executor, int* status) {
  bool executor_done = false;
  int child_status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &child_status, WNOHANG)) > 0) {
    if (pid == executor) {
      *status = child_status;
      executor_done = true;
    }
  }
  return executor_done;
}

// Kills everything below the guard and reaps it: returns once the guard has no child left.
int KillWhatIsLeft(const sigset_t& chld) {
  int killed = 0;
  // With no child left nothing is below (the executor's orphans became this subreaper's children
  // before it could be reaped): no scan.
  pid_t pid;
  while ((pid = waitpid(-1, nullptr, WNOHANG)) > 0) {
  }
  while (pid >= 0) {
    killed += SignalDescendants(SIGKILL);
    while ((pid = waitpid(-1, nullptr, WNOHANG)) > 0) {
    }
    if (pid < 0) break;  // ECHILD: nothing is left
    // Something is still alive: either dying from the SIGKILL just sent, or an orphan adopted
    // after the snapshot. Wait for the next child to exit; the timeout re-snapshots for the latter.
    const timespec limit = {0, 100L * 1000 * 1000};
    sigtimedwait(&chld, nullptr, &limit);
  }
  return killed;
}

void CloseBoth(const int (&pipe)[2]) {
  for (int fd : pipe) {
    if (fd >= 0) close(fd);
  }
}

// Closes the pipe's write end and reads until its other copy is closed too (or there is none).
void WaitForEndOfFile(const int (&pipe)[2]) {
  if (pipe[0] < 0) return;
  close(pipe[1]);
  char byte;
  ssize_t got;
  do {
    got = read(pipe[0], &byte, 1);
  } while (got < 0 && errno == EINTR);
  close(pipe[0]);
}

// Replaces this process with tony's helper program (common/helper_program.h), which goes on as
// the guard of `executor`. Returns only if that fails, with errno set.
void ExecGuardProgram(pid_t executor) {
  const int fd = HelperProgramFd("tony-guard", 0700);
  if (fd < 0) return;
  std::string name = program_invocation_name != nullptr ? program_invocation_name : "tony";
  std::string role = "guard";
  std::string pid = std::to_string(executor);
  char* argv[] = {name.data(), role.data(), pid.data(), nullptr};
  fexecve(fd, argv, environ);
  const int error = errno;
  close(fd);
  errno = error;
}

}  // namespace

std::optional<int> RunGuard(char* role_arg, GuardKind kind) {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigset_t before;
  // Blocked before the fork so that no SIGCHLD is lost before the guard waits for it.
  sigprocmask(SIG_BLOCK, &chld, &before);
  const pid_t guard = getpid();
  // Orphans of the executor's tree come to the nearest subreaper above them: the executor while it
  // lives, the guard once it is gone.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  // What starting up touched of tony's code is let go of first: the guard is about to become a
  // small program, and the executor maps what it touches anew, but meanwhile both count.
  (void)ReleaseCleanFilePages();
  // Closed in the guard by its exec (or explicitly): until then the executor waits, so that the
  // two never hold a copy of tony's start-up each at the same time.
  int guard_done[2] = {-1, -1};
  if (pipe2(guard_done, O_CLOEXEC) != 0) guard_done[0] = guard_done[1] = -1;
  const pid_t executor = fork();
  if (executor < 0) {
    spdlog::warn("cannot start the executor's guard ({}): running unguarded", std::strerror(errno));
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    sigprocmask(SIG_SETMASK, &before, nullptr);
    CloseBoth(guard_done);
    (void)MapCodePagesAsTouched();
    return std::nullopt;
  }
  if (executor == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    // The guard may have died before PR_SET_PDEATHSIG took effect: stop as if it had signalled.
    if (getppid() != guard)
      kill(getpid(), SIGTERM);  // blocked: the executor's signal thread takes it
    sigprocmask(SIG_SETMASK, &before, nullptr);
    WaitForEndOfFile(guard_done);
    // A forked child starts with none of tony's code mapped, and without the registration of
    // main.cc's: from here on the executor holds only the pages it touches, not their neighbours.
    (void)MapCodePagesAsTouched();
    return std::nullopt;
  }
  if (guard_done[0] >= 0) close(guard_done[0]);

  if (kind == GuardKind::kProgram) {
    ExecGuardProgram(executor);
    spdlog::info("the executor's guard stays a copy of tony: cannot execute its own program ({})",
                 std::strerror(errno));
  }
  // The guard as a copy of tony: its shared pages of tony's files are let go of, which the
  // executor holds too; then the executor starts.
  Rename(role_arg, "guard");
  ReleaseCleanFilePages();
  if (guard_done[1] >= 0) close(guard_done[1]);
  sigset_t wait_for = chld;
  for (int sig : kForwarded) sigaddset(&wait_for, sig);
  int status = 0;
  while (!ReapChildren(executor, &status)) {
    siginfo_t info;
    const int sig = sigwaitinfo(&wait_for, &info);
    if (sig > 0 && sig != SIGCHLD) kill(executor, sig);
  }
  const int code = ExitCodeOf(status);
  const int killed = KillWhatIsLeft(chld);
  if (WIFSIGNALED(status) || killed > 0) {
    spdlog::warn("the executor (pid {}) ended with {} {}; the guard killed {} process(es) it left",
                 executor, WIFSIGNALED(status) ? "signal" : "exit code",
                 WIFSIGNALED(status) ? WTERMSIG(status) : code, killed);
  }
  return code;
}

}  // namespace tony::executor
