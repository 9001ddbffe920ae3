// The AM-side protocols against a real YARN: the mini cluster of scripts/hadoop-minicluster, found
// through TONY_TEST_HADOOP_CONF_DIR (skipped when unset). Each test submits the helper AM
// (am_protocols_it_am, built next to this test; the containers run on this machine) with
// YarnClient and reads the outcome the AM reported when it unregistered.

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "common/strings.h"
#include "gtest/gtest.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/yarn/yarn_client.h"

#ifndef AM_PROTOCOLS_IT_AM
#error "AM_PROTOCOLS_IT_AM must name the helper AM binary"
#endif

namespace tony::hadoop {
namespace {

using std::chrono::steady_clock;

constexpr std::chrono::seconds kDeadline{180};
constexpr std::chrono::milliseconds kPollInterval{250};

class AmProtocolsItTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("TONY_TEST_HADOOP_CONF_DIR");
    if (dir == nullptr || *dir == '\0') {
      GTEST_SKIP() << "TONY_TEST_HADOOP_CONF_DIR is not set (scripts/hadoop-minicluster start DIR)";
    }
    conf_dir_ = dir;
    absl::StatusOr<HadoopConf> conf = HadoopConf::Load({conf_dir_});
    ASSERT_TRUE(conf.ok()) << conf.status();
    absl::StatusOr<std::unique_ptr<YarnClient>> client = YarnClient::Connect(*conf, "");
    ASSERT_TRUE(client.ok()) << client.status();
    yarn_ = std::move(*client);
  }

  // Submits the helper AM in `mode` and waits for the application's final report.
  ApplicationReport RunAm(const std::string& mode) {
    absl::StatusOr<NewApplication> app = yarn_->GetNewApplication();
    EXPECT_TRUE(app.ok()) << app.status();
    if (!app.ok()) return {};
    AppSubmission submission;
    submission.id = app->id;
    submission.name = StrCat("tony-am-protocols-it-", mode);
    submission.tags = {"tony-am-protocols-it"};
    submission.max_app_attempts = 1;
    submission.am_resource = {.memory_mb = 256, .vcores = 1};
    submission.am_container.commands = {AM_PROTOCOLS_IT_AM,   "--conf-dir",        conf_dir_, mode,
                                        "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr"};
    absl::Status submitted = yarn_->SubmitApplication(submission);
    EXPECT_TRUE(submitted.ok()) << submitted;
    if (!submitted.ok()) return {};

    ApplicationReport last;
    for (auto deadline = steady_clock::now() + kDeadline; steady_clock::now() < deadline;
         std::this_thread::sleep_for(kPollInterval)) {
      absl::StatusOr<ApplicationReport> report = yarn_->GetApplicationReport(app->id);
      EXPECT_TRUE(report.ok()) << report.status();
      if (!report.ok()) return last;
      last = *report;
      if (IsFinal(last.state)) break;
    }
    EXPECT_TRUE(IsFinal(last.state)) << app->id.ToString() << " still " << ToString(last.state)
                                     << " after " << kDeadline.count() << " s";
    std::cout << app->id.ToString() << ": " << ToString(last.state) << "/"
              << ToString(last.final_status) << "; diagnostics: " << last.diagnostics << "\n";
    return last;
  }

  // The stderr files the containers of `id` left under the cluster's log directories.
  std::string ContainerLogs(const ApplicationId& id) const {
    std::string out;
    std::error_code ec;
    std::filesystem::recursive_directory_iterator it(std::filesystem::path(conf_dir_) / "data", ec);
    for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      const std::filesystem::path& path = it->path();
      if (path.filename() != "stderr" || !Contains(path.string(), id.ToString())) continue;
      std::ifstream file(path);
      std::stringstream text;
      text << file.rdbuf();
      out += StrCat("--- ", path.string(), "\n", text.str());
    }
    return out;
  }

  std::string conf_dir_;
  std::unique_ptr<YarnClient> yarn_;
};

// The AM registers with its AMRMToken, gets a container, starts `exit 3` in it on the NodeManager
// with the NMToken and container token (a second start is refused for that container), sees the
// completion with exit status 3 in a heartbeat, and unregisters with its own final status and
// diagnostics.
TEST_F(AmProtocolsItTest, AmRunsAChildContainerAndSeesItsExitStatus) {
  ApplicationReport report = RunAm("child");
  EXPECT_EQ(report.state, YarnApplicationState::kFinished);
  EXPECT_EQ(report.final_status, FinalApplicationStatus::kSucceeded);
  EXPECT_TRUE(Contains(report.diagnostics, "child exited 3")) << report.diagnostics;
  // A second start of the same container failed for that container, with the NM's Java class.
  EXPECT_TRUE(Contains(report.diagnostics, "a second start was refused with org.apache.hadoop"))
      << report.diagnostics;
  EXPECT_NE(report.host, "N/A");  // the AM registered with its host
  if (HasFailure()) std::cout << ContainerLogs(report.id);
}

// The AM sees its running child through the NodeManager (getContainerStatuses), stops it there
// (stopContainers), and the RM reports the child killed by the AM (exit status -105).
TEST_F(AmProtocolsItTest, AmStopsARunningChildThroughTheNodeManager) {
  ApplicationReport report = RunAm("stop");
  EXPECT_EQ(report.state, YarnApplicationState::kFinished);
  EXPECT_EQ(report.final_status, FinalApplicationStatus::kSucceeded);
  EXPECT_TRUE(Contains(report.diagnostics, "child was RUNNING, stopped, exit -105"))
      << report.diagnostics;
  if (HasFailure()) std::cout << ContainerLogs(report.id);
}

// An ask above the scheduler's maximum capability is refused by the RM with
// InvalidResourceRequestException, which AmRmClient reports as kInvalidArgument with the class.
TEST_F(AmProtocolsItTest, AnAskAboveTheMaximumCapabilityIsAClearError) {
  ApplicationReport report = RunAm("oversized");
  EXPECT_EQ(report.state, YarnApplicationState::kFinished);
  EXPECT_EQ(report.final_status, FinalApplicationStatus::kSucceeded);
  EXPECT_TRUE(Contains(report.diagnostics, "oversized ask rejected")) << report.diagnostics;
  EXPECT_TRUE(Contains(report.diagnostics,
                       "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException"))
      << report.diagnostics;
  EXPECT_TRUE(Contains(report.diagnostics, "maximum")) << report.diagnostics;
  if (HasFailure()) std::cout << ContainerLogs(report.id);
}

}  // namespace
}  // namespace tony::hadoop
