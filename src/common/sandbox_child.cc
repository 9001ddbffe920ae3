#include "common/sandbox_child.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/helper_program.h"

namespace tony::internal {
namespace {

constexpr unsigned long kCoverFlags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
// An empty directory needs no room; the kept paths' mount points take a few inodes. 0755 (and
// 0755 for the mount points below): the tmpfs exists only in this sandbox's mount namespace,
// holds nothing, and is read-only once set up; what is bound over its mount points keeps its own
// modes.
constexpr char kCoverOptions[] = "size=16k,nr_inodes=256,mode=0755";
constexpr int kMaxKeep = 16;

bool WriteFileInChild(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t written = write(fd, text.data(), text.size());
  const int error = errno;
  close(fd);
  errno = error;
  return written == static_cast<ssize_t>(text.size());
}

// Maps the user's own ids into the namespace just entered (the only mapping an unprivileged user
// may write, and one that keeps file ownership as it is outside).
bool MapIds(const SandboxPlan& plan) {
  if (!WriteFileInChild("/proc/self/setgroups", "deny") && errno != ENOENT) return false;
  return WriteFileInChild("/proc/self/uid_map", plan.uid_map) &&
         WriteFileInChild("/proc/self/gid_map", plan.gid_map);
}

// "/proc/self/fd/<fd>" into `buffer`, without allocating.
void FdPath(int fd, char (&buffer)[32]) {
  char digits[12];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + fd % 10);
    fd /= 10;
  } while (fd > 0 && n < 11);
  constexpr char kPrefix[] = "/proc/self/fd/";
  size_t at = sizeof(kPrefix) - 1;
  std::memcpy(buffer, kPrefix, at);
  while (n > 0) buffer[at++] = digits[--n];
  buffer[at] = '\0';
}

bool Fail(SandboxFailure* failure, SandboxStep step, int detail) {
  *failure = SandboxFailure{step, detail, errno};
  return false;
}

// Covers one directory with an empty read-only tmpfs and binds its kept paths back in place.
bool CoverDirectory(const SandboxPlan::Cover& cover, int index, SandboxFailure* failure) {
  int kept[kMaxKeep];
  const size_t keeps = cover.keep.size() < kMaxKeep ? cover.keep.size() : kMaxKeep;
  for (size_t k = 0; k < keeps; ++k) {
    kept[k] = open(cover.keep[k].path.c_str(), O_PATH | O_CLOEXEC);
    if (kept[k] < 0 && errno != ENOENT && errno != ENOTDIR)
      return Fail(failure, SandboxStep::kKeep, index);
  }
  if (mount("tony-sandbox", cover.path.c_str(), "tmpfs", kCoverFlags, kCoverOptions) != 0) {
    return Fail(failure, SandboxStep::kCover, index);
  }
  for (size_t k = 0; k < keeps; ++k) {
    if (kept[k] < 0) continue;
    const SandboxPlan::Keep& keep = cover.keep[k];
    for (const std::string& parent : keep.parents) {
      if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
        return Fail(failure, SandboxStep::kKeep, index);
      }
    }
    struct stat info {};
    if (fstat(kept[k], &info) != 0) return Fail(failure, SandboxStep::kKeep, index);
    if (S_ISDIR(info.st_mode)) {
      if (mkdir(keep.path.c_str(), 0755) != 0 && errno != EEXIST) {
        return Fail(failure, SandboxStep::kKeep, index);
      }
    } else {
      const int point = open(keep.path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      if (point < 0) return Fail(failure, SandboxStep::kKeep, index);
      close(point);
    }
    char source[32];
    FdPath(kept[k], source);
    if (mount(source, keep.path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      return Fail(failure, SandboxStep::kKeep, index);
    }
    close(kept[k]);
  }
  if (mount(nullptr, cover.path.c_str(), nullptr, MS_REMOUNT | MS_RDONLY | kCoverFlags, nullptr) !=
      0) {
    return Fail(failure, SandboxStep::kCover, index);
  }
  return true;
}

bool ApplyCovers(const SandboxPlan& plan, SandboxFailure* failure) {
  for (size_t i = 0; i < plan.covers.size(); ++i) {
    const SandboxPlan::Cover& cover = plan.covers[i];
    const int index = static_cast<int>(i);
    struct stat info {};
    if (lstat(cover.path.c_str(), &info) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) continue;
      return Fail(failure, SandboxStep::kCover, index);
    }
    if (S_ISDIR(info.st_mode)) {
      if (!CoverDirectory(cover, index, failure)) return false;
    } else if (mount("/dev/null", cover.path.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      // A file: reading it gives nothing, writing to it keeps nothing.
      return Fail(failure, SandboxStep::kCover, index);
    }
  }
  return true;
}

// Set in init by a SIGTERM from outside the namespace: the task is being stopped.
volatile sig_atomic_t g_stopping = 0;

void OnStop(int /*signal*/, siginfo_t* info, void* /*context*/) {
  // Only a sender outside the namespace counts (its pid is 0 here): a process of the task that
  // signals pid 1 stops nothing.
  if (info != nullptr && info->si_code == SI_USER && info->si_pid == 0) g_stopping = 1;
}

[[noreturn]] void RunInit(pid_t command, int status_fd) {
  // Every other signal stays blocked: the namespace's init ignores its own namespace's signals
  // anyway, and only SIGKILL (which cannot be blocked) from outside should end it before the
  // command. SIGTERM from outside, which reaches init only through a handler, means a stop:
  // every process of the task gets it (SignalTree signals init first, and a NodeManager the
  // container's process group). A command that ends then (the /bin/sh -c wrapper, which dies of
  // SIGTERM at once) no longer takes the rest down with it: they finish their own SIGTERM
  // handlers (a checkpoint) while init waits, and whoever stops the task kills what outlives its
  // grace period (the executor, a NodeManager, the local backend).
  struct sigaction on_stop {};
  on_stop.sa_sigaction = OnStop;
  on_stop.sa_flags = SA_SIGINFO;
  sigemptyset(&on_stop.sa_mask);
  sigaction(SIGTERM, &on_stop, nullptr);
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &term, nullptr);
  while (true) {
    int status = 0;
    const pid_t reaped = waitpid(-1, &status, __WALL);
    if (reaped == command) {
      // The command's peak: the largest of the processes reaped here, init itself left out.
      rusage children{};
      getrusage(RUSAGE_CHILDREN, &children);
      const SandboxedExit report{status, static_cast<int64_t>(children.ru_maxrss) * 1024};
      ssize_t unused = write(status_fd, &report, sizeof(report));
      (void)unused;
      // Not stopping: the kernel kills whatever the command left in the namespace.
      if (g_stopping == 0) _exit(0);
      continue;
    }
    if (reaped < 0 && errno == ECHILD) _exit(0);
  }
}

// Appends `value` in decimal to the NUL-terminated text in `buffer` (`size` bytes in all).
void AppendNumber(char* buffer, size_t size, long value) {
  char digits[24];
  size_t count = 0;
  do {
    digits[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 && count < sizeof digits);
  size_t at = std::strlen(buffer);
  while (count > 0 && at + 1 < size) buffer[at++] = digits[--count];
  buffer[at] = '\0';
}

// In init: executes tony's helper program as the namespace's init of `command`. Returns only if
// that fails; init then goes on as it is.
void ExecInitProgram(const SandboxPlan& plan, pid_t command) {
  char command_env[48] = "TONY_INIT_COMMAND=";
  char status_env[48] = "TONY_INIT_STATUS_FD=";
  AppendNumber(command_env, sizeof command_env, command);
  AppendNumber(status_env, sizeof status_env, plan.status_fd);
  const int flags = fcntl(plan.status_fd, F_GETFD);
  if (flags < 0 || fcntl(plan.status_fd, F_SETFD, flags & ~FD_CLOEXEC) != 0) return;
  // Init may not be dumpable for a moment (EnterSandbox), and an exec would make it dumpable
  // again, unless the program it executes cannot be read. The program's file lets nobody read it
  // (HelperProgramFd's mode); with no capability left, init cannot either. The program needs none.
  // For a job run as root (uid 0 in the namespace, too) the exec would give every capability
  // back, and the kernel, seeing a gain, would clear the parent-death signal: root gets none back.
  (void)prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capset, &header, none) == 0) {
    // init_title is "<program>\0sandbox-init": the command line stays what it was.
    char fallback_name[] = "tony";
    char fallback_role[] = "sandbox-init";
    char* name = fallback_name;
    char* role = fallback_role;
    if (plan.init_title.size() > std::strlen(plan.init_title.c_str()) + 1) {
      name = const_cast<char*>(plan.init_title.c_str());
      role = name + std::strlen(name) + 1;
    }
    char* argv[] = {name, role, nullptr};
    char* envp[] = {command_env, status_env, nullptr};
    fexecve(plan.init_program_fd, argv, envp);
  }
  (void)fcntl(plan.status_fd, F_SETFD, flags);
}

}  // namespace

int SandboxCloneFlags() { return CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID; }

SandboxPlan PrepareSandbox(const Sandbox& sandbox) {
  SandboxPlan plan;
  for (const Sandbox::Cover& cover : sandbox.covers) {
    SandboxPlan::Cover prepared{cover.path, {}};
    for (const std::string& keep : cover.keep) {
      if (!keep.starts_with(cover.path + "/")) continue;  // only below the cover
      SandboxPlan::Keep entry{keep, {}};
      for (size_t slash = keep.find('/', cover.path.size() + 1); slash != std::string::npos;
           slash = keep.find('/', slash + 1)) {
        entry.parents.push_back(keep.substr(0, slash));
      }
      prepared.keep.push_back(std::move(entry));
    }
    plan.covers.push_back(std::move(prepared));
  }
  plan.working_dir = sandbox.working_dir;
  plan.status_fd = sandbox.status_fd;
  plan.uid_map = absl::StrCat(geteuid(), " ", geteuid(), " 1\n");
  // Init is a copy of the parent: without a title of its own, ps and anything that looks for
  // the parent by its command line would take it for a second parent.
  if (program_invocation_name != nullptr) {
    const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    char buffer[4096];
    size_t size = 0;
    for (ssize_t n; fd >= 0 && (n = read(fd, buffer, sizeof(buffer))) > 0;)
      size += static_cast<size_t>(n);
    if (fd >= 0) close(fd);
    const std::string_view program = program_invocation_name;
    const size_t slash = program.rfind('/');
    plan.init_title = std::string(program.substr(slash == std::string_view::npos ? 0 : slash + 1));
    plan.init_title.append(std::string_view("\0sandbox-init", 13));
    plan.arg_area = program_invocation_name;
    plan.arg_size = size;
  }
  plan.gid_map = absl::StrCat(getegid(), " ", getegid(), " 1\n");
  plan.ns_last_pid = absl::StrCat(getpid());
  // Execute-only: see ExecInitProgram. Without it (a kernel that has no memfd_create), init stays a
  // copy of its parent.
  plan.init_program_fd = HelperProgramFd("tony-sandbox-init", 0100);
  return plan;
}

std::string DescribeSandboxFailure(const SandboxPlan& plan, SandboxStep step, int detail) {
  const std::string cover = detail >= 0 && static_cast<size_t>(detail) < plan.covers.size()
                                ? plan.covers[static_cast<size_t>(detail)].path
                                : "?";
  switch (step) {
    case SandboxStep::kNamespaces:
      return "cannot create user, mount and PID namespaces for the task's sandbox";
    case SandboxStep::kIdMaps:
      return "cannot map the user's ids into the task's sandbox";
    case SandboxStep::kPrivateMounts:
      return "cannot make the task's sandbox's mounts private";
    case SandboxStep::kCover:
      return absl::StrCat("cannot hide ", cover, " in the task's sandbox");
    case SandboxStep::kKeep:
      return absl::StrCat("cannot keep the task's own files under ", cover,
                          " visible in its sandbox");
    case SandboxStep::kProc:
      return "cannot mount the task's sandbox's own /proc";
    case SandboxStep::kInnerNamespaces:
      return "cannot lock the task's sandbox (inner user and mount namespaces)";
    case SandboxStep::kWorkingDir:
      return absl::StrCat("cannot enter '", plan.working_dir, "' in the task's sandbox");
    case SandboxStep::kFork:
      return "cannot start the task's command in its sandbox";
  }
  return "cannot set up the task's sandbox";
}

bool EnterSandbox(const SandboxPlan& plan, int close_after_fork, SandboxFailure* failure) {
  // Nothing inside may ptrace this process or read its memory and root through /proc: it holds
  // the uncovered file system until the command's process leaves for the inner namespaces.
  prctl(PR_SET_DUMPABLE, 0);
  // Init dies with the thread that started it, and everything in the namespace with init. Should
  // that thread be gone already, the error pipe's reader is too.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  pollfd pipe_state{close_after_fork, 0, 0};
  if (poll(&pipe_state, 1, 0) > 0 && (pipe_state.revents & POLLERR) != 0) _exit(128 + SIGKILL);
  if (!MapIds(plan)) return Fail(failure, SandboxStep::kIdMaps, -1);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Fail(failure, SandboxStep::kPrivateMounts, -1);
  }
  if (!ApplyCovers(plan, failure)) return false;
  // The namespace's own /proc: only its processes, so no /proc/<pid>/root of a process outside
  // leads around the covers.
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    return Fail(failure, SandboxStep::kProc, -1);
  }
  // Best effort: a kernel that refuses leaves the command PID 2, which only tools that identify
  // processes by host and PID mind.
  if (!plan.ns_last_pid.empty()) {
    WriteFileInChild("/proc/sys/kernel/ns_last_pid", plan.ns_last_pid);
  }
  const pid_t command = _Fork();
  if (command < 0) return Fail(failure, SandboxStep::kFork, -1);
  if (command > 0) {
    close(close_after_fork);
    if (plan.init_program_fd >= 0) ExecInitProgram(plan, command);
    if (plan.arg_area != nullptr && plan.arg_size > 0) {
      const size_t title =
          plan.init_title.size() < plan.arg_size - 1 ? plan.init_title.size() : plan.arg_size - 1;
      std::memset(plan.arg_area, 0, plan.arg_size);
      std::memcpy(plan.arg_area, plan.init_title.data(), title);
      prctl(PR_SET_NAME, "tony-sandbox");
    }
    RunInit(command, plan.status_fd);
  }
  // The command's process. In namespaces of its own, every mount above is locked: no unmount
  // reveals what a cover hides, whatever the command's capabilities there.
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
    return Fail(failure, SandboxStep::kInnerNamespaces, -1);
  }
  if (!MapIds(plan)) return Fail(failure, SandboxStep::kInnerNamespaces, -1);
  if (chdir(plan.working_dir.c_str()) != 0) return Fail(failure, SandboxStep::kWorkingDir, -1);
  return true;
}

}  // namespace tony::internal
