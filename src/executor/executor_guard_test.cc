#include "executor/executor_guard.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/helper_program.h"
#include "common/memory_test_util.h"
#include "common/process.h"
#include "common/resident_pages.h"
#include "executor/task_executor.h"
#include "gtest/gtest.h"

namespace tony::executor {
namespace {

constexpr int kDeadlineMs = 10000;

// A guard started in a child of the test, with `executor` as the body of its executor. The body
// reports to the test through `report` (a pipe) and its return value is the executor's exit code.
struct Guarded {
  pid_t guard = -1;
  int report = -1;  // read end
};

Guarded StartGuarded(GuardKind kind, const std::function<int(int report)>& executor,
                     const std::function<void(int report)>& before_guard = nullptr) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t guard = fork();
  if (guard == 0) {
    close(fds[0]);
    if (before_guard) before_guard(fds[1]);
    BlockStopSignals();  // as RunExecutor does before RunGuard
    std::optional<int> guard_exit = RunGuard(nullptr, kind);
    if (guard_exit.has_value()) _exit(*guard_exit);
    _exit(executor(fds[1]));
  }
  close(fds[1]);
  return {guard, fds[0]};
}

// Reads one pid_t-sized value from the pipe, waiting at most kDeadlineMs.
std::optional<int> ReadInt(int fd) {
  pollfd readable = {fd, POLLIN, 0};
  if (poll(&readable, 1, kDeadlineMs) != 1) return std::nullopt;
  int value = 0;
  if (read(fd, &value, sizeof value) != sizeof value) return std::nullopt;
  return value;
}

void WriteInt(int fd, int value) { (void)!write(fd, &value, sizeof value); }

// Starts `sleep 1000` in a child of the caller; with `new_session` it leaves the caller's group and
// session, as a daemonizing user process does.
pid_t StartSleeper(bool new_session) {
  SpawnOptions options;
  options.argv = {"sleep", "1000"};
  options.new_session = new_session;
  return Spawn(options).value_or(-1);
}

// Starts `sleep 1000` as a grandchild and lets its parent exit: an orphan, as `sh -c` leaves.
pid_t StartOrphan() {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t middle = fork();
  if (middle == 0) {
    WriteInt(fds[1], StartSleeper(false));
    _exit(0);
  }
  waitpid(middle, nullptr, 0);
  std::optional<int> orphan = ReadInt(fds[0]);
  close(fds[0]);
  close(fds[1]);
  return orphan.value_or(-1);
}

bool Gone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

// Each behaviour, of the guard's own program and of the guard as a copy of tony (its fallback).
class ExecutorGuardTest : public testing::TestWithParam<GuardKind> {};

INSTANTIATE_TEST_SUITE_P(Kinds, ExecutorGuardTest,
                         testing::Values(GuardKind::kProgram, GuardKind::kInProcess),
                         [](const testing::TestParamInfo<GuardKind>& info) {
                           return info.param == GuardKind::kProgram ? "Program" : "InProcess";
                         });

ExitStatus WaitForGuard(pid_t guard) {
  auto status = WaitForExitFor(guard, kDeadlineMs);
  EXPECT_TRUE(status.ok()) << status.status();
  EXPECT_TRUE(status.ok() && status->has_value()) << "the guard did not exit within the deadline";
  if (!status.ok() || !status->has_value()) {
    kill(guard, SIGKILL);
    (void)WaitForExit(guard);
    return {};
  }
  return **status;
}

TEST_P(ExecutorGuardTest, KillsWhatAKilledExecutorLeftAndExitsWithItsSignal) {
  Guarded run = StartGuarded(GetParam(), [](int report) {
    WriteInt(report, StartSleeper(false));  // in the executor's group
    WriteInt(report, StartSleeper(true));   // in a session of its own
    WriteInt(report, StartOrphan());        // reparented to the guard already
    raise(SIGKILL);
    return 0;
  });
  ASSERT_GT(run.guard, 0);
  std::vector<pid_t> left;
  for (int i = 0; i < 3; ++i) {
    std::optional<int> pid = ReadInt(run.report);
    ASSERT_TRUE(pid.has_value() && *pid > 0) << "the executor did not report process " << i;
    left.push_back(*pid);
  }
  close(run.report);
  ExitStatus status = WaitForGuard(run.guard);
  EXPECT_EQ(status, (ExitStatus{137, 0}));
  // The guard exits only once it has no child left, so these are reaped, not zombies.
  for (pid_t pid : left) {
    EXPECT_TRUE(Gone(pid)) << "process " << pid << " outlived the guard";
    if (!Gone(pid)) kill(pid, SIGKILL);
  }
}

TEST_P(ExecutorGuardTest, ExitsWithTheExecutorsCodeAndLeavesNothing) {
  Guarded run = StartGuarded(GetParam(), [](int report) {
    WriteInt(report, StartSleeper(false));
    return 3;
  });
  ASSERT_GT(run.guard, 0);
  std::optional<int> sleeper = ReadInt(run.report);
  ASSERT_TRUE(sleeper.has_value() && *sleeper > 0);
  close(run.report);
  EXPECT_EQ(WaitForGuard(run.guard), (ExitStatus{3, 0}));
  EXPECT_TRUE(Gone(*sleeper));
}

// The executor's part in the signal tests: reports its pid, then waits for SIGTERM (blocked since
// StartGuarded) and returns the signal it got.
int ReportAndAwaitSigterm(int report) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  WriteInt(report, getpid());
  int sig = 0;
  sigwait(&stop, &sig);
  return sig;
}

TEST_P(ExecutorGuardTest, ForwardsAStopSignalToTheExecutor) {
  Guarded run = StartGuarded(
      GetParam(), [](int report) { return ReportAndAwaitSigterm(report) == SIGTERM ? 7 : 1; });
  ASSERT_GT(run.guard, 0);
  std::optional<int> executor = ReadInt(run.report);
  ASSERT_TRUE(executor.has_value());
  close(run.report);
  ASSERT_EQ(kill(run.guard, SIGTERM), 0);
  EXPECT_EQ(WaitForGuard(run.guard), (ExitStatus{7, 0}));
}

TEST_P(ExecutorGuardTest, AKilledGuardStopsTheExecutor) {
  Guarded run = StartGuarded(GetParam(), [](int report) {
    WriteInt(report, ReportAndAwaitSigterm(report));
    return 0;
  });
  ASSERT_GT(run.guard, 0);
  std::optional<int> executor = ReadInt(run.report);
  ASSERT_TRUE(executor.has_value());
  ASSERT_EQ(kill(run.guard, SIGKILL), 0);
  EXPECT_EQ(WaitForGuard(run.guard), (ExitStatus{0, SIGKILL}));
  // The executor is nobody's child of ours now: it reports the signal it got, then exits.
  EXPECT_EQ(ReadInt(run.report), std::optional<int>(SIGTERM));
  close(run.report);
}

TEST(InProcessGuardTest, LetsGoOfTheFilePagesItSharesWithTheExecutor) {
  Guarded run = StartGuarded(
      GuardKind::kInProcess,
      [](int report) {
        // The guard forwards signals only from its wait loop, which it enters after letting go
        // of its pages: a forwarded SIGTERM says that has happened. The second one ends the test.
        WriteInt(report, ReportAndAwaitSigterm(report));
        return ReportAndAwaitSigterm(report) == SIGTERM ? 0 : 1;
      },
      [](int report) {
        TouchLoadedCode();
        WriteInt(report, static_cast<int>(StatusKb(getpid(), "RssFile")));
      });
  ASSERT_GT(run.guard, 0);
  std::optional<int> before = ReadInt(run.report);
  ASSERT_TRUE(before.has_value() && *before > 1024) << "the file pages were not made resident";
  ASSERT_TRUE(ReadInt(run.report).has_value());  // the executor's pid: it runs
  ASSERT_EQ(kill(run.guard, SIGTERM), 0);
  ASSERT_EQ(ReadInt(run.report), std::optional<int>(SIGTERM));
  const long guard = StatusKb(run.guard, "RssFile");
  EXPECT_GE(guard, 0);
  EXPECT_LT(guard, *before / 2) << "the guard holds " << guard << " kB of file pages, " << *before
                                << " before the fork";
  ASSERT_TRUE(ReadInt(run.report).has_value());  // the executor waits again
  close(run.report);
  ASSERT_EQ(kill(run.guard, SIGTERM), 0);
  EXPECT_EQ(WaitForGuard(run.guard), (ExitStatus{0, 0}));
}

TEST(GuardProgramTest, TheGuardIsASmallProgramOfItsOwn) {
  Guarded run = StartGuarded(GuardKind::kProgram, [](int report) {
    // A forwarded SIGTERM says that the guard's program runs (it forwards from its wait loop);
    // the second one ends the test.
    WriteInt(report, ReportAndAwaitSigterm(report));
    return ReportAndAwaitSigterm(report) == SIGTERM ? 0 : 1;
  });
  ASSERT_GT(run.guard, 0);
  ASSERT_TRUE(ReadInt(run.report).has_value());  // the executor's pid: it runs
  ASSERT_EQ(kill(run.guard, SIGTERM), 0);
  ASSERT_EQ(ReadInt(run.report), std::optional<int>(SIGTERM));
  // Executed from memory, not from a file anyone could change; named as tony's guard.
  char exe[256] = {};
  ASSERT_GT(readlink(("/proc/" + std::to_string(run.guard) + "/exe").c_str(), exe, sizeof exe - 1),
            0);
  EXPECT_EQ(std::string_view(exe).substr(0, 17), "/memfd:tony-guard") << exe;
  std::ifstream cmdline("/proc/" + std::to_string(run.guard) + "/cmdline");
  std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  EXPECT_NE(args.find(std::string("\0guard\0", 7)), std::string::npos) << args;
  // Nothing of tony's: a copy of tony holds 5 MB or more, even once it has let go of its file
  // pages (InProcessGuardTest).
  const long rss = StatusKb(run.guard, "VmRSS");
  EXPECT_GT(rss, 0);
  EXPECT_LT(rss, 2048) << "the guard holds " << rss << " kB";
  ASSERT_TRUE(ReadInt(run.report).has_value());  // the executor waits again
  close(run.report);
  ASSERT_EQ(kill(run.guard, SIGTERM), 0);
  EXPECT_EQ(WaitForGuard(run.guard), (ExitStatus{0, 0}));
}

TEST(GuardProgramTest, TheExecutorStartsOnceTheGuardIsItsProgramAndMapsItsCodePageByPage) {
  // Whether this kernel allows the registration at all, asked in a child of the test's.
  const pid_t probe = fork();
  ASSERT_GE(probe, 0);
  if (probe == 0) _exit(MapCodePagesAsTouched() ? 1 : 0);
  const absl::StatusOr<ExitStatus> probed = WaitForExit(probe);
  ASSERT_TRUE(probed.ok());

  Guarded run = StartGuarded(GuardKind::kProgram, [](int report) {
    // At once, before anything else: the guard must be its small program already, so that no
    // copy of tony's start-up is held beside the executor.
    char exe[256] = {};
    const std::string parent = "/proc/" + std::to_string(getppid()) + "/exe";
    const bool guard_is_program = readlink(parent.c_str(), exe, sizeof exe - 1) > 0 &&
                                  std::string_view(exe).substr(0, 17) == "/memfd:tony-guard";
    WriteInt(report, guard_is_program ? 1 : 0);
    WriteInt(report, static_cast<int>(UserfaultFds().size()));
    return 0;
  });
  ASSERT_GT(run.guard, 0);
  EXPECT_EQ(ReadInt(run.report), std::optional<int>(1)) << "the executor ran beside a copy of tony";
  EXPECT_EQ(ReadInt(run.report), std::optional<int>(probed->exit_code))
      << "the executor's registration (1) where the kernel allows one";
  close(run.report);
  EXPECT_EQ(WaitForGuard(run.guard), (ExitStatus{0, 0}));
}

TEST(GuardProgramTest, RefusesToRunOnItsOwn) {
  // Started by hand, not by tony: one line and exit code 2, whatever the arguments.
  int fd = memfd_create("tony-guard-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::string_view program = HelperProgram();
  ASSERT_EQ(write(fd, program.data(), program.size()), static_cast<ssize_t>(program.size()));
  for (std::vector<std::string> args : {std::vector<std::string>{"tony"},
                                        {"tony", "guard", "1"},
                                        {"tony", "guard", "x"},
                                        {"tony", "executor", std::to_string(getpid())},
                                        {"tony", "sandbox-init"}}) {
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    const pid_t child = fork();
    if (child == 0) {
      dup2(out[1], STDERR_FILENO);
      std::vector<char*> argv;
      argv.reserve(args.size() + 1);
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      fexecve(fd, argv.data(), environ);
      _exit(127);
    }
    close(out[1]);
    std::string said;
    char buffer[256];
    for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) > 0;) said.append(buffer, n);
    close(out[0]);
    EXPECT_EQ(WaitForGuard(child), (ExitStatus{2, 0})) << args.size();
    EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
    EXPECT_EQ(said.rfind("tony-helper: ", 0), 0u) << said;
  }
  close(fd);
}

}  // namespace
}  // namespace tony::executor
