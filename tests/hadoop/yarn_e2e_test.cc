// Cases only the YARN backend has, against the real mini cluster (the cases shared with the local
// backend are in tests/e2e/backend_e2e_test.cc): GPUs from the cluster's count, a request larger
// than the cluster, a gang the cluster cannot grant.

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

TEST_F(YarnE2eTest, GangLargerThanTheWholeClusterIsBadInput) {
  // Each container fits the 8 GB NodeManager, but the three (and the AM) never fit together.
  TonyResult r = Run(Submit({"tony.worker.instances=3", "tony.worker.memory=3g"}, "true"));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(r.app_id.empty()) << r.out;
  EXPECT_NE(r.err.find("need 9472 MB, 4 vcores and 0 GPUs at once, but the cluster's running "
                       "NodeManagers have 8192 MB"),
            std::string::npos)
      << r.err;
}

TEST_F(YarnE2eTest, GangTheBusyClusterCannotGrantFailsAtTheAllocationTimeout) {
  // A first job holds 6 GB of the 8 GB; the second job's gang (2 x 3 GB) fits the cluster but
  // cannot be granted while the first runs, and the allocation timeout must end it, naming what
  // is missing.
  TonyRunner blocker_runner;
  pid_t blocker = blocker_runner.Start(Submit({"tony.worker.instances=2", "tony.worker.memory=3g"},
                                              "/usr/bin/python3 sleep_forever.py"),
                                       Env());
  ASSERT_TRUE(blocker_runner.WaitForOutput("2 running", 120000));
  TonyResult r = Run(Submit({"tony.worker.instances=2", "tony.worker.memory=3g",
                             "tony.container.allocation.timeout=3000"},
                            "/usr/bin/python3 sleep_forever.py"));
  kill(blocker, SIGINT);
  TonyResult blocked = blocker_runner.Wait(blocker, 120000);
  EXPECT_EQ(blocked.exit_code, 130) << Describe(blocked);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(std::regex_search(
      r.out,
      std::regex(
          R"(not every task registered within 3000 ms \(tony\.container\.allocation\.timeout\); missing: worker:[01] \(no container\))")))
      << r.out;
  EXPECT_EQ(RmReport(r.app_id).final_status, hadoop::FinalApplicationStatus::kFailed);
}

}  // namespace
}  // namespace tony::testing
