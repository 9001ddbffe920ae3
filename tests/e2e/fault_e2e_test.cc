// Failures on the local backend, injected into real processes: every one must be noticed fast,
// decided by TonY's rules, named in the summary, and leave no process behind.

#include <gtest/gtest.h>
#include <signal.h>

#include <regex>

#include "e2e/tony_runner.h"

namespace tony::testing {
namespace {

class FaultE2eTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_TRUE(runner_.LeftoverProcesses().empty()) << "processes of the job outlived it";
  }
  // A job whose tasks run sleep_forever.py; `conf` adds keys.
  pid_t StartForever(const std::vector<std::string>& conf) {
    std::vector<std::string> args = {"submit",
                                     "--src_dir",
                                     TonyRunner::SourcePath("tests/e2e/scripts"),
                                     "--executes",
                                     "/usr/bin/python3 sleep_forever.py",
                                     "--conf",
                                     "tony.local.vcores=16",
                                     "--conf",
                                     "tony.task.stop-grace-ms=1000",
                                     "--conf",
                                     "tony.worker.memory=256m",
                                     "--conf",
                                     "tony.ps.memory=256m",
                                     "--conf",
                                     "tony.chief.memory=256m"};
    for (const std::string& c : conf) {
      args.push_back("--conf");
      args.push_back(c);
    }
    return runner_.Start(args);
  }
  // The pid of a task's user process, once it runs.
  pid_t UserProcess(const std::string& type, int index) {
    std::vector<pid_t> pids =
        runner_.FindJobProcesses("/usr/bin/python3 sleep_forever.py",
                                 {{"JOB_NAME", type}, {"TASK_INDEX", std::to_string(index)}});
    EXPECT_EQ(pids.size(), 1u);
    return pids.empty() ? -1 : pids[0];
  }
  pid_t Executor(const std::string& type, int index) {
    std::vector<pid_t> pids = runner_.FindJobProcesses(
        "\\S*tony executor",
        {{"TONY_TASK_TYPE", type}, {"TONY_TASK_INDEX", std::to_string(index)}});
    EXPECT_EQ(pids.size(), 1u);
    return pids.empty() ? -1 : pids[0];
  }
  static bool TaskRow(const std::string& out, const std::string& task, const std::string& state,
                      const std::string& exit_code) {
    return std::regex_search(
        out, std::regex("(^|\\n)" + task + " +" + state + " +\\S+ +" + exit_code + " "));
  }

  TonyRunner runner_;
};

std::string Describe(const TonyResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

TEST_F(FaultE2eTest, KillMinusNineOfAWorkersExecutor) {
  pid_t tony = StartForever(
      {"tony.worker.instances=2", "tony.application.fail-on-worker-failure-enabled=true"});
  ASSERT_GT(UserProcess("worker", 1), 0);
  pid_t executor = Executor("worker", 1);
  ASSERT_GT(executor, 0);
  kill(executor, SIGKILL);
  TonyResult r = runner_.Wait(tony, 60000);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("task worker:1 failed (killed by signal 9)"), std::string::npos) << r.out;
}

TEST_F(FaultE2eTest, KillMinusNineOfThePsFailsTheJob) {
  pid_t tony = StartForever({"tony.worker.instances=1", "tony.ps.instances=1"});
  pid_t ps = UserProcess("ps", 0);
  ASSERT_GT(ps, 0);
  ASSERT_GT(UserProcess("worker", 0), 0);
  kill(ps, SIGKILL);
  TonyResult r = runner_.Wait(tony, 60000);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("ps is in tony.application.stop-on-failure-jobtypes"), std::string::npos)
      << r.out;
}

TEST_F(FaultE2eTest, KillMinusNineOfTheChiefFailsTheJob) {
  pid_t tony = StartForever({"tony.chief.instances=1", "tony.worker.instances=1"});
  pid_t chief = UserProcess("chief", 0);
  ASSERT_GT(chief, 0);
  kill(chief, SIGKILL);
  TonyResult r = runner_.Wait(tony, 60000);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("chief chief:0 failed (killed by signal 9)"), std::string::npos) << r.out;
}

TEST_F(FaultE2eTest, UserProcessThatIgnoresSigtermIsKilledAfterTheGracePeriod) {
  std::vector<std::string> args = {
      "submit",
      "--conf",
      "tony.worker.instances=1",
      "--conf",
      "tony.worker.memory=256m",
      "--conf",
      "tony.task.stop-grace-ms=500",
      "--conf",
      "tony.containers.command=trap '' TERM; echo ignoring; while true; do sleep 1; done"};
  pid_t tony = runner_.Start(args);
  // Only once the shell runs its loop does it ignore SIGTERM.
  ASSERT_TRUE(runner_.WaitForTaskOutput("ignoring", 30000));
  kill(tony, SIGINT);
  TonyResult r = runner_.Wait(tony, 60000);
  ASSERT_EQ(r.exit_code, 130) << Describe(r);
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "STOPPED", "137")) << r.out;
}

TEST_F(FaultE2eTest, ExecutionTimeoutStopsTheTask) {
  pid_t tony =
      StartForever({"tony.worker.instances=1", "tony.task.executor.execution-timeout-ms=300"});
  TonyResult r = runner_.Wait(tony, 60000);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("it ran longer than tony.task.executor.execution-timeout-ms = 300"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace tony::testing
