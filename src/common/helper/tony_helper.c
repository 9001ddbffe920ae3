// tony's helper program: what two of a task's processes execute once tony has set them up, so
// that neither stays a copy of tony (common/helper_program.h says why). It is built as a small
// static C program and carried inside tony, which executes it from a sealed memory file.
//
//   <tony> guard <executor pid>
//     The executor's guard (executor/executor_guard.h says what a guard is for). What tony hands
//     over through the exec: the executor is this process's child; this process is a child
//     subreaper; SIGCHLD and the forwarded stop signals are blocked, so none that came before the
//     exec is lost (pending signals and the mask survive it). It forwards SIGTERM, SIGINT and
//     SIGHUP to the executor; once the executor has exited, SIGKILLs whatever is left below,
//     reaps it, and exits with the executor's exit code (or 128 + the signal that killed it).
//
//   <tony> sandbox-init, with TONY_INIT_COMMAND=<pid> and TONY_INIT_STATUS_FD=<fd> its only
//   environment
//     The init of a task's sandbox (common/sandbox_child.h), in the sandbox's namespaces, once it
//     has forked the task's command. Every signal is blocked and the process is not dumpable (tony
//     executes this program without the permission to read it, so the kernel keeps it so). It
//     reaps until the command exits, writes the command's wait status and peak RSS to the status
//     descriptor (a SandboxedExit), and exits; after a SIGTERM from outside the namespace it
//     waits for the rest of the task's processes too.
//
// Anything else is refused with one line and exit code 2.

#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const int kForwarded[] = {SIGTERM, SIGINT, SIGHUP};

// One line on stdout, in the executor's log format ("<date> <time>.<ms> executor <level>: ...").
static void Log(const char* level, const char* message) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  struct tm local;
  localtime_r(&now.tv_sec, &local);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
  printf("%s.%03ld executor %s: %s\n", stamp, now.tv_nsec / 1000000, level, message);
  fflush(stdout);
}

static int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// The parent's pid from /proc/<pid>/stat, or -1. The command name, in parentheses, may hold any
// byte, so the fields are read after its last ')'.
static pid_t ParentOf(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buffer[1024];
  const ssize_t n = read(fd, buffer, sizeof buffer - 1);
  close(fd);
  if (n <= 0) return -1;
  buffer[n] = '\0';
  const char* close_paren = strrchr(buffer, ')');
  char state = 0;
  int parent = -1;
  if (close_paren == NULL || sscanf(close_paren + 1, " %c %d", &state, &parent) != 2) return -1;
  return parent;
}

struct Process {
  pid_t pid, parent;
};

static int ByPid(const void* a, const void* b) {
  const pid_t x = ((const struct Process*)a)->pid, y = ((const struct Process*)b)->pid;
  return (x > y) - (x < y);
}

// SIGKILLs every process below this one that a scan of /proc finds; returns how many. A process
// below a subreaper stays below it, so the descendants are the whole of what the executor left.
static int KillDescendants(void) {
  struct Process* table = NULL;
  size_t size = 0, capacity = 0;
  DIR* proc = opendir("/proc");
  if (proc == NULL) return 0;
  for (struct dirent* entry; (entry = readdir(proc)) != NULL;) {
    if (!isdigit((unsigned char)entry->d_name[0])) continue;
    const pid_t pid = (pid_t)atoi(entry->d_name);
    const pid_t parent = ParentOf(pid);
    if (parent <= 0) continue;
    if (size == capacity) {
      capacity = capacity ? 2 * capacity : 512;
      struct Process* grown = realloc(table, capacity * sizeof *table);
      if (grown == NULL) break;
      table = grown;
    }
    table[size].pid = pid;
    table[size].parent = parent;
    ++size;
  }
  closedir(proc);
  int killed = 0;
  char* below = size ? calloc(size, 1) : NULL;
  if (below != NULL) {
    qsort(table, size, sizeof *table, ByPid);
    const pid_t self = getpid();
    // Passes until one finds nobody new: a process is below once its parent is self or below.
    for (int grew = 1; grew;) {
      grew = 0;
      for (size_t i = 0; i < size; ++i) {
        if (below[i]) continue;
        int under = table[i].parent == self;
        if (!under) {
          const struct Process key = {table[i].parent, 0};
          const struct Process* parent = bsearch(&key, table, size, sizeof *table, ByPid);
          under = parent != NULL && below[parent - table];
        }
        if (!under) continue;
        below[i] = 1;
        grew = 1;
        if (kill(table[i].pid, SIGKILL) == 0) ++killed;
      }
    }
  }
  free(below);
  free(table);
  return killed;
}

// Reaps every exited child; 1 once `executor` is among them (its wait status in *status).
static int ReapChildren(pid_t executor, int* status) {
  int done = 0;
  int child_status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &child_status, WNOHANG)) > 0) {
    if (pid == executor) {
      *status = child_status;
      done = 1;
    }
  }
  return done;
}

static int Usage(void) {
  fprintf(stderr,
          "tony-helper: started by tony only (tony-helper guard <executor pid>, or tony-helper "
          "sandbox-init with its environment)\n");
  return 2;
}

// The number that is all of `text`, or -1 if it is none (or negative).
static long Number(const char* text) {
  if (text == NULL || *text < '0' || *text > '9') return -1;
  char* end = NULL;
  errno = 0;
  const long value = strtol(text, &end, 10);
  return errno == 0 && *end == '\0' && value <= INT32_MAX ? value : -1;
}

static int RunGuard(pid_t executor) {
  // As the process it replaces: its name, and a subreaper (the flag survives exec; set again in
  // case). SIGCHLD must not be ignored, or the children would be reaped before the guard sees them.
  prctl(PR_SET_NAME, "tony", 0, 0, 0);
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  signal(SIGCHLD, SIG_DFL);
  sigset_t chld, wait_for;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  wait_for = chld;
  for (size_t i = 0; i < sizeof kForwarded / sizeof kForwarded[0]; ++i) {
    sigaddset(&wait_for, kForwarded[i]);
  }
  sigprocmask(SIG_BLOCK, &wait_for, NULL);
  siginfo_t child;
  if (waitid(P_PID, (id_t)executor, &child, WEXITED | WNOHANG | WNOWAIT) != 0) {
    fprintf(stderr, "tony-helper: process %d is not this process's child\n", (int)executor);
    return 2;
  }

  int status = 0;
  while (!ReapChildren(executor, &status)) {
    siginfo_t info;
    const int sig = sigwaitinfo(&wait_for, &info);
    if (sig > 0 && sig != SIGCHLD) kill(executor, sig);
  }
  const int code = ExitCodeOf(status);
  int killed = 0;
  // The executor's orphans became this subreaper's children before the executor could be reaped,
  // and what they started stays below them: with no child left, nothing is below, and the scan of
  // /proc (every process's stat, for each of a job's guards as its tasks end together) is spared.
  pid_t pid;
  while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
  }
  while (pid >= 0) {
    killed += KillDescendants();
    while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
    }
    if (pid < 0) break;  // ECHILD: nothing is left
    // Something is still alive: dying of the SIGKILL just sent, or an orphan adopted after the
    // scan. Wait for the next child to exit; the timeout scans again for the latter.
    const struct timespec limit = {0, 100 * 1000 * 1000};
    sigtimedwait(&chld, NULL, &limit);
  }
  if (WIFSIGNALED(status) || killed > 0) {
    char line[256];
    snprintf(line, sizeof line,
             "the executor (pid %d) ended with %s %d; the guard killed %d process(es) it left",
             (int)executor, WIFSIGNALED(status) ? "signal" : "exit code",
             WIFSIGNALED(status) ? WTERMSIG(status) : code, killed);
    Log("warning", line);
  }
  return code;
}

// What init writes when the command has exited: common/sandbox_child.h's SandboxedExit.
struct SandboxedExit {
  int wait_status;
  int64_t peak_rss_bytes;  // the largest process init reaped (the command's, or one it started)
};
_Static_assert(sizeof(struct SandboxedExit) == 16, "SandboxedExit's layout");

// Set by a SIGTERM from outside the namespace: the task is being stopped.
static volatile sig_atomic_t g_stopping = 0;

static void OnStop(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)context;
  // Only a sender outside the namespace counts (its pid is 0 here): a process of the task that
  // signals pid 1 stops nothing.
  if (info != NULL && info->si_code == SI_USER && info->si_pid == 0) g_stopping = 1;
}

static int RunInit(pid_t command, int status_fd) {
  // Dumpable it is not (see the top): said again, should a kernel have let it be; and it dies
  // with the thread that started it, as before the exec (said again too: an exec that gains
  // privileges clears it).
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  prctl(PR_SET_NAME, "tony-sandbox", 0, 0, 0);
  // As the init of common/sandbox_child.cc: every signal but SIGTERM stays blocked, and SIGTERM
  // from outside means the task is being stopped, so init waits for every process of the task.
  struct sigaction on_stop;
  memset(&on_stop, 0, sizeof on_stop);
  on_stop.sa_sigaction = OnStop;
  on_stop.sa_flags = SA_SIGINFO;
  sigemptyset(&on_stop.sa_mask);
  sigaction(SIGTERM, &on_stop, NULL);
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &term, NULL);
  for (;;) {
    int status = 0;
    const pid_t reaped = waitpid(-1, &status, __WALL);
    if (reaped == command) {
      struct rusage children;
      memset(&children, 0, sizeof children);
      getrusage(RUSAGE_CHILDREN, &children);
      const struct SandboxedExit report = {status, (int64_t)children.ru_maxrss * 1024};
      ssize_t unused = write(status_fd, &report, sizeof report);
      (void)unused;
      // Not stopping: the kernel kills whatever the command left in the namespace.
      if (g_stopping == 0) _exit(0);
      continue;
    }
    if (reaped < 0 && errno == ECHILD) _exit(0);
  }
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "guard") == 0) {
    const long executor = Number(argv[2]);
    return executor > 0 ? RunGuard((pid_t)executor) : Usage();
  }
  if (argc == 2 && strcmp(argv[1], "sandbox-init") == 0) {
    const long command = Number(getenv("TONY_INIT_COMMAND"));
    const long status_fd = Number(getenv("TONY_INIT_STATUS_FD"));
    siginfo_t child;
    if (command <= 0 || status_fd < 0 || fcntl((int)status_fd, F_GETFD) < 0 ||
        waitid(P_PID, (id_t)command, &child, WEXITED | WNOHANG | WNOWAIT) != 0) {
      return Usage();
    }
    return RunInit((pid_t)command, (int)status_fd);
  }
  return Usage();
}
