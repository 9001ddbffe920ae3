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
