#include "executor/stack_report.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <thread>

#include "common/files.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "common/strings.h"

namespace tony::executor {
namespace {

// Waits (at most 30 s) until `done` holds; says whether it did.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

std::string Cmdline(pid_t pid) {
  std::string text = ReadFile(StrCat("/proc/", pid, "/cmdline")).value_or("");
  for (char& c : text) {
    if (c == '\0') c = ' ';
  }
  return text;
}

// The process of `root`'s tree whose command line is `cmdline`, with `state`; 0 if none.
pid_t FindInTree(pid_t root, const std::string& cmdline, char state) {
  for (pid_t pid : ProcessTree(root, ListProcesses())) {
    std::optional<ProcessInfo> info = ReadProcessInfo(pid);
    if (info && info->state == state && Cmdline(pid) == cmdline) return pid;
  }
  return 0;
}

class StackReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tony_stacks_XXXXXX";
    dir_ = mkdtemp(pattern);
    log_ = dir_ + "/stderr";
    fd_ = open(log_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    close(fd_);
    std::filesystem::remove_all(dir_);
  }
  std::string Log() { return ReadFile(log_).value_or(""); }

  std::string dir_;
  std::string log_;
  int fd_ = -1;
};

// A real process tree, one of whose processes is stopped as a hung rank would be.
TEST_F(StackReportTest, NamesEachProcessAndThreadWithItsStateAndWait) {
  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c", "sleep 60 & kill -STOP $$; wait"};
  spawn.new_process_group = true;
  absl::StatusOr<pid_t> shell = Spawn(spawn);
  ASSERT_TRUE(shell.ok()) << shell.status();
  // The shell has stopped itself, and its child is sleeping.
  ASSERT_TRUE(Eventually([&] {
    std::optional<ProcessInfo> info = ReadProcessInfo(*shell);
    return info && info->state == 'T' && FindInTree(*shell, "sleep 60 ", 'S') != 0;
  }));
  WriteStacks(*shell, false, "worker:1 made no progress for 15000 ms", fd_, 5000);
  std::string report = Log();
  EXPECT_NE(report.find("[tony] worker:1 made no progress for 15000 ms"), std::string::npos);
  EXPECT_NE(report.find(StrCat("process ", *shell, " (sh): /bin/sh -c sleep 60")),
            std::string::npos)
      << report;
  EXPECT_NE(report.find(") stopped"), std::string::npos) << report;
  EXPECT_NE(report.find("(sleep): sleep 60"), std::string::npos) << report;
  EXPECT_NE(report.find(") sleeping"), std::string::npos) << report;
  // Without its root (a sandbox's init), the root is left out.
  ASSERT_EQ(ftruncate(fd_, 0), 0);
  WriteStacks(*shell, true, "again", fd_, 5000);
  report = Log();
  EXPECT_EQ(report.find(StrCat("process ", *shell, " ")), std::string::npos) << report;
  EXPECT_NE(report.find("(sleep)"), std::string::npos) << report;
  kill(-*shell, SIGKILL);
  (void)WaitForExit(*shell);
}

// The task names the pids to signal. One outside its tree (another process of the same user), or
// one of its own that does not catch the signal, is never signalled, whatever the task wrote:
// SIGUSR2's default action would end it.
TEST_F(StackReportTest, OnlyTheTasksOwnProcessesThatCatchTheSignalGetIt) {
  SpawnOptions bystander_spawn;
  bystander_spawn.argv = {"/bin/sleep", "60"};
  absl::StatusOr<pid_t> bystander = Spawn(bystander_spawn);
  ASSERT_TRUE(bystander.ok());
  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c",
                "sleep 61 & trap 'echo caught USR2' USR2; while :; do sleep 0.05; done"};
  spawn.stdout_path = log_;
  spawn.new_process_group = true;
  absl::StatusOr<pid_t> task = Spawn(spawn);
  ASSERT_TRUE(task.ok());
  pid_t child = 0;
  ASSERT_TRUE(Eventually([&] {
    const std::string status = ReadFile(StrCat("/proc/", *task, "/status")).value_or("");
    const size_t caught = status.find("SigCgt:");
    child = FindInTree(*task, "sleep 61 ", 'S');
    return child != 0 && caught != std::string::npos &&
           ((std::strtoull(status.c_str() + caught + 7, nullptr, 16) >> (SIGUSR2 - 1)) & 1);
  }));
  EXPECT_EQ(InnermostPid(*bystander), *bystander);  // no PID namespace of its own
  WriteStacks(*task, false, "hung", fd_, 5000, {*bystander, child, *task}, SIGUSR2);
  // The shell caught it and said so; the bystander and the child that does not catch it live on.
  EXPECT_TRUE(Eventually([&] { return Log().find("caught USR2") != std::string::npos; })) << Log();
  absl::StatusOr<std::optional<ExitStatus>> still = PollExit(*bystander);
  ASSERT_TRUE(still.ok());
  EXPECT_FALSE(still->has_value()) << "the bystander was signalled";
  std::optional<ProcessInfo> child_info = ReadProcessInfo(child);
  EXPECT_TRUE(child_info && child_info->state != 'Z') << "the child that does not catch it was";
  kill(-*task, SIGKILL);
  (void)WaitForExit(*task);
  kill(*bystander, SIGKILL);
  (void)WaitForExit(*bystander);
}

}  // namespace
}  // namespace tony::executor
