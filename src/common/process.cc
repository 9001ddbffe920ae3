#include "common/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/resident_pages.h"
#include "common/sandbox_child.h"
#include "common/strings.h"

extern char** environ;

namespace tony {
namespace {

// The soft limit on open files before RaiseOpenFileLimit raised it; -1 while it has not.
std::atomic<int64_t> original_open_files{-1};

// What the child was doing when it failed; sent to the parent with errno over the CLOEXEC pipe.
enum class ChildStage : int { kSandbox, kSession, kParentDeathSignal, kStdio, kWorkingDir, kExec };

struct ChildError {
  ChildStage stage;
  int error;
  int sandbox_step = 0;  // internal::SandboxStep, with kSandbox
  int sandbox_detail = 0;
};

// Everything the child needs, built before the fork so that the child does not allocate.
struct ChildPlan {
  std::vector<std::string> arg_strings;
  std::vector<char*> argv;
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  // Paths to try with execve, in order (one entry unless argv[0] is searched in PATH).
  std::vector<std::string> exec_candidates;
  std::vector<int> inherit_fds;
  const char* working_dir = nullptr;  // Points into SpawnOptions; null: inherit.
  int stdin_fd = -1;                  // Descriptors >= 2 and CLOEXEC in the parent; -1: inherit.
  int stdout_fd = -1;
  int stderr_fd = -1;
  int error_pipe_write = -1;
  bool new_session = false;
  bool new_process_group = false;
  int parent_death_signal = 0;
  pid_t parent_pid = 0;
  int max_fd = 0;  // For the fallback when close_range is not available.
  // The limit on open files the child gets back just before exec, when RaiseOpenFileLimit raised
  // this process's soft limit; the sandbox's setup may still need the raised one.
  bool restore_open_files = false;
  struct rlimit open_files {};
  std::optional<internal::SandboxPlan> sandbox;
};

// RAII for descriptors the parent opens for the child.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Moves a CLOEXEC descriptor above 2 so that dup2 onto 0, 1 or 2 in the child cannot overwrite
// another source descriptor (a parent with stdin closed gets 0 from open()).
int AboveStdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  int saved_errno = errno;
  close(fd);
  errno = saved_errno;
  return moved;
}

absl::StatusOr<int> OpenForChild(const std::string& path, int flags, const char* what,
                                 mode_t mode = 0600) {
  int fd = AboveStdio(open(path.c_str(), flags | O_CLOEXEC, mode));
  if (fd < 0)
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", what, " '", path, "'"));
  return fd;
}

std::string KeyOf(std::string_view entry) { return std::string(entry.substr(0, entry.find('='))); }

void BuildEnvironment(const SpawnOptions& options, ChildPlan& plan) {
  if (!options.clear_env) {
    std::set<std::string, std::less<>> dropped(options.unset_env.begin(), options.unset_env.end());
    for (const auto& [key, value] : options.set_env) dropped.insert(key);
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
      if (!dropped.contains(KeyOf(*entry))) plan.env_strings.emplace_back(*entry);
    }
  }
  for (const auto& [key, value] : options.set_env) {
    plan.env_strings.push_back(absl::StrCat(key, "=", value));
  }
  for (std::string& entry : plan.env_strings) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
}

void BuildExecCandidates(const std::string& program, ChildPlan& plan) {
  if (program.find('/') != std::string::npos) {
    plan.exec_candidates.push_back(program);
    return;
  }
  std::string path = "/bin:/usr/bin";
  for (const std::string& entry : plan.env_strings) {
    if (entry.starts_with("PATH=")) path = entry.substr(5);
  }
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    // POSIX: an empty PATH entry means the current directory.
    plan.exec_candidates.push_back(dir.empty() ? program : absl::StrCat(dir, "/", program));
  }
}

[[noreturn]] void FailInChild(const ChildPlan& plan, ChildStage stage, int error,
                              const internal::SandboxFailure* sandbox = nullptr) {
  ChildError report{stage, error};
  if (sandbox != nullptr) {
    report.sandbox_step = static_cast<int>(sandbox->step);
    report.sandbox_detail = sandbox->detail;
  }
  ssize_t unused = write(plan.error_pipe_write, &report, sizeof(report));
  (void)unused;
  _exit(127);
}

// Runs in the child between fork and exec: async-signal-safe calls only, no allocation.
[[noreturn]] void RunChild(const ChildPlan& plan) {
  // An executor's child: what it runs of tony's code until the exec maps page by page.
  MapInheritedCodePagesAsTouched();
  // Signals are all blocked here (the parent blocked them around the fork). Reset dispositions
  // before unblocking so that no parent handler runs in the child and no SIG_IGN is inherited.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &default_action, nullptr);
  }
  // In a sandbox, this is its init until EnterSandbox returns in the command's own process,
  // whose parent is then that init (pid 1).
  pid_t expected_parent = plan.parent_pid;
  if (plan.sandbox) {
    internal::SandboxFailure failure{};
    if (!internal::EnterSandbox(*plan.sandbox, plan.error_pipe_write, &failure)) {
      FailInChild(plan, ChildStage::kSandbox, failure.error, &failure);
    }
    MapInheritedCodePagesAsTouched();  // the command's process: forked again, by the init
    expected_parent = 1;
  }

  if (plan.new_session) {
    if (setsid() < 0) FailInChild(plan, ChildStage::kSession, errno);
  } else if (plan.new_process_group) {
    if (setpgid(0, 0) < 0) FailInChild(plan, ChildStage::kSession, errno);
  }
  if (plan.parent_death_signal != 0 && prctl(PR_SET_PDEATHSIG, plan.parent_death_signal) < 0) {
    FailInChild(plan, ChildStage::kParentDeathSignal, errno);
  }

  const int sources[3] = {plan.stdin_fd, plan.stdout_fd, plan.stderr_fd};
  for (int target = 0; target < 3; ++target) {
    if (sources[target] >= 0) {
      if (dup2(sources[target], target) < 0) FailInChild(plan, ChildStage::kStdio, errno);
    } else {
      fcntl(target, F_SETFD, 0);  // Inherited: make sure it survives exec.
    }
  }

  if (plan.working_dir != nullptr && chdir(plan.working_dir) < 0) {
    FailInChild(plan, ChildStage::kWorkingDir, errno);
  }

  // Everything above 2 closes at exec (including the error pipe, which is how the parent learns
  // that exec succeeded), except the descriptors asked for.
  if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
    for (int fd = 3; fd < plan.max_fd; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  for (int fd : plan.inherit_fds) {
    if (fd > 2) fcntl(fd, F_SETFD, 0);
  }

  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // The parent may have died before PR_SET_PDEATHSIG took effect; then no signal will ever come.
  if (plan.parent_death_signal != 0 && getppid() != expected_parent) {
    kill(getpid(), plan.parent_death_signal);
    _exit(128 + plan.parent_death_signal);
  }

  // No descriptor is opened past here. Lowering the soft limit cannot fail.
  if (plan.restore_open_files) setrlimit(RLIMIT_NOFILE, &plan.open_files);

  // Like execvp: skip candidates that do not exist, remember EACCES, stop at any other error.
  // Unlike execvp, a file without a "#!" line is not retried with /bin/sh (ENOEXEC is reported).
  int error = ENOENT;
  bool saw_eacces = false;
  for (const std::string& candidate : plan.exec_candidates) {
    execve(candidate.c_str(), plan.argv.data(), plan.envp.data());
    error = errno;
    if (error == EACCES) {
      saw_eacces = true;
    } else if (error != ENOENT && error != ENOTDIR && error != ESTALE && error != ELOOP &&
               error != ENAMETOOLONG && error != ENODEV && error != ETIMEDOUT) {
      break;
    }
  }
  if (saw_eacces && (error == ENOENT || error == ENOTDIR)) error = EACCES;
  FailInChild(plan, ChildStage::kExec, error);
}

absl::Status ChildFailure(const SpawnOptions& options, const ChildPlan& plan,
                          const ChildError& report) {
  const std::string& program = options.argv[0];
  switch (report.stage) {
    case ChildStage::kSandbox:
      return absl::ErrnoToStatus(
          report.error,
          absl::StrCat(internal::DescribeSandboxFailure(
                           *plan.sandbox, static_cast<internal::SandboxStep>(report.sandbox_step),
                           report.sandbox_detail),
                       " to start '", program, "'"));
    case ChildStage::kSession:
      return absl::ErrnoToStatus(
          report.error,
          absl::StrCat("cannot start a new session or process group for '", program, "'"));
    case ChildStage::kParentDeathSignal:
      return absl::ErrnoToStatus(
          report.error, absl::StrCat("cannot set the parent death signal for '", program, "'"));
    case ChildStage::kStdio:
      return absl::ErrnoToStatus(report.error,
                                 absl::StrCat("cannot redirect stdio of '", program, "'"));
    case ChildStage::kWorkingDir:
      return absl::ErrnoToStatus(
          report.error, absl::StrCat("cannot change to working directory '", options.working_dir,
                                     "' to start '", program, "'"));
    case ChildStage::kExec:
      break;
  }
  return absl::ErrnoToStatus(report.error, absl::StrCat("cannot execute '", program, "'"));
}

}  // namespace

absl::StatusOr<pid_t> Spawn(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return absl::InvalidArgumentError("cannot start a process: empty command");
  }
  for (int fd : options.inherit_fds) {
    if (fcntl(fd, F_GETFD) < 0) {
      return absl::InvalidArgumentError(absl::StrCat("cannot pass descriptor ", fd, " to '",
                                                     options.argv[0], "': it is not open"));
    }
  }

  ChildPlan plan;
  plan.arg_strings = options.argv;
  for (std::string& arg : plan.arg_strings) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);
  BuildEnvironment(options, plan);
  BuildExecCandidates(options.argv[0], plan);
  plan.inherit_fds = options.inherit_fds;
  if (!options.working_dir.empty()) plan.working_dir = options.working_dir.c_str();
  plan.new_session = options.new_session;
  plan.new_process_group = options.new_process_group;
  plan.parent_death_signal = options.parent_death_signal;
  plan.parent_pid = getpid();
  if (options.sandbox) {
    if (options.sandbox->working_dir.empty() || options.sandbox->status_fd < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot start '", options.argv[0],
                       "' in a sandbox without its working directory and "
                       "status pipe"));
    }
    plan.sandbox = internal::PrepareSandbox(*options.sandbox);
  }
  // The child's init executes it (or not); the parent has no use for it past the start.
  Fd init_program(plan.sandbox ? plan.sandbox->init_program_fd : -1);
  struct rlimit limit {};
  if (const int64_t original = original_open_files.load();
      original >= 0 && getrlimit(RLIMIT_NOFILE, &plan.open_files) == 0) {
    plan.open_files.rlim_cur = static_cast<rlim_t>(original);
    plan.restore_open_files = true;
  }
  plan.max_fd = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 65536
                    ? static_cast<int>(limit.rlim_cur)
                    : 65536;

  auto stdin_fd = OpenForChild(options.stdin_path.empty() ? "/dev/null" : options.stdin_path,
                               O_RDONLY, "stdin file");
  if (!stdin_fd.ok()) return stdin_fd.status();
  Fd stdin_owner(*stdin_fd);
  plan.stdin_fd = *stdin_fd;
  Fd stdout_owner, stderr_owner;
  if (!options.stdout_path.empty()) {
    auto fd = OpenForChild(options.stdout_path, O_WRONLY | O_CREAT | O_APPEND, "stdout file",
                           options.output_mode);
    if (!fd.ok()) return fd.status();
    plan.stdout_fd = *fd;
    stdout_owner.Reset(*fd);
  }
  if (!options.stderr_path.empty()) {
    auto fd = OpenForChild(options.stderr_path, O_WRONLY | O_CREAT | O_APPEND, "stderr file",
                           options.output_mode);
    if (!fd.ok()) return fd.status();
    plan.stderr_fd = *fd;
    stderr_owner.Reset(*fd);
  }

  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) < 0) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("cannot create a pipe to start '", options.argv[0], "'"));
  }
  Fd error_read(AboveStdio(pipe_fds[0]));
  Fd error_write(AboveStdio(pipe_fds[1]));
  if (error_read.get() < 0 || error_write.get() < 0) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("cannot create a pipe to start '", options.argv[0], "'"));
  }
  plan.error_pipe_write = error_write.get();

  // Block every signal across the fork so that no handler of the parent's runs in the child before
  // RunChild has reset the dispositions. _Fork skips pthread_atfork handlers: the child only makes
  // async-signal-safe calls, so it needs none, and libraries' handlers (gRPC's) cost time.
  sigset_t all, old_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  // A sandbox's child is the init of its new namespaces: clone, which creates them, as a fork
  // (no new stack). The child makes async-signal-safe calls only, so glibc's fork bookkeeping,
  // which a bare clone skips, is not missed.
  pid_t pid = plan.sandbox
                  ? static_cast<pid_t>(syscall(SYS_clone, internal::SandboxCloneFlags() | SIGCHLD,
                                               nullptr, nullptr, nullptr, nullptr))
                  : _Fork();
  if (pid == 0) RunChild(plan);
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (pid < 0 && plan.sandbox) {
    return absl::ErrnoToStatus(
        fork_errno, absl::StrCat(internal::DescribeSandboxFailure(
                                     *plan.sandbox, internal::SandboxStep::kNamespaces, -1),
                                 " to start '", options.argv[0], "'"));
  }
  if (pid < 0) {
    return absl::ErrnoToStatus(fork_errno,
                               absl::StrCat("cannot fork to start '", options.argv[0], "'"));
  }

  error_write.Reset();
  ChildError report{};
  ssize_t n;
  do {
    n = read(error_read.get(), &report, sizeof(report));
  } while (n < 0 && errno == EINTR);
  if (n == 0) return pid;  // The pipe closed at exec.

  const ExitStatus ended = WaitForExit(pid).value_or(ExitStatus{});
  if (n != static_cast<ssize_t>(sizeof(report))) {
    return absl::InternalError(absl::StrCat("'", options.argv[0], "' (pid ", pid,
                                            ") failed before exec with ", ended.ToString()));
  }
  return ChildFailure(options, plan, report);
}

ExitStatus ReadSandboxedStatus(int status_read_fd, const ExitStatus& init_status,
                               int64_t* peak_rss_bytes) {
  internal::SandboxedExit report{};
  ssize_t n;
  do {
    n = read(status_read_fd, &report, sizeof(report));
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(report))) return init_status;
  if (peak_rss_bytes != nullptr) *peak_rss_bytes = report.peak_rss_bytes;
  return ExitStatusFromWait(report.wait_status);
}

absl::StatusOr<int64_t> RaiseOpenFileLimit(int64_t at_most) {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::ErrnoToStatus(errno, "cannot read the limit on open files");
  }
  const rlim_t target = std::min<rlim_t>(limit.rlim_max, static_cast<rlim_t>(at_most));
  if (limit.rlim_cur >= target) return static_cast<int64_t>(limit.rlim_cur);
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = target;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::ErrnoToStatus(errno, "cannot raise the limit on open files");
  }
  int64_t unset = -1;
  original_open_files.compare_exchange_strong(unset, static_cast<int64_t>(before));
  return static_cast<int64_t>(target);
}

namespace internal {

void ForgetOpenFileLimitForTesting() { original_open_files.store(-1); }

}  // namespace internal
}  // namespace tony
