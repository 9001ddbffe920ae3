#pragma once
// The fixture of the YARN-only end-to-end cases (yarn_e2e_test.cc, yarn_hdfs_e2e_test.cc): the
// mini cluster from TONY_TEST_HADOOP_CONF_DIR, a TonyRunner, and, after each case, no process of
// the job left behind.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "common/archive.h"
#include "e2e/tony_runner.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/test_cluster.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::testing {

class YarnE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = TestCluster::FromEnvironment();
    if (!cluster_) GTEST_SKIP() << "TONY_TEST_HADOOP_CONF_DIR is not set (no mini cluster)";
    conf_dir_ = cluster_->conf_dir();
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
    std::vector<std::string> all = conf;
    for (const std::string& c : cluster_->SubmitConf()) all.push_back(c);
    for (const std::string& c : all) {
      args.push_back("--conf");
      args.push_back(c);
    }
    return args;
  }
  std::map<std::string, std::string> Env() const {
    return cluster_->ProcessEnv(runner_.work_dir());
  }
  TonyResult Run(const std::vector<std::string>& args) { return runner_.Run(args, 180000, Env()); }

  // What the ResourceManager says of the application.
  hadoop::ApplicationReport RmReport(const std::string& app_id) {
    absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> yarn = cluster_->Yarn();
    EXPECT_TRUE(yarn.ok()) << yarn.status();
    absl::StatusOr<hadoop::ApplicationId> id = hadoop::ApplicationId::Parse(app_id);
    EXPECT_TRUE(id.ok()) << app_id;
    absl::StatusOr<hadoop::ApplicationReport> report = (*yarn)->GetApplicationReport(*id);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : hadoop::ApplicationReport{};
  }
  // The stdout of every container of the application, from the NodeManager's log directories.
  std::string ContainerStdout(const std::string& app_id) {
    return TonyRunner::ReadFilesBelow(conf_dir_ + "/data", "stdout", app_id);
  }
  static bool TaskRow(const std::string& out, const std::string& task, const std::string& state) {
    return std::regex_search(out, std::regex("(^|\\n)" + task + " +" + state + " "));
  }
  static std::string Describe(const TonyResult& r) {
    return "exit " + std::to_string(r.exit_code) + "\n" + r.out + r.err;
  }

  hadoop::WebHdfsClient Hdfs() const {
    absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster_->Hdfs();
    EXPECT_TRUE(hdfs.ok()) << hdfs.status();
    return *std::move(hdfs);
  }
  // A directory of this test's own under the user's HDFS home.
  std::string UserDir(const std::string& name) const {
    return "/user/" + cluster_->user() + "/" + name + "-" +
           std::filesystem::path(runner_.work_dir()).filename().string();
  }

  std::string conf_dir_;
  std::optional<TestCluster> cluster_;
  TonyRunner runner_;
};

}  // namespace tony::testing
