// The client against a backend that never starts the AM (a fake ClusterClient: a unit test of the
// client's own rule; the end-to-end suites use the real backends).

#include "client/tony_client.h"

#include <stdlib.h>

#include <filesystem>
#include <sstream>
#include <utility>
#include <vector>

#include "client/scripted_cluster.h"
#include "config/config_loader.h"
#include "config/job_spec.h"
#include "config/key_catalog.h"
#include "gtest/gtest.h"

namespace tony::client {
namespace {

namespace fs = std::filesystem;

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
  // An application that stays queued (ACCEPTED on YARN): its AM never listens.
  ScriptedCluster cluster(pattern);
  std::ostringstream out, err;
  BlockInterruptSignals();
  TonyClient client(&cluster, out, err);
  const int code = client.Submit(resolved, *spec, {pattern, "/bin/true"});
  EXPECT_EQ(code, kExitJobFailed) << out.str() << err.str();
  EXPECT_TRUE(cluster.submitted);
  ASSERT_FALSE(cluster.kills.empty());
  EXPECT_TRUE(cluster.kills.front()) << "the application was killed by force";
  EXPECT_GT(cluster.report_calls, 1) << "the client asked for the AM more than once";
  EXPECT_NE(out.str().find("the AM did not start within 300 ms (tony.am.startup-timeout)"),
            std::string::npos)
      << out.str() << err.str();
  fs::remove_all(pattern);
}

// A submission the cluster refuses, at the output directory or at the AM's submission, exits by
// one rule: 2 where the user can fix it or nothing could take the job, 1 otherwise. Nothing is
// submitted after a refused output directory, and the job directory staged for it goes.
TEST(TonyClientTest, ARefusedSubmissionExitsByOneRuleWhereverItIsRefused) {
  const std::vector<std::pair<absl::Status, int>> cases = {
      {absl::FailedPreconditionError("not met"), kExitBadInput},
      {absl::PermissionDeniedError("no"), kExitBadInput},
      {absl::InvalidArgumentError("bad"), kExitBadInput},
      {absl::UnauthenticatedError("who"), kExitBadInput},
      {absl::UnavailableError("no active server"), kExitBadInput},
      {absl::InternalError("broke"), kExitJobFailed},
      {absl::UnknownError("remote"), kExitJobFailed},
  };
  config::ResolvedConfig resolved;
  resolved.conf = config::KeyCatalog::BuiltIn().Defaults();
  resolved.conf.Set("tony.containers.command", "true", config::ValueSource::ConfFlag());
  absl::StatusOr<config::JobSpec> spec = config::BuildJobSpec(resolved.conf);
  ASSERT_TRUE(spec.ok()) << spec.status();
  BlockInterruptSignals();
  for (const bool at_output_dir : {true, false}) {
    for (const auto& [refusal, expected] : cases) {
      SCOPED_TRACE(testing::Message()
                   << (at_output_dir ? "output directory: " : "submission: ") << refusal);
      char pattern[] = "/tmp/tony-client-test-XXXXXX";
      ASSERT_NE(mkdtemp(pattern), nullptr);
      ScriptedCluster cluster(pattern);
      (at_output_dir ? cluster.make_output_dir_status : cluster.submit_status) = refusal;
      std::ostringstream out, err;
      TonyClient client(&cluster, out, err);
      EXPECT_EQ(client.Submit(resolved, *spec, {pattern, "/bin/true"}), expected) << err.str();
      EXPECT_NE(err.str().find(std::string(refusal.message())), std::string::npos) << err.str();
      EXPECT_EQ(cluster.submitted, !at_output_dir);
      EXPECT_TRUE(cluster.kills.empty());
      if (at_output_dir) {
        EXPECT_FALSE(fs::exists(cluster.JobDir(ScriptedCluster::kAppId)));
      }
      fs::remove_all(pattern);
    }
  }
}

}  // namespace
}  // namespace tony::client
