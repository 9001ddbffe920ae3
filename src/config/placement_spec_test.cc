// tony.application.placement-spec, tony.<type>.placement-spec and tony.containers.placement-spec
// (the syntax itself: placement_constraint_test.cc).

#include "absl/strings/match.h"
#include "common/strings.h"
#include "config/job_spec_fixture.h"

namespace tony::config {
namespace {

TEST_F(JobSpecTest, PlacementSpecsOfTheTypeTheContainersAndTheApplication) {
  Set("tony.worker.instances", "3");
  Set("tony.ps.instances", "1");
  Set("tony.chief.instances", "1");
  Set("tony.worker.placement-spec", " notin,node,worker ");
  Set("tony.containers.placement-spec", "in,rack,ps");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.at("worker").placement, "notin,node,worker");
  EXPECT_EQ(spec->job_types.at("ps").placement, "in,rack,ps");
  EXPECT_EQ(spec->job_types.at("chief").placement, "in,rack,ps");
  EXPECT_EQ(spec->application_placement, "");
  EXPECT_TRUE(spec->HasPlacement());

  Set("tony.containers.placement-spec", "");
  Set("tony.application.placement-spec", "and(java=true:notin,node,chief)");
  spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  // The application's constraint binds every type: joined to the type's own.
  EXPECT_EQ(spec->job_types.at("ps").placement, "and(java=true:notin,node,chief)");
  EXPECT_EQ(spec->job_types.at("worker").placement,
            "and(notin,node,worker:and(java=true:notin,node,chief))");
  EXPECT_EQ(spec->application_placement, "and(java=true:notin,node,chief)");
  EXPECT_TRUE(spec->HasPlacement());
}

// The preprocessing job runs in the AM's stead: only its own key constrains it, so the AM's node
// label does not clash with the job's constraints.
TEST_F(JobSpecTest, ThePreprocessingJobTakesOnlyItsOwnPlacementSpec) {
  Set("tony.worker.instances", "2");
  Set("tony.application.enable-preprocess", "true");
  Set("tony.am.node-label", "cpu");
  Set("tony.containers.placement-spec", "notin,node,worker");
  Set("tony.application.placement-spec", "java=true");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.at(kPreprocessType).placement, "");
  EXPECT_EQ(spec->job_types.at(kPreprocessType).node_label, "cpu");
  EXPECT_EQ(spec->job_types.at("worker").placement, "and(notin,node,worker:java=true)");
  Set("tony.am.node-label", "");
  Set("tony.preprocess.placement-spec", "in,node,worker");
  spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.at(kPreprocessType).placement, "in,node,worker");
}

TEST_F(JobSpecTest, NoPlacementByDefault) {
  Set("tony.worker.instances", "2");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->HasPlacement());
}

// Each key's bad value is refused with one line that names the key and what is wrong.
TEST_F(JobSpecTest, ABadPlacementSpecIsRefusedByItsKey) {
  Set("tony.worker.instances", "1");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tony.worker.placement-spec", "notin,host,worker"},
      {"tony.worker.placement-spec", "in,node"},
      {"tony.worker.placement-spec", "cardinality,node,worker,3,1"},
      {"tony.worker.placement-spec", "and(in,node,a"},
      {"tony.containers.placement-spec", "near,node,ps"},
      {"tony.application.placement-spec", "or()"},
      {"tony.application.placement-spec", "java="},
  };
  for (const auto& [key, value] : cases) {
    Set(key, value);
    const std::string error = Error();
    EXPECT_TRUE(absl::StartsWith(error, StrCat(key, " = \"", value, "\" (--conf): "))) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    Set(key, "");
  }
}

TEST_F(JobSpecTest, APlacementSpecDoesNotGoWithANodeLabel) {
  Set("tony.worker.instances", "1");
  Set("tony.worker.node-label", "gpu");
  Set("tony.worker.placement-spec", "notin,node,worker");
  std::string error = Error();
  EXPECT_TRUE(absl::StartsWith(error, "tony.worker.placement-spec = ")) << error;
  EXPECT_NE(error.find("node label (gpu)"), std::string::npos) << error;
  Set("tony.worker.placement-spec", "");
  Set("tony.application.placement-spec", "notin,node,worker");
  error = Error();
  EXPECT_TRUE(absl::StartsWith(error, "tony.application.placement-spec = ")) << error;
}

}  // namespace
}  // namespace tony::config
