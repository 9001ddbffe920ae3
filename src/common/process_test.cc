#include "common/process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/files.h"
#include "common/spawn_test_util.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

ExitStatus Failed() { return ExitStatus{-1, 0}; }

class SpawnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/tony_process_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    SpawnOptions remove;
    remove.argv = {"rm", "-rf", dir_};
    auto pid = Spawn(remove);
    if (pid.ok()) (void)WaitForExit(*pid);
  }

  // Runs the command to completion with stdout and stderr in files of the test's directory.
  ExitStatus Run(SpawnOptions options) {
    options.stdout_path = Out();
    options.stderr_path = Err();
    auto pid = Spawn(options);
    EXPECT_TRUE(pid.ok()) << pid.status();
    if (!pid.ok()) return Failed();
    auto status = WaitForExit(*pid);
    EXPECT_TRUE(status.ok()) << status.status();
    return status.value_or(Failed());
  }
  std::string Out() const { return dir_ + "/out"; }
  std::string Err() const { return dir_ + "/err"; }
  static std::string Contents(const std::string& path) {
    auto content = ReadFile(path);
    return content.ok() ? *content : "<" + content.status().ToString() + ">";
  }

  std::string dir_;
};

// Kills and reaps a child a test left running.
void KillAndReap(pid_t pid) {
  kill(pid, SIGKILL);
  (void)WaitForExit(pid);
}

TEST_F(SpawnTest, ReportsExitCode) {
  ExitStatus status = Run(Command({"sh", "-c", "exit 3"}));
  EXPECT_EQ(status.exit_code, 3);
  EXPECT_EQ(status.signal, 0);
  EXPECT_EQ(status.ShellCode(), 3);
  EXPECT_EQ(status.ToString(), "exit code 3");
}

TEST_F(SpawnTest, ReportsSignalDeath) {
  ExitStatus status = Run(Command({"sh", "-c", "kill -9 $$"}));
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_EQ(status.ShellCode(), 137);
  EXPECT_EQ(status.ToString(), "killed by signal 9 (SIGKILL)");
}

TEST_F(SpawnTest, SetsAndUnsetsEnvironment) {
  ASSERT_EQ(setenv("TONY_PROCESS_TEST_KEEP", "kept", 1), 0);
  ASSERT_EQ(setenv("TONY_PROCESS_TEST_UNSET", "present", 1), 0);
  SpawnOptions options;
  options.argv = {"sh", "-c",
                  "printf '%s|%s|%s\\n' \"$FOO\" \"${TONY_PROCESS_TEST_UNSET-gone}\" "
                  "\"$TONY_PROCESS_TEST_KEEP\""};
  options.set_env = {{"FOO", "bar baz"}, {"TONY_PROCESS_TEST_KEEP", "overridden"}};
  options.unset_env = {"TONY_PROCESS_TEST_UNSET"};
  EXPECT_EQ(Run(options).exit_code, 0);
  EXPECT_EQ(Contents(Out()), "bar baz|gone|overridden\n");
  unsetenv("TONY_PROCESS_TEST_KEEP");
  unsetenv("TONY_PROCESS_TEST_UNSET");
}

TEST_F(SpawnTest, ClearsEnvironmentAndSearchesDefaultPath) {
  SpawnOptions options;
  options.argv = {"env"};
  options.clear_env = true;
  options.set_env = {{"A", "1"}};
  EXPECT_EQ(Run(options).exit_code, 0);
  EXPECT_EQ(Contents(Out()), "A=1\n");
}

TEST_F(SpawnTest, SearchesThePathOfTheChild) {
  ASSERT_TRUE(WriteFile(dir_ + "/tony-test-tool", "#!/bin/sh\necho found\n", 0755).ok());
  SpawnOptions options;
  options.argv = {"tony-test-tool"};
  options.set_env = {{"PATH", "/nonexistent:" + dir_}};
  EXPECT_EQ(Run(options).exit_code, 0);
  EXPECT_EQ(Contents(Out()), "found\n");
}

TEST_F(SpawnTest, RunsInWorkingDirectory) {
  SpawnOptions options;
  options.argv = {"pwd", "-P"};
  options.working_dir = dir_;
  EXPECT_EQ(Run(options).exit_code, 0);
  char resolved[PATH_MAX];
  ASSERT_NE(realpath(dir_.c_str(), resolved), nullptr);
  EXPECT_EQ(Contents(Out()), std::string(resolved) + "\n");
}

TEST_F(SpawnTest, MissingWorkingDirectoryIsAClearError) {
  SpawnOptions options;
  options.argv = {"true"};
  options.working_dir = dir_ + "/missing";
  auto pid = Spawn(options);
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(pid.status().message().find("'" + dir_ + "/missing'"), std::string::npos)
      << pid.status();
  EXPECT_NE(pid.status().message().find("No such file or directory"), std::string::npos);
}

TEST_F(SpawnTest, RedirectsAndAppendsStdoutAndStderr) {
  SpawnOptions options;
  options.argv = {"sh", "-c", "echo out; echo err >&2"};
  EXPECT_EQ(Run(options).exit_code, 0);
  EXPECT_EQ(Run(options).exit_code, 0);
  EXPECT_EQ(Contents(Out()), "out\nout\n");
  EXPECT_EQ(Contents(Err()), "err\nerr\n");
  struct stat info {};
  ASSERT_EQ(stat(Out().c_str(), &info), 0);
  mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(info.st_mode & 0777, 0600 & ~mask) << "output files are the user's alone by default";
}

TEST_F(SpawnTest, OutputFilesAreCreatedWithTheGivenMode) {
  SpawnOptions options;
  options.argv = {"sh", "-c", "echo out"};
  options.output_mode = 0640;
  const mode_t mask = umask(0);
  EXPECT_EQ(Run(options).exit_code, 0);
  umask(mask);
  struct stat info {};
  ASSERT_EQ(stat(Out().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
}

TEST_F(SpawnTest, StdinIsDevNullOrTheGivenFile) {
  EXPECT_EQ(Run(Command({"cat"})).exit_code, 0);
  EXPECT_EQ(Contents(Out()), "");
  ASSERT_TRUE(WriteFile(dir_ + "/in", "input line\n").ok());
  SpawnOptions with_input = Command({"cat"});
  with_input.stdin_path = dir_ + "/in";
  EXPECT_EQ(Run(with_input).exit_code, 0);
  EXPECT_EQ(Contents(Out()), "input line\n");
}

TEST_F(SpawnTest, NonExecutableFileIsAClearError) {
  const std::string script = dir_ + "/foo.sh";
  ASSERT_TRUE(WriteFile(script, "#!/bin/sh\nexit 0\n", 0644).ok());
  auto pid = Spawn(Command({script}));
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().message(), "cannot execute '" + script + "': Permission denied");
  EXPECT_EQ(pid.status().code(), absl::StatusCode::kPermissionDenied);
  // The failed child was reaped: there is no child left to wait for.
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST_F(SpawnTest, MissingProgramIsAClearError) {
  auto pid = Spawn(Command({"tony-no-such-program"}));
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().message(),
            "cannot execute 'tony-no-such-program': No such file or directory");
  EXPECT_EQ(pid.status().code(), absl::StatusCode::kNotFound);
  auto absolute = Spawn(Command({dir_ + "/missing"}));
  ASSERT_FALSE(absolute.ok());
  EXPECT_NE(absolute.status().message().find(dir_ + "/missing"), std::string::npos);
}

TEST_F(SpawnTest, EmptyCommandIsAnError) { EXPECT_FALSE(Spawn({}).ok()); }

TEST_F(SpawnTest, UnwritableStdoutIsAClearError) {
  SpawnOptions options = Command({"true"});
  options.stdout_path = dir_ + "/missing/out";
  auto pid = Spawn(options);
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(pid.status().message().find(dir_ + "/missing/out"), std::string::npos);
}

TEST_F(SpawnTest, NewSessionMakesTheChildASessionLeader) {
  SpawnOptions options = Command({"sleep", "100"});
  options.new_session = true;
  auto pid = Spawn(options);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(getsid(*pid), *pid);
  EXPECT_EQ(getpgid(*pid), *pid);
  KillAndReap(*pid);
}

TEST_F(SpawnTest, NewProcessGroupMakesTheChildAGroupLeader) {
  SpawnOptions options = Command({"sleep", "100"});
  options.new_process_group = true;
  auto pid = Spawn(options);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(getpgid(*pid), *pid);
  EXPECT_EQ(getsid(*pid), getsid(0));
  KillAndReap(*pid);
}

TEST_F(SpawnTest, IgnoredSignalsAreNotInherited) {
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGINT, &ignore, &previous), 0);
  auto pid = Spawn(Command({"sleep", "100"}));
  sigaction(SIGINT, &previous, nullptr);
  ASSERT_TRUE(pid.ok()) << pid.status();
  kill(*pid, SIGINT);
  auto status = WaitForExitFor(*pid, 10'000);
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_TRUE(status->has_value());
  EXPECT_EQ((*status)->signal, SIGINT);
}

TEST_F(SpawnTest, InheritsOnlyTheGivenDescriptors) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);  // Not CLOEXEC: Spawn must close it unless asked to keep it.
  const std::string write_to_fd = "echo hi >&" + std::to_string(fds[1]);
  SpawnOptions options = Command({"sh", "-c", write_to_fd});
  EXPECT_NE(Run(options).exit_code, 0);
  options.inherit_fds = {fds[1]};
  EXPECT_EQ(Run(options).exit_code, 0);
  close(fds[1]);
  char buffer[16] = {};
  EXPECT_EQ(read(fds[0], buffer, sizeof(buffer)), 3);
  EXPECT_STREQ(buffer, "hi\n");
  close(fds[0]);
  options.inherit_fds = {fds[0]};
  EXPECT_FALSE(Spawn(options).ok());
}

TEST_F(SpawnTest, ParentDeathSignalKillsTheGrandchild) {
  // The test process adopts the orphaned grandchild so that it can wait for it.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  pid_t intermediate = fork();
  ASSERT_GE(intermediate, 0);
  if (intermediate == 0) {
    SpawnOptions options = Command({"sleep", "100"});
    options.parent_death_signal = SIGKILL;
    auto grandchild = Spawn(options);
    pid_t value = grandchild.ok() ? *grandchild : -1;
    if (write(fds[1], &value, sizeof(value)) != sizeof(value)) _exit(1);
    while (true) pause();
  }
  close(fds[1]);
  pid_t grandchild = -1;
  EXPECT_EQ(read(fds[0], &grandchild, sizeof(grandchild)),
            static_cast<ssize_t>(sizeof(grandchild)));
  close(fds[0]);
  KillAndReap(intermediate);
  ASSERT_GT(grandchild, 0);
  auto status = WaitForExitFor(grandchild, 10'000);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_TRUE(status->has_value()) << "grandchild " << grandchild << " survived its parent";
  EXPECT_EQ((*status)->signal, SIGKILL);
}

TEST_F(SpawnTest, SpawnsFromManyThreadsAtOnce) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 25;
  std::atomic<int> succeeded{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        SpawnOptions options = Command({"sh", "-c", "exit $CODE"});
        options.set_env["CODE"] = std::to_string(t);
        options.stdout_path = dir_ + "/out" + std::to_string(t);
        auto pid = Spawn(options);
        if (!pid.ok()) continue;
        auto status = WaitForExit(*pid);
        if (status.ok() && status->exit_code == t) ++succeeded;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(succeeded.load(), kThreads * kPerThread);
}

}  // namespace
}  // namespace tony

namespace tony {
namespace {

// The process's soft limit is raised (a server holding a connection per task), and what it
// starts afterwards sees the limit it would have seen before.
TEST_F(SpawnTest, RaisingTheOpenFileLimitLeavesChildrenTheOneBefore) {
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max < 1024) GTEST_SKIP() << "the hard limit is below 1024";
  struct rlimit low = saved;
  low.rlim_cur = 512;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);

  absl::StatusOr<int64_t> raised = RaiseOpenFileLimit(1000);
  ASSERT_TRUE(raised.ok()) << raised.status();
  EXPECT_EQ(*raised, 1000);
  struct rlimit now {};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(now.rlim_cur, 1000u);
  EXPECT_EQ(now.rlim_max, saved.rlim_max) << "the hard limit stays";
  // Never lowered, and never past the hard limit.
  EXPECT_EQ(*RaiseOpenFileLimit(800), 1000);
  EXPECT_EQ(*RaiseOpenFileLimit(INT64_MAX), static_cast<int64_t>(saved.rlim_max));

  const ExitStatus status = Run(Command({"sh", "-c", "ulimit -Sn"}));
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_EQ(Contents(Out()), "512\n");
  internal::ForgetOpenFileLimitForTesting();
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
}

}  // namespace
}  // namespace tony
