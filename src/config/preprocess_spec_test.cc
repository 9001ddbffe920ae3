// tony.application.enable-preprocess: the preprocessing job as a job type of its own.

#include "absl/strings/match.h"
#include "config/job_spec_fixture.h"

namespace tony::config {
namespace {

TEST_F(JobSpecTest, ThePreprocessingJobRunsTheAmCommandWithTheAmsResources) {
  Set("tony.worker.instances", "2");
  Set("tony.worker.memory", "1g");
  Set("tony.am.memory", "3g");
  Set("tony.am.vcores", "2");
  Set("tony.am.command", "python3 prepare.py");
  Set("tony.am.node-label", "cpu");
  Set("tony.application.framework", "pytorch");
  Set("tony.application.enable-preprocess", "true");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->preprocess);
  const JobTypeSpec* pre = spec->Find(kPreprocessType);
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->instances, 1);
  EXPECT_EQ(pre->command, "python3 prepare.py");
  EXPECT_EQ(pre->resources.memory_mb, 3072);
  EXPECT_EQ(pre->resources.vcores, 2);
  EXPECT_EQ(pre->node_label, "cpu");
  EXPECT_EQ(pre->role, JobTypeRole::kTracked);
  EXPECT_TRUE(pre->stop_on_failure);
  // A collective framework's tracked types restart as a gang; the preprocessing job is no member.
  EXPECT_EQ(pre->restart_policy, RestartPolicy::kTask);
  EXPECT_EQ(spec->job_types.at("worker").restart_policy, RestartPolicy::kGang);
  // It runs before the others: not counted among the tasks that train, nor in the gang's size.
  EXPECT_EQ(spec->TotalTasks(), 3);
  EXPECT_EQ(spec->TrackedTasks(), 2);
  EXPECT_EQ(spec->GangTasks(), 2);
  EXPECT_EQ(spec->GangResources().memory_mb, 2048);
}

TEST_F(JobSpecTest, WithoutAnAmCommandThePreprocessingJobRunsTheJobsCommand) {
  Set("tony.worker.instances", "1");
  Set("tony.application.enable-preprocess", "true");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->Find(kPreprocessType)->command, "python3 train.py");
}

TEST_F(JobSpecTest, OffByDefaultAndIgnoredInSingleNodeMode) {
  Set("tony.worker.instances", "1");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->preprocess);
  EXPECT_EQ(spec->Find(kPreprocessType), nullptr);
  Set("tony.worker.instances", "0");
  Set("tony.application.enable-preprocess", "true");
  spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->single_node);
  EXPECT_FALSE(spec->preprocess);
  EXPECT_EQ(spec->TotalTasks(), 1);
}

TEST_F(JobSpecTest, AJobTypeOfThePreprocessingJobsNameIsRefused) {
  Set("tony.worker.instances", "1");
  Set("tony.preprocess.instances", "1");
  ASSERT_TRUE(Build().ok()) << "a type like any other without the preprocessing job";
  Set("tony.application.enable-preprocess", "true");
  const std::string error = Error();
  EXPECT_TRUE(absl::StartsWith(error, "tony.preprocess.instances = \"1\"")) << error;
  EXPECT_NE(error.find("tony.application.enable-preprocess"), std::string::npos) << error;
}

TEST_F(JobSpecTest, APreprocessingJobWithoutACommandIsRefused) {
  Set("tony.containers.command", "");
  Set("tony.worker.instances", "1");
  Set("tony.worker.command", "python3 train.py");
  Set("tony.application.enable-preprocess", "true");
  const std::string error = Error();
  EXPECT_TRUE(absl::StartsWith(error, "tony.application.enable-preprocess = \"true\"")) << error;
  EXPECT_NE(error.find("tony.am.command"), std::string::npos) << error;
}

}  // namespace
}  // namespace tony::config
