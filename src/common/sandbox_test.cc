// The sandbox of common/process.h with real processes and the real kernel: what a command inside
// can see, what it cannot undo, and the exit status it leaves.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/files.h"
#include "common/memory_test_util.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "common/scoped_fd.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

namespace fs = std::filesystem;

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/tony_sandbox_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    // root/jobs/{mine,other}, each with a secret; the command works in mine/work.
    for (const char* dir : {"/jobs/mine/work", "/jobs/mine/secrets", "/jobs/other"}) {
      fs::create_directories(root_ + dir);
    }
    ASSERT_TRUE(WriteFile(root_ + "/jobs/mine/secret", "MINE-SECRET", 0600).ok());
    ASSERT_TRUE(WriteFile(root_ + "/jobs/mine/secrets/c1.json", "TASK-SECRET", 0600).ok());
    ASSERT_TRUE(WriteFile(root_ + "/jobs/mine/public", "PUBLIC", 0600).ok());
    ASSERT_TRUE(WriteFile(root_ + "/jobs/other/secret", "OTHER-SECRET", 0600).ok());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string Work() const { return root_ + "/jobs/mine/work"; }

  // The command under /bin/sh in the sandbox of a job like the local backend's; returns its pid
  // (the sandbox's init) and the read end of the status pipe in *status_read.
  absl::StatusOr<pid_t> Start(const std::string& script, int* status_read) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError("pipe");
    *status_read = fds[0];
    ScopedFd write_end(fds[1]);
    SpawnOptions options;
    options.argv = {"/bin/sh", "-c", script};
    options.stdout_path = Work() + "/stdout";
    options.stderr_path = Work() + "/stderr";
    options.parent_death_signal = SIGKILL;
    Sandbox sandbox;
    sandbox.covers = {{root_ + "/jobs", {root_ + "/jobs/mine"}},
                      {root_ + "/jobs/mine/secret", {}},
                      {root_ + "/jobs/mine/secrets", {}},
                      {root_ + "/jobs/mine/no-such-file", {}}};
    sandbox.working_dir = Work();
    sandbox.status_fd = fds[1];
    options.sandbox = sandbox;
    return Spawn(options);
  }

  ExitStatus Run(const std::string& script) {
    int status_read = -1;
    absl::StatusOr<pid_t> pid = Start(script, &status_read);
    EXPECT_TRUE(pid.ok()) << pid.status();
    ScopedFd owner(status_read);
    if (!pid.ok()) return ExitStatus{-1, 0};
    absl::StatusOr<ExitStatus> init = WaitForExit(*pid);
    EXPECT_TRUE(init.ok()) << init.status();
    return ReadSandboxedStatus(status_read, init.value_or(ExitStatus{-1, 0}));
  }

  // The FIFO `started` in the work directory, opened for reading (-1 on failure): the command
  // writes to it once it runs.
  int StartedFifo() const {
    const std::string fifo = Work() + "/started";
    if (mkfifo(fifo.c_str(), 0600) != 0) return -1;
    return open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  }

  std::string Output() const { return ReadFile(Work() + "/stdout").value_or("<none>"); }

  // The processes whose parent is `parent`.
  static std::vector<pid_t> ChildrenOf(pid_t parent) {
    std::vector<pid_t> children;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      absl::StatusOr<std::string> stat = ReadFile(entry.path().string() + "/stat");
      if (!stat.ok()) continue;
      const size_t close = stat->rfind(')');
      if (close == std::string::npos) continue;
      if (std::atoi(stat->c_str() + close + 4) == parent) children.push_back(std::stoi(name));
    }
    return children;
  }
  // Whether a process whose command line (arguments joined by NULs) is `cmdline` runs.
  static bool Running(std::string_view cmdline) {
    const std::string wanted = std::string(cmdline) + std::string(1, '\0');
    for (const auto& entry : fs::directory_iterator("/proc")) {
      if (ReadFile(entry.path().string() + "/cmdline").value_or("") == wanted) return true;
    }
    return false;
  }

  std::string root_;
};

TEST_F(SandboxTest, TheCommandSeesItsOwnFilesAndNothingCovered) {
  const ExitStatus status =
      Run("pwd; cat ../public; echo; cat ../secret; echo \"[$(ls ../secrets)]\";"
          " cat ../../other/secret 2>/dev/null || echo no-other; ls ../..; echo written > mine.txt;"
          " touch ../../new 2>/dev/null || echo read-only");
  EXPECT_EQ(status, (ExitStatus{0, 0})) << ReadFile(Work() + "/stderr").value_or("");
  EXPECT_EQ(Output(), Work() + "\nPUBLIC\n[]\nno-other\nmine\nread-only\n");
  EXPECT_EQ(ReadFile(Work() + "/mine.txt").value_or(""), "written\n");
  // Outside, nothing changed.
  EXPECT_EQ(ReadFile(root_ + "/jobs/mine/secret").value_or(""), "MINE-SECRET");
  EXPECT_TRUE(fs::exists(root_ + "/jobs/other/secret"));
}

TEST_F(SandboxTest, TheCoversCannotBeUndoneFromInside) {
  // Unmounting, a new mount namespace, "..", and /proc/1/root (init, which sees under nothing
  // more than the command but is the one process with the covers unlocked).
  const ExitStatus status =
      Run("umount ../secret 2>/dev/null; umount -l ../.. 2>/dev/null; cat ../secret; "
          "cat ../../other/secret 2>/dev/null; "
          "unshare -m sh -c 'umount ../secret; cat ../secret' 2>/dev/null; "
          "unshare -Urm sh -c 'umount ../secret; cat ../secret' 2>/dev/null; "
          "cat /proc/1/root" +
          root_ +
          "/jobs/other/secret 2>/dev/null; cd ../../..; "
          "cat jobs/other/secret 2>/dev/null; echo done");
  EXPECT_EQ(status, (ExitStatus{0, 0}));
  const std::string out = Output();
  EXPECT_EQ(out.find("SECRET"), std::string::npos) << out;
  EXPECT_NE(out.find("done"), std::string::npos) << out;
}

TEST_F(SandboxTest, TheCommandSeesOnlyItsOwnProcesses) {
  const ExitStatus status =
      Run("ls /proc | grep -c '^[0-9]'; cat /proc/1/cmdline | tr '\\0' ' ';"
          " echo; kill -0 " +
          std::to_string(getpid()) + " 2>/dev/null && echo sees-parent; echo $$");
  EXPECT_EQ(status, (ExitStatus{0, 0}));
  // init, the shell, ls and grep (or fewer, if the shell forked less).
  const std::string out = Output();
  const int count = std::atoi(out.c_str());
  EXPECT_GE(count, 2) << out;
  EXPECT_LE(count, 5) << out;
  EXPECT_EQ(out.find("sees-parent"), std::string::npos) << out;
  // Its PID follows its spawner's, not 2 as in every other sandbox: tasks on one host keep
  // PIDs of their own (SandboxPlan::ns_last_pid). The last PID there is wraps around.
  const int pid_max = std::atoi(ReadFile("/proc/sys/kernel/pid_max").value_or("32768").c_str());
  const int expected = getpid() + 1 < pid_max ? getpid() + 1 : 2;
  EXPECT_NE(out.find("\n" + std::to_string(expected) + "\n"), std::string::npos)
      << "the command is pid " << expected << ": " << out;
}

TEST_F(SandboxTest, TheCommandsExitStatusComesThrough) {
  EXPECT_EQ(Run("exit 3"), (ExitStatus{3, 0}));
  EXPECT_EQ(Run("kill -TERM $$"), (ExitStatus{0, SIGTERM}));
}

TEST_F(SandboxTest, ASignalFromOutsideReachesTheCommandAndLeftoversDieWithIt) {
  int status_read = -1;
  // The shell says through a FIFO when its background child (which would outlive it) runs.
  ScopedFd started(StartedFifo());
  ASSERT_GE(started.get(), 0);
  absl::StatusOr<pid_t> init =
      Start("sleep 333.17 & echo started > started; exec sleep 300", &status_read);
  ASSERT_TRUE(init.ok()) << init.status();
  ScopedFd owner(status_read);
  pollfd ready{started.get(), POLLIN, 0};
  ASSERT_EQ(poll(&ready, 1, 20000), 1) << "the command did not start";
  // Only the command is signalled (no stop of the whole task: init gets nothing).
  const std::vector<pid_t> children = ChildrenOf(*init);
  ASSERT_EQ(children.size(), 1u);
  ASSERT_EQ(kill(children[0], SIGTERM), 0);
  absl::StatusOr<ExitStatus> status = WaitForExit(*init);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(ReadSandboxedStatus(status_read, *status), (ExitStatus{0, SIGTERM}));
  // The background sleep went with the namespace.
  EXPECT_FALSE(Running(std::string("sleep") + '\0' + "333.17"));
}

// A stop signals every process of the task, init first (SignalTree). A command that dies of it at
// once (here /bin/sh -c, as every task's command runs) leaves the rest to finish their own
// handlers, as a task that checkpoints on SIGTERM needs: init waits for them.
TEST_F(SandboxTest, InAStopTheCommandsChildrenFinishTheirHandlersAfterItEnds) {
  int status_read = -1;
  ScopedFd started(StartedFifo());
  ASSERT_GE(started.get(), 0);
  absl::StatusOr<pid_t> init = Start(
      "sh -c 'trap \"sleep 0.3; echo handled > handled; exit 0\" TERM; echo started > started; "
      "while :; do sleep 0.05; done'; echo the outer shell ran on",
      &status_read);
  ASSERT_TRUE(init.ok()) << init.status();
  ScopedFd owner(status_read);
  pollfd ready{started.get(), POLLIN, 0};
  ASSERT_EQ(poll(&ready, 1, 20000), 1) << "the command did not start";
  EXPECT_GE(SignalTree(*init, SIGTERM), 3);
  absl::StatusOr<ExitStatus> status = WaitForExit(*init);
  ASSERT_TRUE(status.ok()) << status.status();
  // The command's own end, reported as it happened.
  EXPECT_EQ(ReadSandboxedStatus(status_read, *status), (ExitStatus{0, SIGTERM}));
  EXPECT_EQ(ReadFile(Work() + "/handled").value_or("<none>"), "handled\n")
      << "the inner shell's handler was cut short";
  EXPECT_EQ(Output().find("ran on"), std::string::npos) << Output();
}

// Only a SIGTERM from outside the namespace is a stop: a process of the task that signals pid 1
// (kill -TERM 1, a pkill that matches init's title) must not keep init waiting for leftovers that
// nothing will ever kill.
TEST_F(SandboxTest, ASigtermToInitFromInsideStopsNothing) {
  int status_read = -1;
  absl::StatusOr<pid_t> init = Start("sleep 333.19 & kill -TERM 1; exit 4", &status_read);
  ASSERT_TRUE(init.ok()) << init.status();
  ScopedFd owner(status_read);
  ScopedFd exit_event_fd(static_cast<int>(syscall(SYS_pidfd_open, *init, 0)));
  ASSERT_GE(exit_event_fd.get(), 0);
  pollfd exit_event{exit_event_fd.get(), POLLIN, 0};
  const bool ended = poll(&exit_event, 1, 20000) == 1;
  if (!ended) kill(*init, SIGKILL);
  absl::StatusOr<ExitStatus> status = WaitForExit(*init);
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_TRUE(ended) << "init waited on after the command's end";
  EXPECT_EQ(ReadSandboxedStatus(status_read, *status), (ExitStatus{4, 0}));
  EXPECT_FALSE(Running(std::string("sleep") + '\0' + "333.19"));
}

// Init is tony's helper program, not a copy of its parent (which would keep the parent's pages
// resident and counted against the container), and no process of the task can read it: its
// memory, its environment, its root (where the covers are undone) or its program.
TEST_F(SandboxTest, InitIsTheHelperProgramAndNothingInsideCanLookIntoIt) {
  int status_read = -1;
  ScopedFd started(StartedFifo());
  ASSERT_GE(started.get(), 0);
  absl::StatusOr<pid_t> init = Start(
      "for f in environ maps mem; do cat /proc/1/$f >/dev/null 2>&1 && echo read-$f; done; "
      "readlink /proc/1/exe && echo read-exe; cat /proc/1/exe >/dev/null 2>&1 && echo read-program;"
      " ls /proc/1/root/ >/dev/null 2>&1 && echo read-root; tr '\\0' ' ' < /proc/1/cmdline; "
      "echo started > started; exec sleep 300",
      &status_read);
  ASSERT_TRUE(init.ok()) << init.status();
  ScopedFd owner(status_read);
  pollfd ready{started.get(), POLLIN, 0};
  const bool ran = poll(&ready, 1, 20000) == 1;
  std::string exe(256, '\0');
  const ssize_t length =
      readlink(("/proc/" + std::to_string(*init) + "/exe").c_str(), exe.data(), exe.size());
  exe.resize(length > 0 ? static_cast<size_t>(length) : 0);
  const long rss_kb = StatusKb(*init, "VmRSS");
  kill(*init, SIGKILL);
  (void)WaitForExit(*init);
  ASSERT_TRUE(ran) << "the command did not start";
  EXPECT_EQ(exe.rfind("/memfd:tony-sandbox-init", 0), 0u) << exe;
  EXPECT_GT(rss_kb, 0);
  EXPECT_LT(rss_kb, 2048) << "init holds " << rss_kb << " kB";
  // Its command line is what it was, and nothing of it could be read from inside.
  EXPECT_EQ(Output(), std::string(program_invocation_short_name) + " sandbox-init ") << Output();
}

// Init dies with the thread that started it (and the task with init), also once it is the helper
// program, and also for a job run as root, whose exec would otherwise gain capabilities and lose
// the parent-death signal (the case CI runs in).
TEST_F(SandboxTest, InitDiesWithTheProcessThatStartedIt) {
  int report[2];
  ASSERT_EQ(pipe2(report, O_CLOEXEC), 0);
  ScopedFd report_read(report[0]);
  const pid_t starter = fork();
  if (starter == 0) {
    int status_read = -1;
    absl::StatusOr<pid_t> init = Start("exec sleep 300", &status_read);
    const pid_t pid = init.ok() ? *init : -1;
    (void)!write(report[1], &pid, sizeof pid);
    // Until init has executed the program (nothing announces an exec: its /proc entry says it).
    const std::string exe = "/proc/" + std::to_string(pid) + "/exe";
    char target[64] = {};
    for (int i = 0; i < 20000 && std::string_view(target).rfind("/memfd:", 0) != 0; ++i) {
      usleep(1000);
      const ssize_t n = readlink(exe.c_str(), target, sizeof target - 1);
      target[n > 0 ? n : 0] = '\0';
    }
    _exit(0);
  }
  close(report[1]);
  ASSERT_GT(starter, 0);
  pollfd readable{report_read.get(), POLLIN, 0};
  ASSERT_EQ(poll(&readable, 1, 20000), 1);
  pid_t init = -1;
  ASSERT_EQ(read(report_read.get(), &init, sizeof init), static_cast<ssize_t>(sizeof init));
  ASSERT_GT(init, 0);
  ScopedFd init_exit(static_cast<int>(syscall(SYS_pidfd_open, init, 0)));
  ASSERT_GE(init_exit.get(), 0);
  (void)WaitForExit(starter);
  pollfd gone{init_exit.get(), POLLIN, 0};
  const bool died = poll(&gone, 1, 20000) == 1;
  if (!died) kill(init, SIGKILL);
  EXPECT_TRUE(died) << "init outlived the process that started it";
  EXPECT_FALSE(Running(std::string("sleep") + '\0' + "300"));
}

TEST_F(SandboxTest, AMissingWorkingDirectoryIsAClearError) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  ScopedFd read_end(fds[0]), write_end(fds[1]);
  SpawnOptions options;
  options.argv = {"/bin/true"};
  Sandbox sandbox;
  sandbox.working_dir = root_ + "/missing";
  sandbox.status_fd = fds[1];
  options.sandbox = sandbox;
  absl::StatusOr<pid_t> pid = Spawn(options);
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(
      pid.status().message().find("cannot enter '" + root_ + "/missing' in the task's sandbox"),
      std::string::npos)
      << pid.status();
}

}  // namespace
}  // namespace tony
