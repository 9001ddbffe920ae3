// The client against a backend that never starts the AM (a fake ClusterClient: a unit test of the
// client's own rule; the end-to-end suites use the real backends).

#include "client/tony_client.h"

#include <stdlib.h>

#include <filesystem>
#include <sstream>

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

}  // namespace
}  // namespace tony::client
