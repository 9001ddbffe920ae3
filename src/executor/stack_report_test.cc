#include "executor/stack_report.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include "common/files.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "common/strings.h"

namespace tony::executor {
namespace {

// A real process tree, one of whose processes is stopped as a hung rank would be.
TEST(StackReportTest, NamesEachProcessAndThreadWithItsStateAndWait) {
  char pattern[] = "/tmp/tony_stacks_XXXXXX";
  const std::string dir = mkdtemp(pattern);
  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c", "sleep 60 & kill -STOP $$; wait"};
  spawn.new_process_group = true;
  absl::StatusOr<pid_t> shell = Spawn(spawn);
  ASSERT_TRUE(shell.ok()) << shell.status();
  // Wait (with a deadline) until the shell has stopped itself.
  std::optional<ProcessInfo> info;
  for (int i = 0; i < 5000; ++i) {
    info = ReadProcessInfo(*shell);
    if (info && info->state == 'T') break;
    usleep(1000);
  }
  ASSERT_TRUE(info && info->state == 'T');
  const std::string log = dir + "/stderr";
  WriteStacks(*shell, false, "worker:1 made no progress for 15000 ms", log);
  absl::StatusOr<std::string> report = ReadFile(log);
  ASSERT_TRUE(report.ok());
  EXPECT_NE(report->find("[tony] worker:1 made no progress for 15000 ms"), std::string::npos);
  EXPECT_NE(report->find(StrCat("process ", *shell, " (sh): /bin/sh -c sleep 60")),
            std::string::npos)
      << *report;
  EXPECT_NE(report->find(") stopped"), std::string::npos) << *report;
  EXPECT_NE(report->find("(sleep): sleep 60"), std::string::npos) << *report;
  EXPECT_NE(report->find(") sleeping"), std::string::npos) << *report;
  // Without its root (a sandbox's init), the root is left out.
  ASSERT_TRUE(WriteFile(log, "").ok());
  WriteStacks(*shell, true, "again", log);
  report = ReadFile(log);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->find(StrCat("process ", *shell, " ")), std::string::npos) << *report;
  EXPECT_NE(report->find("(sleep)"), std::string::npos) << *report;
  kill(-*shell, SIGKILL);
  (void)WaitForExit(*shell);
  std::filesystem::remove_all(dir);
}

// The task names the pids to signal: one outside its tree (another process of the same user) is
// never signalled, whatever the task wrote.
TEST(StackReportTest, APidOutsideTheTasksTreeIsNeverSignalled) {
  char pattern[] = "/tmp/tony_stacks_XXXXXX";
  const std::string dir = mkdtemp(pattern);
  SpawnOptions spawn;
  spawn.argv = {"/bin/sleep", "60"};
  absl::StatusOr<pid_t> task = Spawn(spawn);
  absl::StatusOr<pid_t> bystander = Spawn(spawn);
  ASSERT_TRUE(task.ok() && bystander.ok());
  // SIGUSR2's default action ends a process: the bystander would die if it were signalled.
  WriteStacks(*task, false, "hung", dir + "/stderr", {*bystander}, SIGUSR2);
  absl::StatusOr<std::optional<ExitStatus>> still = PollExit(*bystander);
  ASSERT_TRUE(still.ok());
  EXPECT_FALSE(still->has_value()) << "the bystander was signalled";
  EXPECT_EQ(InnermostPid(*bystander), *bystander);  // no PID namespace of its own
  // The task's own process, named by the pid it sees, is.
  WriteStacks(*task, false, "hung", dir + "/stderr", {*task}, SIGUSR2);
  absl::StatusOr<ExitStatus> ended = WaitForExit(*task);
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(ended->signal, SIGUSR2);
  kill(*bystander, SIGKILL);
  (void)WaitForExit(*bystander);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tony::executor
