// framework=horovod: TonY's configurations (workers only, or its debug driver) and what tony
// refuses.

#include "config/job_spec.h"
#include "config/job_spec_fixture.h"
#include "gtest/gtest.h"

namespace tony::config {
namespace {

class HorovodSpecTest : public JobSpecTest {
 protected:
  HorovodSpecTest() {
    Set("tony.application.framework", "horovod");
    Set("tony.worker.instances", "2");
  }
};

// TonY's plain Horovod job: workers only. The AM serves the rendezvous; no driver task.
TEST_F(HorovodSpecTest, WorkersOnlyHasNoDriver) {
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->horovod_debug_driver);
  EXPECT_EQ(spec->job_types.size(), 1u);
  EXPECT_EQ(spec->TotalTasks(), 2);
}

// As TonY, which refuses tony.driver.* keys outside its debug mode.
TEST_F(HorovodSpecTest, ADriverOfYourOwnNeedsDebugMode) {
  Set("tony.driver.instances", "1");
  EXPECT_EQ(Error(),
            "tony.driver.instances = \"1\" (--conf): tony serves Horovod's rendezvous itself; a "
            "driver task of your own needs tony.horovod.driver.mode.debug = true");
}

TEST_F(HorovodSpecTest, NeedsGang) {
  Set("tony.application.distributed-mode", "FCFS");
  EXPECT_EQ(Error(),
            "tony.application.distributed-mode = \"FCFS\" (--conf): Horovod's workers rendezvous "
            "all together: it needs GANG");
}

// TonY's debug mode as its own test sets it: driver instances, vcores and untracked given.
TEST_F(HorovodSpecTest, DebugDriverAsTonYsTestSetsIt) {
  Set("tony.horovod.driver.mode.debug", "true");
  Set("tony.driver.instances", "1");
  Set("tony.driver.vcores", "1");
  Set("tony.application.untracked.jobtypes", "driver");
  Set("tony.driver.command", "python horovod_debug_driver.py");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->horovod_debug_driver);
  const JobTypeSpec& driver = spec->job_types.at(kHorovodDriverType);
  EXPECT_EQ(driver.command, "python horovod_debug_driver.py");
  EXPECT_EQ(driver.role, JobTypeRole::kUntracked);
  EXPECT_TRUE(driver.stop_on_failure);
  EXPECT_EQ(spec->TrackedTasks(), 2);
}

// Only the command given: the driver is added, one, untracked, and its failure fails the job.
TEST_F(HorovodSpecTest, DebugDriverIsAddedWhenOnlyItsCommandIsGiven) {
  Set("tony.horovod.driver.mode.debug", "true");
  Set("tony.driver.command", "python3 my_driver.py");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  const JobTypeSpec& driver = spec->job_types.at(kHorovodDriverType);
  EXPECT_EQ(driver.instances, 1);
  EXPECT_EQ(driver.role, JobTypeRole::kUntracked);
  EXPECT_TRUE(driver.stop_on_failure);
  EXPECT_FALSE(driver.stop_on_failure_reason.empty());
  EXPECT_EQ(spec->TotalTasks(), 3);
}

TEST_F(HorovodSpecTest, DebugDriverNeedsItsCommandAndIsOne) {
  Set("tony.horovod.driver.mode.debug", "true");
  EXPECT_EQ(Error(),
            "tony.driver.command (default): the command of your Horovod driver is required with "
            "tony.horovod.driver.mode.debug = true");
  Set("tony.driver.command", "python3 d.py");
  Set("tony.driver.instances", "2");
  EXPECT_EQ(Error(), "tony.driver.instances = \"2\" (--conf): a Horovod job has one driver");
}

// Other frameworks keep a driver type as an ordinary one.
TEST_F(HorovodSpecTest, OtherFrameworksMayHaveADriverType) {
  Set("tony.application.framework", "pytorch");
  Set("tony.driver.instances", "1");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.at("driver").role, JobTypeRole::kTracked);
  EXPECT_FALSE(spec->horovod_debug_driver);
}

}  // namespace
}  // namespace tony::config
