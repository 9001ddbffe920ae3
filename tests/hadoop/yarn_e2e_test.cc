// The same jobs as tests/e2e on the YARN backend, against the real mini cluster: the tony binary
// as client, AM and executors, files staged on HDFS, containers from the real ResourceManager.
// Each case checks tony's result against what the ResourceManager itself reports.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "e2e/tony_runner.h"
#include "hadoop/hadoop_conf.h"
#include "hadoop/yarn_client.h"

namespace tony::testing {
namespace {

namespace fs = std::filesystem;

class YarnE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("TONY_TEST_HADOOP_CONF_DIR");
    if (dir == nullptr) GTEST_SKIP() << "TONY_TEST_HADOOP_CONF_DIR is not set (no mini cluster)";
    conf_dir_ = dir;
  }
  void TearDown() override {
    if (conf_dir_.empty()) return;
    EXPECT_TRUE(runner_.LeftoverProcesses().empty()) << "processes of the job outlived it";
  }

  std::vector<std::string> Submit(const std::vector<std::string>& conf,
                                  const std::string& command = "") {
    std::vector<std::string> args = {"submit",
                                     "--backend",
                                     "yarn",
                                     "--src_dir",
                                     TonyRunner::SourcePath("tests/e2e/scripts"),
                                     "--conf",
                                     "tony.am.memory=256m",
                                     "--conf",
                                     "tony.task.stop-grace-ms=1000"};
    if (!command.empty()) {
      args.push_back("--conf");
      args.push_back("tony.containers.command=" + command);
    }
    for (const std::string& c : conf) {
      args.push_back("--conf");
      args.push_back(c);
    }
    return args;
  }
  std::map<std::string, std::string> Env() const { return {{"HADOOP_CONF_DIR", conf_dir_}}; }
  TonyResult Run(const std::vector<std::string>& args) { return runner_.Run(args, 180000, Env()); }

  // What the ResourceManager says of the application.
  hadoop::ApplicationReport RmReport(const std::string& app_id) {
    absl::StatusOr<hadoop::HadoopConf> conf = hadoop::HadoopConf::Load({conf_dir_});
    EXPECT_TRUE(conf.ok());
    absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> yarn =
        hadoop::YarnClient::Connect(*conf, "");
    EXPECT_TRUE(yarn.ok()) << yarn.status();
    absl::StatusOr<hadoop::ApplicationId> id = hadoop::ApplicationId::Parse(app_id);
    EXPECT_TRUE(id.ok()) << app_id;
    absl::StatusOr<hadoop::ApplicationReport> report = (*yarn)->GetApplicationReport(*id);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : hadoop::ApplicationReport{};
  }
  // The stdout of every container of the application, from the NodeManager's log directories.
  std::string ContainerStdout(const std::string& app_id) {
    std::string out;
    std::error_code ec;
    for (const auto& entry : fs::recursive_directory_iterator(conf_dir_ + "/data", ec)) {
      const std::string path = entry.path().string();
      if (entry.path().filename() == "stdout" && path.find(app_id) != std::string::npos) {
        std::ifstream in(path);
        out += std::string(std::istreambuf_iterator<char>(in), {});
      }
    }
    return out;
  }
  static bool TaskRow(const std::string& out, const std::string& task, const std::string& state) {
    return std::regex_search(out, std::regex("(^|\\n)" + task + " +" + state + " "));
  }
  static std::string Describe(const TonyResult& r) {
    return "exit " + std::to_string(r.exit_code) + "\n" + r.out + r.err;
  }

  std::string conf_dir_;
  TonyRunner runner_;
};

TEST_F(YarnE2eTest, PyTorchDigitsTrainsWithTwoWorkers) {
  TonyResult r = Run({"submit", "--backend", "yarn", "--src_dir",
                      TonyRunner::SourcePath("examples/pytorch-digits"), "--executes", "train.py",
                      "--python_binary_path", "/usr/bin/python3", "--conf_file",
                      TonyRunner::SourcePath("examples/pytorch-digits/tony.xml"), "--conf",
                      "tony.am.memory=256m"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(RmReport(r.app_id).final_status, hadoop::FinalApplicationStatus::kSucceeded);
  std::smatch match;
  const std::string out = ContainerStdout(r.app_id);
  ASSERT_TRUE(std::regex_search(out, match, std::regex(R"(test accuracy: ([0-9.]+))"))) << out;
  EXPECT_GT(std::stod(match[1].str()), 0.9);
}

TEST_F(YarnE2eTest, TensorFlowClusterSpecAndTfConfigAgree) {
  TonyResult r =
      Run(Submit({"tony.application.framework=tensorflow", "tony.chief.instances=1",
                  "tony.worker.instances=2", "tony.ps.instances=1", "tony.evaluator.instances=1",
                  "tony.application.untracked.jobtypes=", "tony.chief.memory=256m",
                  "tony.worker.memory=256m", "tony.ps.memory=256m", "tony.evaluator.memory=256m"},
                 "/usr/bin/python3 check_tf_env.py --untracked="));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string out = ContainerStdout(r.app_id);
  for (const char* task : {"chief:0", "worker:0", "worker:1", "ps:0", "evaluator:0"}) {
    EXPECT_NE(out.find(std::string("ok ") + task), std::string::npos) << task << out;
  }
}

TEST_F(YarnE2eTest, FailedWorkerWithFailOnWorkerFailureFailsTheApplication) {
  TonyResult r = Run(Submit({"tony.worker.instances=2", "tony.worker.memory=256m",
                             "tony.application.fail-on-worker-failure-enabled=true"},
                            "/usr/bin/python3 exit_with.py 3 --only worker:1"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("task worker:1 failed (exit code 3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failing on purpose with exit code 3"), std::string::npos) << r.out;
  hadoop::ApplicationReport report = RmReport(r.app_id);
  EXPECT_EQ(report.final_status, hadoop::FinalApplicationStatus::kFailed);
  EXPECT_NE(report.diagnostics.find("worker:1"), std::string::npos) << report.diagnostics;
}

TEST_F(YarnE2eTest, FailingChiefFailsTheApplication) {
  TonyResult r = Run(Submit({"tony.chief.instances=1", "tony.worker.instances=1",
                             "tony.chief.memory=256m", "tony.worker.memory=256m"},
                            "if [ $JOB_NAME = chief ]; then exit 7; fi; "
                            "exec /usr/bin/python3 sleep_forever.py"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("chief chief:0 failed (exit code 7)"), std::string::npos) << r.out;
  EXPECT_EQ(RmReport(r.app_id).final_status, hadoop::FinalApplicationStatus::kFailed);
}

TEST_F(YarnE2eTest, UntrackedPsIsStoppedWhenTheWorkersFinish) {
  TonyResult r = Run(Submit({"tony.worker.instances=2", "tony.ps.instances=1",
                             "tony.worker.memory=256m", "tony.ps.memory=256m"},
                            "if [ $JOB_NAME = ps ]; then exec /usr/bin/python3 sleep_forever.py; "
                            "fi; echo done"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(TaskRow(r.out, "ps:0", "STOPPED")) << r.out;
  EXPECT_EQ(RmReport(r.app_id).final_status, hadoop::FinalApplicationStatus::kSucceeded);
}

TEST_F(YarnE2eTest, GpuRequestIsGrantedFromTheClustersGpuCount) {
  TonyResult r =
      Run(Submit({"tony.worker.instances=2", "tony.worker.memory=256m", "tony.worker.gpus=2"},
                 "echo gpu task $TASK_INDEX"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(ContainerStdout(r.app_id).find("gpu task 1"), std::string::npos);
}

TEST_F(YarnE2eTest, RequestLargerThanTheClusterIsBadInputAndNothingIsSubmitted) {
  TonyResult r = Run(Submit({"tony.worker.instances=1", "tony.worker.memory=64g"}, "true"));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(r.app_id.empty()) << r.out;
  EXPECT_NE(r.err.find("job type worker asks for 65536 MB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("8192 MB"), std::string::npos) << r.err;
}

TEST_F(YarnE2eTest, InterruptKillsTheApplication) {
  pid_t tony = runner_.Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                                    "/usr/bin/python3 sleep_forever.py"),
                             Env());
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(runner_.WaitForOutput("2 running", 120000));
  kill(tony, SIGINT);
  TonyResult r = runner_.Wait(tony, 120000);
  ASSERT_EQ(r.exit_code, 130) << Describe(r);
  EXPECT_NE(r.out.find("KILLED"), std::string::npos) << r.out;
  hadoop::ApplicationReport report = RmReport(r.app_id);
  EXPECT_EQ(report.final_status, hadoop::FinalApplicationStatus::kKilled);
  EXPECT_TRUE(hadoop::IsFinal(report.state));
  // No container of the job is left on the NodeManager (a bounded wait for its next heartbeat).
  absl::StatusOr<hadoop::HadoopConf> conf = hadoop::HadoopConf::Load({conf_dir_});
  absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> yarn = hadoop::YarnClient::Connect(*conf, "");
  ASSERT_TRUE(yarn.ok());
  int containers = -1;
  for (int i = 0; i < 200 && containers != 0; ++i) {
    absl::StatusOr<std::vector<hadoop::NodeReport>> nodes = (*yarn)->GetClusterNodes({});
    ASSERT_TRUE(nodes.ok());
    containers = 0;
    for (const hadoop::NodeReport& node : *nodes) containers += node.num_containers;
    if (containers != 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(containers, 0) << "containers of the killed application are still running";
}

// The pids of the job's processes on this machine whose command line starts with `prefix` and
// whose environment has every pair of `env` (YARN containers carry TONY_APP_ID).
std::vector<pid_t> JobProcesses(const std::string& app_id, const std::string& prefix,
                                const std::map<std::string, std::string>& env) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream environ_file(entry.path() / "environ");
    std::string environ((std::istreambuf_iterator<char>(environ_file)), {});
    std::ifstream cmdline_file(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(cmdline_file)), {});
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    auto has = [&](const std::string& pair) {
      return environ.find(std::string(1, '\0') + pair + '\0') != std::string::npos ||
             environ.starts_with(pair + '\0');
    };
    bool match = cmdline.starts_with(prefix) && has("TONY_APP_ID=" + app_id);
    for (const auto& [key, value] : env) match = match && has(key + "=" + value);
    if (match) found.push_back(std::stoi(name));
  }
  return found;
}

// Waits for the application id in tony's output, then for one matching process.
pid_t WaitForJobProcess(TonyRunner& runner, const std::string& prefix,
                        const std::map<std::string, std::string>& env, std::string* app_id) {
  if (!runner.WaitForOutput("running", 120000)) return -1;
  const std::string text = runner.CurrentOutput();
  std::smatch match;
  if (!std::regex_search(text, match, std::regex(R"(submitted (application_\d+_\d+))"))) return -1;
  *app_id = match[1].str();
  for (int i = 0; i < 600; ++i) {
    std::vector<pid_t> pids = JobProcesses(*app_id, prefix, env);
    if (!pids.empty()) return pids[0];
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

TEST_F(YarnE2eTest, KillMinusNineOfAWorkersUserProcessFailsTheApplication) {
  pid_t tony = runner_.Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m",
                                     "tony.application.fail-on-worker-failure-enabled=true"},
                                    "/usr/bin/python3 sleep_forever.py"),
                             Env());
  std::string app_id;
  pid_t user = WaitForJobProcess(runner_, "/usr/bin/python3 sleep_forever.py",
                                 {{"JOB_NAME", "worker"}, {"TASK_INDEX", "1"}}, &app_id);
  ASSERT_GT(user, 0);
  kill(user, SIGKILL);
  TonyResult r = runner_.Wait(tony, 120000);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("task worker:1 failed (killed by signal 9)"), std::string::npos) << r.out;
  EXPECT_EQ(RmReport(app_id).final_status, hadoop::FinalApplicationStatus::kFailed);
  EXPECT_TRUE(JobProcesses(app_id, "", {}).empty()) << "a process of the job survived";
}

TEST_F(YarnE2eTest, KillMinusNineOfTheAmFailsTheApplicationAndLeavesNoTask) {
  pid_t tony = runner_.Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                                    "/usr/bin/python3 sleep_forever.py"),
                             Env());
  std::string app_id;
  ASSERT_GT(WaitForJobProcess(runner_, "/usr/bin/python3 sleep_forever.py",
                              {{"JOB_NAME", "worker"}, {"TASK_INDEX", "1"}}, &app_id),
            0);
  std::vector<pid_t> am = JobProcesses(app_id, "./tony am", {});
  ASSERT_EQ(am.size(), 1u);
  kill(am[0], SIGKILL);
  TonyResult r = runner_.Wait(tony, 120000);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  hadoop::ApplicationReport report = RmReport(app_id);
  EXPECT_EQ(report.final_status, hadoop::FinalApplicationStatus::kFailed) << report.diagnostics;
  // YARN ends the application's containers when its only AM attempt is gone.
  std::vector<pid_t> left;
  for (int i = 0; i < 300; ++i) {
    left = JobProcesses(app_id, "", {});
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(left.empty()) << left.size() << " processes of the job survived the AM";
}

TEST_F(YarnE2eTest, WorkerThatFailsOnceGetsANewContainerAndTheJobSucceeds) {
  TonyResult r = Run(Submit({"tony.worker.instances=2", "tony.worker.memory=256m",
                             "tony.worker.max-restarts=1", "tony.worker.restart-backoff-ms=0"},
                            "if [ $TASK_INDEX = 1 ] && [ $ATTEMPT_NUMBER = 0 ]; then exit 3; fi; "
                            "echo attempt $ATTEMPT_NUMBER of $JOB_NAME:$TASK_INDEX"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("worker:1 attempt 0 failed with exit code 3 and was restarted"),
            std::string::npos)
      << r.out;
  EXPECT_NE(ContainerStdout(r.app_id).find("attempt 1 of worker:1"), std::string::npos);
  EXPECT_EQ(RmReport(r.app_id).final_status, hadoop::FinalApplicationStatus::kSucceeded);
}

TEST_F(YarnE2eTest, GangThatTheClusterCannotGrantFailsAtTheAllocationTimeout) {
  // Each container fits the 8 GB NodeManager, but the three together do not: the gang can never
  // be complete, and the allocation timeout must end the job, naming what is missing.
  TonyResult r = Run(Submit({"tony.worker.instances=3", "tony.worker.memory=3g",
                             "tony.container.allocation.timeout=3000"},
                            "/usr/bin/python3 sleep_forever.py"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("not every task registered within 3000 ms "
                       "(tony.container.allocation.timeout); missing: worker:2 (no container)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(RmReport(r.app_id).final_status, hadoop::FinalApplicationStatus::kFailed);
}

}  // namespace
}  // namespace tony::testing
