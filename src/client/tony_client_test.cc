// The client against a backend that never starts the AM (a fake ClusterClient: a unit test of the
// client's own rule; the end-to-end suites use the real backends).

#include "client/tony_client.h"

#include <stdlib.h>

#include <filesystem>
#include <sstream>

#include "config/config_loader.h"
#include "config/job_spec.h"
#include "config/key_catalog.h"
#include "gtest/gtest.h"

namespace tony::client {
namespace {

namespace fs = std::filesystem;

// An application that stays queued (ACCEPTED on YARN): its AM never listens.
class QueuedForeverCluster final : public cluster::ClusterClient {
 public:
  explicit QueuedForeverCluster(std::string root) : root_(std::move(root)) {}
  absl::StatusOr<std::string> NewApplicationId() override { return "application_1_0001"; }
  std::string JobDir(const std::string& app_id) const override { return root_ + "/jobs/" + app_id; }
  absl::Status Submit(const cluster::AmSubmission&) override {
    submitted_ = true;
    return absl::OkStatus();
  }
  absl::StatusOr<cluster::AppReport> GetReport(const std::string& app_id) override {
    ++reports_;
    cluster::AppReport report;
    report.app_id = app_id;
    report.state = killed_ ? cluster::AppState::kKilled : cluster::AppState::kSubmitted;
    return report;
  }
  absl::Status Kill(const std::string&, bool force) override {
    killed_ = true;
    forced_ = force;
    return absl::OkStatus();
  }
  absl::Status AwaitAmExit(const std::string&, int64_t) override { return absl::OkStatus(); }
  absl::StatusOr<cluster::RemoteFileInfo> StatRemote(const std::string&) override {
    return cluster::RemoteFileInfo{};
  }
  absl::StatusOr<std::vector<cluster::AppReport>> ListApplications(const std::string&,
                                                                   bool) override {
    return std::vector<cluster::AppReport>{};
  }

  const std::string root_;
  bool submitted_ = false;
  bool killed_ = false;
  bool forced_ = false;
  int reports_ = 0;
};

// TonY's testTonyAMStartupTimeoutShouldFail: an AM that does not start within
// tony.am.startup-timeout fails the job, and the application is killed.
TEST(TonyClientTest, AnAmThatDoesNotStartInTimeFailsTheJobAndIsKilled) {
  char pattern[] = "/tmp/tony-client-test-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  config::ResolvedConfig resolved;
  resolved.conf = config::KeyCatalog::BuiltIn().Defaults();
  for (auto [key, value] : {std::pair{"tony.containers.command", "true"},
                            std::pair{"tony.am.startup-timeout", "300"}}) {
    resolved.conf.Set(key, value, config::ValueSource::ConfFlag());
  }
  absl::StatusOr<config::JobSpec> spec = config::BuildJobSpec(resolved.conf);
  ASSERT_TRUE(spec.ok()) << spec.status();
  QueuedForeverCluster cluster(pattern);
  std::ostringstream out, err;
  BlockInterruptSignals();
  TonyClient client(&cluster, out, err);
  const int code = client.Submit(resolved, *spec, {pattern, "/bin/true"});
  EXPECT_EQ(code, kExitJobFailed) << out.str() << err.str();
  EXPECT_TRUE(cluster.submitted_);
  EXPECT_TRUE(cluster.killed_);
  EXPECT_TRUE(cluster.forced_);
  EXPECT_GT(cluster.reports_, 1) << "the client asked for the AM more than once";
  EXPECT_NE(out.str().find("the AM did not start within 300 ms (tony.am.startup-timeout)"),
            std::string::npos)
      << out.str() << err.str();
  fs::remove_all(pattern);
}

}  // namespace
}  // namespace tony::client
