// YarnClient against a real ResourceManager: the mini cluster of scripts/hadoop-minicluster (one
// NodeManager, 8192 MB, 8 vcores, yarn.io/gpu = 4), found through TONY_TEST_HADOOP_CONF_DIR.
// Skipped when that is unset.

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/files.h"
#include "common/strings.h"
#include "gtest/gtest.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/ipc/rpc_codec.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::hadoop {
namespace {

using std::chrono::steady_clock;

constexpr std::chrono::seconds kDeadline{120};
constexpr std::chrono::milliseconds kPollInterval{250};

class YarnItTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("TONY_TEST_HADOOP_CONF_DIR");
    if (dir == nullptr || *dir == '\0') {
      GTEST_SKIP() << "TONY_TEST_HADOOP_CONF_DIR is not set (scripts/hadoop-minicluster start DIR)";
    }
    absl::StatusOr<HadoopConf> conf = HadoopConf::Load({dir});
    ASSERT_TRUE(conf.ok()) << conf.status();
    absl::StatusOr<std::unique_ptr<YarnClient>> client = YarnClient::Connect(*conf, "");
    ASSERT_TRUE(client.ok()) << client.status();
    yarn_ = std::move(*client);
  }

  // Submits an AM running `command` (it never registers with the RM) and returns its id.
  ApplicationId SubmitAm(const std::string& name, const std::string& command, Resource resource) {
    absl::StatusOr<NewApplication> app = yarn_->GetNewApplication();
    EXPECT_TRUE(app.ok()) << app.status();
    if (!app.ok()) return {};
    AppSubmission submission;
    submission.id = app->id;
    submission.name = name;
    submission.tags = {"tony-yarn-it"};
    submission.max_app_attempts = 1;
    submission.am_resource = resource;
    submission.am_container.commands = {command};
    submission.am_container.environment = {{"TONY_YARN_IT", "1"}};
    absl::Status submitted = yarn_->SubmitApplication(submission);
    EXPECT_TRUE(submitted.ok()) << submitted;
    return app->id;
  }

  // Polls the report until `done` holds or kDeadline passes; returns the last report.
  ApplicationReport PollReport(const ApplicationId& id,
                               const std::function<bool(const ApplicationReport&)>& done) {
    ApplicationReport last;
    for (auto deadline = steady_clock::now() + kDeadline; steady_clock::now() < deadline;
         std::this_thread::sleep_for(kPollInterval)) {
      absl::StatusOr<ApplicationReport> report = yarn_->GetApplicationReport(id);
      EXPECT_TRUE(report.ok()) << report.status();
      if (!report.ok()) return last;
      last = *report;
      if (done(last)) return last;
    }
    ADD_FAILURE() << id.ToString() << " still " << ToString(last.state) << " after "
                  << kDeadline.count() << " s; diagnostics: " << last.diagnostics;
    return last;
  }

  // The single node's used resources once `done` holds for them, or after kDeadline.
  Resource PollNodeUsage(const std::function<bool(const Resource&)>& done) {
    Resource used;
    for (auto deadline = steady_clock::now() + kDeadline; steady_clock::now() < deadline;
         std::this_thread::sleep_for(kPollInterval)) {
      absl::StatusOr<std::vector<NodeReport>> nodes = yarn_->GetClusterNodes();
      EXPECT_TRUE(nodes.ok()) << nodes.status();
      if (!nodes.ok() || nodes->size() != 1) return used;
      used = nodes->front().used;
      if (done(used)) return used;
    }
    ADD_FAILURE() << "the node's usage did not reach the expected value";
    return used;
  }

  std::unique_ptr<YarnClient> yarn_;
};

TEST_F(YarnItTest, ClusterMetricsShowOneNodeManager) {
  absl::StatusOr<ClusterMetrics> metrics = yarn_->GetClusterMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->num_node_managers, 1);
  EXPECT_EQ(metrics->num_active, 1);
  EXPECT_EQ(metrics->num_lost, 0);
  EXPECT_EQ(metrics->num_unhealthy, 0);
  EXPECT_EQ(metrics->num_decommissioned, 0);
}

TEST_F(YarnItTest, ClusterNodesListTheRunningNodeWithItsGpus) {
  absl::StatusOr<std::vector<NodeReport>> nodes = yarn_->GetClusterNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 1u);
  const NodeReport& node = nodes->front();
  EXPECT_EQ(node.state, NodeState::kRunning);
  EXPECT_EQ(node.capability.memory_mb, 8192);
  EXPECT_EQ(node.capability.vcores, 8);
  EXPECT_EQ(node.capability.gpus, 4);
  EXPECT_FALSE(node.host.empty());
  EXPECT_GT(node.port, 0);
  EXPECT_EQ(node.node_id, node.host + ":" + std::to_string(node.port));
  EXPECT_FALSE(node.http_address.empty());
  EXPECT_FALSE(node.rack.empty());

  absl::StatusOr<std::vector<NodeReport>> running = yarn_->GetClusterNodes({NodeState::kRunning});
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_EQ(running->size(), 1u);
  absl::StatusOr<std::vector<NodeReport>> lost =
      yarn_->GetClusterNodes({NodeState::kLost, NodeState::kDecommissioned});
  ASSERT_TRUE(lost.ok()) << lost.status();
  EXPECT_TRUE(lost->empty());

  absl::StatusOr<ClusterMetrics> metrics = yarn_->GetClusterMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  std::string table = FormatNodesTable(*metrics, *nodes);
  EXPECT_TRUE(Contains(table, node.node_id)) << table;
  EXPECT_TRUE(Contains(table, "/8192")) << table;
  EXPECT_TRUE(Contains(table, "/4")) << table;
  std::cout << table;
}

TEST_F(YarnItTest, NewApplicationHasAYarnIdAndTheMaximumCapability) {
  absl::StatusOr<NewApplication> first = yarn_->GetNewApplication();
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<NewApplication> second = yarn_->GetNewApplication();
  ASSERT_TRUE(second.ok()) << second.status();
  std::string text = first->id.ToString();
  EXPECT_EQ(text.rfind("application_" + std::to_string(first->id.cluster_timestamp) + "_", 0), 0u)
      << text;
  EXPECT_GT(first->id.cluster_timestamp, 0);
  EXPECT_EQ(ApplicationId::Parse(text).value(), first->id);
  EXPECT_EQ(second->id.cluster_timestamp, first->id.cluster_timestamp);
  EXPECT_GT(second->id.id, first->id.id);
  EXPECT_EQ(first->maximum_capability.memory_mb, 8192);
  EXPECT_EQ(first->maximum_capability.vcores, 8);
  // Without yarn.resource-types.yarn.io/gpu.maximum-allocation the scheduler puts no limit on
  // GPUs (YARN reports Long.MAX_VALUE); the type is there, which is what matters.
  EXPECT_GE(first->maximum_capability.gpus, 4);
}

TEST_F(YarnItTest, AnAmThatNeverRegistersEndsFailedWithYarnsDiagnostics) {
  ApplicationId id = SubmitAm("tony-yarn-it-true", "true", {.memory_mb = 128, .vcores = 1});
  ASSERT_FALSE(HasFailure());

  ApplicationReport report =
      PollReport(id, [](const ApplicationReport& r) { return IsFinal(r.state); });
  std::cout << id.ToString() << ": " << ToString(report.state) << "/"
            << ToString(report.final_status) << "; diagnostics: " << report.diagnostics << "\n";
  EXPECT_EQ(report.id, id);
  EXPECT_EQ(report.name, "tony-yarn-it-true");
  EXPECT_EQ(report.application_type, "TONY");
  // The capacity scheduler of Hadoop 3.4 reports the queue's full path.
  EXPECT_TRUE(report.queue == "default" || report.queue == "root.default") << report.queue;
  EXPECT_EQ(report.tags, std::vector<std::string>{"tony-yarn-it"});
  EXPECT_EQ(report.state, YarnApplicationState::kFailed);
  EXPECT_EQ(report.final_status, FinalApplicationStatus::kFailed);
  EXPECT_GT(report.start_time_ms, 0);
  EXPECT_GE(report.finish_time_ms, report.start_time_ms);
  ASSERT_TRUE(report.current_attempt.has_value());
  EXPECT_EQ(report.current_attempt->application_id, id);
  EXPECT_EQ(report.current_attempt->attempt_id, 1);
  // YARN's own words: the AM container of this attempt exited (with code 0) without
  // registering, so the attempt, and with max attempts 1 the application, failed.
  EXPECT_FALSE(report.diagnostics.empty());
  EXPECT_TRUE(Contains(report.diagnostics, report.current_attempt->ToString()))
      << report.diagnostics;
  EXPECT_TRUE(Contains(report.diagnostics, "exitCode: 0")) << report.diagnostics;
}

// The container sees its local resource, environment and command as tony sent them: the AM
// command exits 7 only if all three arrived, and YARN's diagnostics carry the exit code.
TEST_F(YarnItTest, AmGetsItsLocalResourceEnvironmentAndCommand) {
  char dir_template[] = "/tmp/tony-yarn-it-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string path = StrCat(dir_template, "/greeting.txt");
  ASSERT_TRUE(WriteFile(path, "hello\n").ok());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);

  absl::StatusOr<NewApplication> app = yarn_->GetNewApplication();
  ASSERT_TRUE(app.ok()) << app.status();
  AppSubmission submission;
  submission.id = app->id;
  submission.name = "tony-yarn-it-resources";
  submission.max_app_attempts = 1;
  submission.am_resource = {.memory_mb = 128, .vcores = 1};
  // The NodeManager runs the joined command under bash -c "...": no double quotes in it.
  submission.am_container.commands = {"test $(cat greeting.txt) = hello", "&&",
                                      "test $TONY_YARN_IT = resources", "&& exit 7; exit 9"};
  submission.am_container.environment = {{"TONY_YARN_IT", "resources"}};
  submission.am_container.local_resources["greeting.txt"] = {
      .url = YarnUrl::Parse(StrCat("file://", path)).value(),
      .size = st.st_size,
      .timestamp_ms = int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1'000'000};
  ASSERT_TRUE(yarn_->SubmitApplication(submission).ok());

  ApplicationReport report =
      PollReport(app->id, [](const ApplicationReport& r) { return IsFinal(r.state); });
  EXPECT_EQ(report.state, YarnApplicationState::kFailed);
  EXPECT_TRUE(Contains(report.diagnostics, "exitCode: 7")) << report.diagnostics;
  std::filesystem::remove_all(dir_template);
}

TEST_F(YarnItTest, ForceKillEndsAnAmKilledAndFreesItsGpu) {
  ApplicationId id =
      SubmitAm("tony-yarn-it-sleep", "sleep 600", {.memory_mb = 128, .vcores = 1, .gpus = 1});
  ASSERT_FALSE(HasFailure());

  // The AM container, with the GPU it asked for, is on the node.
  Resource used = PollNodeUsage([](const Resource& r) { return r.gpus == 1; });
  EXPECT_EQ(used.gpus, 1);

  // Listed among the running applications of its type, and only there.
  auto listed = [&](const std::vector<std::string>& types, bool include_final) {
    absl::StatusOr<std::vector<ApplicationReport>> apps =
        yarn_->GetApplications(types, include_final);
    EXPECT_TRUE(apps.ok()) << apps.status();
    std::optional<ApplicationReport> found;
    for (const ApplicationReport& app : apps.ok() ? *apps : std::vector<ApplicationReport>{}) {
      if (app.id == id) found = app;
    }
    return found;
  };
  std::optional<ApplicationReport> running = listed({"TONY"}, false);
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->name, "tony-yarn-it-sleep");
  EXPECT_FALSE(IsFinal(running->state));
  EXPECT_FALSE(listed({"MAPREDUCE"}, true).has_value());

  absl::StatusOr<bool> killed = yarn_->ForceKillApplication(id, "killed by yarn_it_test");
  ASSERT_TRUE(killed.ok()) << killed.status();
  ApplicationReport report =
      PollReport(id, [](const ApplicationReport& r) { return IsFinal(r.state); });
  std::cout << id.ToString() << ": " << ToString(report.state) << "/"
            << ToString(report.final_status) << "; diagnostics: " << report.diagnostics << "\n";
  EXPECT_EQ(report.state, YarnApplicationState::kKilled);
  EXPECT_EQ(report.final_status, FinalApplicationStatus::kKilled);
  EXPECT_TRUE(Contains(report.diagnostics, "killed by yarn_it_test")) << report.diagnostics;
  EXPECT_FALSE(listed({"TONY"}, false).has_value());
  std::optional<ApplicationReport> ended = listed({}, true);
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->state, YarnApplicationState::kKilled);

  // Killing again is accepted and reports the kill complete.
  absl::StatusOr<bool> again = yarn_->ForceKillApplication(id);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(*again);

  used = PollNodeUsage([](const Resource& r) { return r.gpus == 0; });
  EXPECT_EQ(used.gpus, 0);
}

TEST_F(YarnItTest, UnknownApplicationIsAnErrorWithTheJavaClass) {
  absl::StatusOr<NewApplication> app = yarn_->GetNewApplication();
  ASSERT_TRUE(app.ok()) << app.status();
  ApplicationId missing{app->id.cluster_timestamp, app->id.id + 100000};

  absl::StatusOr<ApplicationReport> report = yarn_->GetApplicationReport(missing);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kNotFound) << report.status();
  std::optional<RemoteError> error = GetRemoteError(report.status());
  ASSERT_TRUE(error.has_value()) << report.status();
  EXPECT_EQ(error->class_name, "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException");
  EXPECT_TRUE(Contains(ToStd(report.status().message()), missing.ToString())) << report.status();

  absl::StatusOr<bool> killed = yarn_->ForceKillApplication(missing);
  ASSERT_FALSE(killed.ok());
  error = GetRemoteError(killed.status());
  ASSERT_TRUE(error.has_value()) << killed.status();
  EXPECT_EQ(error->class_name, "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException");
}

}  // namespace
}  // namespace tony::hadoop
