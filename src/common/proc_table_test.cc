#include "common/proc_table.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/files.h"
#include "common/process.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

// Polls /proc-derived state until it holds or 10 s pass (the kernel gives no event to wait on).
bool WaitUntil(const std::function<bool()>& condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

std::optional<ProcessInfo> Find(pid_t pid) {
  for (const ProcessInfo& info : ListProcesses()) {
    if (info.pid == pid) return info;
  }
  return std::nullopt;
}

// Gone, or a zombie nobody has reaped yet (this machine's init may not reap).
bool IsDead(pid_t pid) {
  std::optional<ProcessInfo> info = Find(pid);
  return !info.has_value() || info->state == 'Z';
}

bool Contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

SpawnOptions Command(std::vector<std::string> argv) {
  SpawnOptions options;
  options.argv = std::move(argv);
  return options;
}

SpawnOptions WithEnv(SpawnOptions options, const std::string& key, const std::string& value) {
  options.set_env[key] = value;
  return options;
}

pid_t SpawnOrDie(SpawnOptions options, bool new_process_group = false) {
  options.new_process_group = new_process_group;
  auto pid = Spawn(options);
  EXPECT_TRUE(pid.ok()) << pid.status();
  return pid.value_or(-1);
}

TEST(ProcTableTest, ListsThisProcess) {
  std::optional<ProcessInfo> self = Find(getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->ppid, getppid());
  EXPECT_EQ(self->pgid, getpgrp());
  EXPECT_EQ(self->sid, getsid(0));
  EXPECT_EQ(self->state, 'R');
  EXPECT_GT(self->rss_bytes, 0);
  EXPECT_GT(self->start_ticks, 0u);
}

TEST(ProcTableTest, ProcessTreeFollowsParentsGroupsAndSessions) {
  auto process = [](pid_t pid, pid_t ppid, pid_t pgid, pid_t sid) {
    ProcessInfo info;
    info.pid = pid;
    info.ppid = ppid;
    info.pgid = pgid;
    info.sid = sid;
    return info;
  };
  std::vector<ProcessInfo> table = {
      process(1, 0, 1, 1),    process(10, 1, 10, 5),
      process(11, 10, 10, 5), process(12, 11, 12, 12),  // Own session below root: found by ppid.
      process(20, 1, 20, 5),                            // Unrelated.
      process(30, 1, 10, 5),                            // Reparented member of root's group.
      process(31, 30, 31, 5),                           // Its child, in another group.
      process(40, 1, 41, 10),  // Reparented member of a session root would lead.
  };
  std::vector<pid_t> tree = ProcessTree(10, table);
  std::vector<pid_t> sorted = tree;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<pid_t>{10, 11, 12, 30, 31, 40}));
  EXPECT_EQ(tree.front(), 10);
  // Parents before children.
  auto position = [&](pid_t pid) {
    return std::find(tree.begin(), tree.end(), pid) - tree.begin();
  };
  EXPECT_LT(position(11), position(12));
  EXPECT_LT(position(30), position(31));

  // Root 11 leads no group: only its descendants.
  EXPECT_EQ(ProcessTree(11, table), (std::vector<pid_t>{11, 12}));
  // A group whose leader has exited is still found.
  table.erase(table.begin() + 1);
  std::vector<pid_t> orphans = ProcessTree(10, table);
  std::sort(orphans.begin(), orphans.end());
  EXPECT_EQ(orphans, (std::vector<pid_t>{11, 12, 30, 31, 40}));
  EXPECT_TRUE(ProcessTree(0, table).empty());
  EXPECT_TRUE(ProcessTree(999, table).empty());
}

TEST(ProcTableTest, SignalTreeKillsBackgroundChildren) {
  pid_t shell = SpawnOrDie(Command({"sh", "-c", "sleep 100 & sleep 100 & wait"}));
  ASSERT_GT(shell, 0);
  std::vector<pid_t> tree;
  ASSERT_TRUE(WaitUntil([&] {
    tree = ProcessTree(shell, ListProcesses());
    return tree.size() >= 3;
  }));
  EXPECT_EQ(tree.front(), shell);
  EXPECT_GE(SignalTree(shell, SIGKILL), 3);
  auto status = WaitForExit(shell);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->signal, SIGKILL);
  for (pid_t pid : tree) {
    EXPECT_TRUE(WaitUntil([pid] { return IsDead(pid); })) << "pid " << pid << " survived";
  }
}

TEST(ProcTableTest, SignalTreeFindsTheGroupAfterItsLeaderExited) {
  pid_t shell =
      SpawnOrDie(Command({"sh", "-c", "sleep 100 & sleep 100 & wait"}), /*new_process_group=*/true);
  ASSERT_GT(shell, 0);
  std::vector<pid_t> tree;
  ASSERT_TRUE(WaitUntil([&] {
    tree = ProcessTree(shell, ListProcesses());
    return tree.size() >= 3;
  }));
  kill(shell, SIGKILL);
  ASSERT_TRUE(WaitForExit(shell).ok());
  std::vector<pid_t> left = ProcessTree(shell, ListProcesses());
  EXPECT_EQ(left.size(), 2u);
  EXPECT_EQ(SignalTree(shell, SIGKILL), 2);
  for (pid_t pid : left) {
    EXPECT_TRUE(Contains(tree, pid));
    EXPECT_TRUE(WaitUntil([pid] { return IsDead(pid); })) << "pid " << pid << " survived";
  }
}

TEST(ProcTableTest, SignalTreeSignalsEachProcessOnce) {
  pid_t shell = SpawnOrDie(Command({"sh", "-c", "trap '' USR1; sleep 100 & wait"}),
                           /*new_process_group=*/true);
  ASSERT_GT(shell, 0);
  ASSERT_TRUE(WaitUntil([&] { return ProcessTree(shell, ListProcesses()).size() >= 2; }));
  // Both ignore SIGUSR1 (an ignored signal stays ignored across exec), so a second pass sees
  // the same processes and stops.
  EXPECT_EQ(SignalTree(shell, SIGUSR1), 2);
  EXPECT_FALSE(IsDead(shell));
  EXPECT_EQ(SignalTree(shell, SIGKILL), 2);
  auto status = WaitForExit(shell);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->signal, SIGKILL);
}

TEST(ProcTableTest, ProcessesWithEnvFindsTheMarkedChild) {
  std::random_device random;
  const std::string marker =
      "tony-test-" + std::to_string(getpid()) + "-" + std::to_string(random());
  pid_t child = SpawnOrDie(WithEnv(Command({"sleep", "100"}), "TONY_TEST_MARKER", marker));
  ASSERT_GT(child, 0);
  EXPECT_TRUE(WaitUntil(
      [&] { return ProcessesWithEnv("TONY_TEST_MARKER", marker) == std::vector<pid_t>{child}; }));
  EXPECT_TRUE(ProcessesWithEnv("TONY_TEST_MARKER", marker + "x").empty());
  EXPECT_TRUE(ProcessesWithEnv("TONY_TEST_MARKE", marker).empty());
  kill(child, SIGKILL);
  (void)WaitForExit(child);
  EXPECT_TRUE(ProcessesWithEnv("TONY_TEST_MARKER", marker).empty());
}

TEST(ProcTableTest, TreeRssAndCpuOfARunningChild) {
  pid_t child = SpawnOrDie(Command({"sh", "-c", "while :; do :; done"}));
  ASSERT_GT(child, 0);
  EXPECT_TRUE(WaitUntil([&] { return TreeRssBytes(child) > 0; }));
  EXPECT_TRUE(WaitUntil([&] { return TreeCpuTicks(child) > 0; }));
  kill(child, SIGKILL);
  (void)WaitForExit(child);
  EXPECT_EQ(TreeRssBytes(child), 0);
  EXPECT_EQ(TreeCpuTicks(child), 0u);
}

// MeasureTree reads only a root's descendants when the root leads no group or session; it must
// come to what the full scan (MeasureTrees) finds, for such a root and for a group leader whose
// member was reparented. The processes sleep, so their sizes hold still between the two reads.
TEST(ProcTableTest, MeasureTreeAgreesWithTheFullScan) {
  pid_t plain = SpawnOrDie(Command({"sh", "-c", "sleep 100 & sleep 100 & wait"}));
  pid_t leader = SpawnOrDie(Command({"sh", "-c", "(sleep 100 &); sleep 100; true"}), true);
  ASSERT_GT(plain, 0);
  ASSERT_GT(leader, 0);
  // Settled: three processes, and below the root only `sleep`s asleep in their sleep. A forked
  // child that has not yet exec'd, or whose loader still maps libraries, is still changing size.
  auto settled = [](pid_t root) {
    const std::vector<pid_t> tree = ProcessTree(root, ListProcesses());
    if (tree.size() != 3) return false;
    for (pid_t pid : tree) {
      if (pid == root) continue;
      absl::StatusOr<std::string> stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
      if (!stat.ok()) return false;
      // "pid (comm) state ...": comm is "sleep", the state S (sleeping).
      const size_t close = stat->rfind(')');
      if (stat->find("(sleep)") == std::string::npos || close == std::string::npos ||
          stat->compare(close + 1, 3, " S ") != 0) {
        return false;
      }
    }
    return true;
  };
  ASSERT_TRUE(WaitUntil([&] { return settled(plain) && settled(leader); }));
  for (pid_t root : {plain, leader}) {
    const std::unordered_map<pid_t, TreeUsage> scanned = MeasureTrees({plain, leader});
    const TreeUsage measured = MeasureTree(root);
    EXPECT_GT(measured.rss_bytes, 0);
    EXPECT_EQ(measured.rss_bytes, scanned.at(root).rss_bytes) << root;
  }
  // Two trees: each its own.
  const std::unordered_map<pid_t, TreeUsage> both = MeasureTrees({plain, leader});
  EXPECT_EQ(both.size(), 2u);
  EXPECT_NE(both.at(plain).rss_bytes, 0);
  EXPECT_EQ(MeasureTrees({plain}).at(plain).rss_bytes, both.at(plain).rss_bytes);
  SignalTree(plain, SIGKILL);
  SignalTree(leader, SIGKILL);
  (void)WaitForExit(plain);
  (void)WaitForExit(leader);
  EXPECT_EQ(MeasureTree(plain).rss_bytes, 0);
}

// In a forked child that is a subreaper: a sleeper in its group, one in a session of its own, and
// an orphan it adopted all die; the caller survives and counts three.
TEST(ProcTableTest, SignalDescendantsKillsEverythingBelowButTheCaller) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    SpawnOptions sleeper = Command({"sleep", "100"});
    SpawnOptions away = sleeper;
    away.new_session = true;
    (void)Spawn(sleeper);
    (void)Spawn(away);
    // sh leaves its sleep to the caller: the kernel reparents it before sh's exit is reported.
    auto sh = Spawn(Command({"sh", "-c", "sleep 100 & exit 0"}));
    if (sh.ok()) (void)WaitForExit(*sh);
    const int signalled = SignalDescendants(SIGKILL);
    int reaped = 0;
    while (waitpid(-1, nullptr, 0) > 0) ++reaped;  // returns only once every child is gone
    const int report[2] = {signalled, reaped};
    (void)!write(fds[1], report, sizeof report);
    _exit(0);
  }
  close(fds[1]);
  ASSERT_GT(child, 0);
  auto exit = WaitForExitFor(child, 10000);
  ASSERT_TRUE(exit.ok() && exit->has_value()) << "the caller did not finish";
  EXPECT_EQ(**exit, (ExitStatus{0, 0})) << "SignalDescendants killed its caller";
  int report[2] = {0, 0};
  ASSERT_EQ(read(fds[0], report, sizeof report), static_cast<ssize_t>(sizeof report));
  close(fds[0]);
  // sleeper, away and the orphaned sleep, all reaped.
  EXPECT_EQ(report[0], 3);
  EXPECT_EQ(report[1], 3);
}

}  // namespace
}  // namespace tony
