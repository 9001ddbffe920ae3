#include "common/child_exit.h"

#include <signal.h>
#include <sys/wait.h>

#include <string>
#include <utility>
#include <vector>

#include "common/process.h"
#include "common/spawn_test_util.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

TEST(WaitForExitForTest, TimesOutThenSucceeds) {
  auto pid = Spawn(Command({"sleep", "100"}));
  ASSERT_TRUE(pid.ok()) << pid.status();
  auto running = WaitForExitFor(*pid, 50);
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_FALSE(running->has_value());
  auto polled = PollExit(*pid);
  ASSERT_TRUE(polled.ok()) << polled.status();
  EXPECT_FALSE(polled->has_value());
  kill(*pid, SIGTERM);
  auto ended = WaitForExitFor(*pid, 10'000);
  ASSERT_TRUE(ended.ok()) << ended.status();
  ASSERT_TRUE(ended->has_value());
  EXPECT_EQ((*ended)->signal, SIGTERM);
  EXPECT_EQ((*ended)->ToString(), "killed by signal 15 (SIGTERM)");
}

TEST(WaitForExitForTest, ReturnsTheExitCode) {
  auto pid = Spawn(Command({"sh", "-c", "exit 7"}));
  ASSERT_TRUE(pid.ok()) << pid.status();
  auto status = WaitForExitFor(*pid, 10'000);
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_TRUE(status->has_value());
  EXPECT_EQ((*status)->exit_code, 7);
  // Reaped: waiting again is an error that names the pid.
  auto again = WaitForExitFor(*pid, 10);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find(std::to_string(*pid)), std::string::npos);
}

TEST(ExitStatusTest, ShellCodeAndText) {
  EXPECT_EQ((ExitStatus{0, 0}).ShellCode(), 0);
  EXPECT_EQ((ExitStatus{0, SIGTERM}).ShellCode(), 143);
  EXPECT_EQ((ExitStatus{0, SIGSEGV}).ToString(), "killed by signal 11 (SIGSEGV)");
}

TEST(HasExitedTest, ReportsTheExitWithoutReapingSoThePidStaysReserved) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "exit 5"};
  absl::StatusOr<pid_t> pid = Spawn(options);
  ASSERT_TRUE(pid.ok()) << pid.status();
  // The exit is an event on the child; wait for it without reaping.
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(*pid), &info, WEXITED | WNOWAIT), 0);
  absl::StatusOr<bool> exited = HasExited(*pid);
  ASSERT_TRUE(exited.ok());
  EXPECT_TRUE(*exited);
  EXPECT_TRUE(*HasExited(*pid)) << "still unreaped: asking again gives the same answer";
  absl::StatusOr<ExitStatus> status = WaitForExit(*pid);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->exit_code, 5);
}

TEST(HasExitedTest, RunningChildHasNotExited) {
  SpawnOptions options;
  options.argv = {"/bin/sleep", "30"};
  absl::StatusOr<pid_t> pid = Spawn(options);
  ASSERT_TRUE(pid.ok());
  EXPECT_FALSE(*HasExited(*pid));
  kill(*pid, SIGKILL);
  EXPECT_TRUE(WaitForExit(*pid).ok());
}

TEST(ExitStatusTest, FromAWaitStatus) {
  EXPECT_EQ(ExitStatusFromWait(7 << 8), (ExitStatus{7, 0}));
  EXPECT_EQ(ExitStatusFromWait(SIGKILL), (ExitStatus{0, SIGKILL}));
}

}  // namespace
}  // namespace tony
