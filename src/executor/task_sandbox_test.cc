#include "executor/task_sandbox.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace tony::executor {
namespace {

std::vector<std::string> Paths(const Sandbox& sandbox) {
  std::vector<std::string> paths;
  for (const Sandbox::Cover& cover : sandbox.covers) paths.push_back(cover.path);
  return paths;
}

TEST(TaskSandboxTest, LocalCoversEveryJobButItsOwnAndItsCredentials) {
  SandboxInputs inputs;
  inputs.working_dir = "/h/.tony/jobs/application_1_0001/containers/c1";
  inputs.job_dir = "/h/.tony/jobs/application_1_0001/";
  inputs.tony_home = "/h/.tony";
  const Sandbox sandbox = TaskSandbox(inputs);
  EXPECT_EQ(sandbox.working_dir, inputs.working_dir);
  EXPECT_EQ(Paths(sandbox),
            (std::vector<std::string>{"/h/.tony/jobs", "/h/.tony/jobs/application_1_0001/secret",
                                      "/h/.tony/jobs/application_1_0001/am-tls.key",
                                      "/h/.tony/jobs/application_1_0001/am.pid",
                                      "/h/.tony/jobs/application_1_0001/secrets"}));
  EXPECT_EQ(sandbox.covers[0].keep, (std::vector<std::string>{"/h/.tony/jobs/application_1_0001"}));
  for (size_t i = 1; i < sandbox.covers.size(); ++i) EXPECT_TRUE(sandbox.covers[i].keep.empty());
}

TEST(TaskSandboxTest, YarnCoversTheOtherContainersAndTheNodeManagersFiles) {
  SandboxInputs inputs;
  inputs.working_dir = "/d1/usercache/alice/appcache/application_9_0002/container_9_0002_01_000003";
  inputs.local_dirs = {"/d1/usercache/alice/appcache/application_9_0002",
                       "/d2/usercache/alice/appcache/application_9_0002"};
  inputs.container_id = "container_9_0002_01_000003";
  inputs.tony_home = "/home/alice/.tony";
  const Sandbox sandbox = TaskSandbox(inputs);
  EXPECT_EQ(Paths(sandbox),
            (std::vector<std::string>{"/d1/usercache/alice/appcache", "/d1/nmPrivate",
                                      "/d2/usercache/alice/appcache", "/d2/nmPrivate",
                                      "/home/alice/.tony/jobs"}));
  EXPECT_EQ(sandbox.covers[0].keep,
            (std::vector<std::string>{
                "/d1/usercache/alice/appcache/application_9_0002/filecache",
                "/d1/usercache/alice/appcache/application_9_0002/container_9_0002_01_000003"}));
  EXPECT_EQ(sandbox.covers[2].keep.size(), 2u);
}

TEST(TaskSandboxTest, InputsComeFromTheContainersEnvironment) {
  setenv("LOCAL_DIRS", "/d1/usercache/u/appcache/app_1,/d2/usercache/u/appcache/app_1", 1);
  setenv("CONTAINER_ID", "container_1", 1);
  setenv("TONY_JOB_DIR", "/h/jobs/app_1", 1);
  setenv("TONY_HOME", "/h", 1);
  const SandboxInputs inputs = SandboxInputsFromEnvironment();
  EXPECT_EQ(inputs.local_dirs, (std::vector<std::string>{"/d1/usercache/u/appcache/app_1",
                                                         "/d2/usercache/u/appcache/app_1"}));
  EXPECT_EQ(inputs.container_id, "container_1");
  EXPECT_EQ(inputs.job_dir, "/h/jobs/app_1");
  EXPECT_EQ(inputs.tony_home, "/h");
  EXPECT_FALSE(inputs.working_dir.empty());
  unsetenv("TONY_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(SandboxInputsFromEnvironment().tony_home, "/home/u/.tony");
  for (const char* name : {"LOCAL_DIRS", "CONTAINER_ID", "TONY_JOB_DIR"}) unsetenv(name);
}

TEST(TaskSandboxTest, ASandboxedCommandsExitAndPeakComeFromItsInit) {
  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c", "exit 3"};
  absl::StatusOr<SandboxedCommand> command = SandboxedCommand::Prepare(&spawn);
  ASSERT_TRUE(command.ok()) << command.status();
  ASSERT_TRUE(spawn.sandbox.has_value());
  absl::StatusOr<pid_t> init = Spawn(spawn);
  command->Spawned();
  ASSERT_TRUE(init.ok()) << init.status();
  absl::StatusOr<ExitStatus> init_status = WaitForExit(*init);
  ASSERT_TRUE(init_status.ok()) << init_status.status();
  EXPECT_EQ(command->ExitOf(*init_status), (ExitStatus{3, 0}));
  EXPECT_GT(command->peak_rss_bytes(), 0);
  EXPECT_EQ(ReapedPeakRss(&*command), command->peak_rss_bytes());
}

TEST(TaskSandboxTest, RelativeOrMissingPathsCoverNothing) {
  SandboxInputs inputs;
  inputs.working_dir = "/w";
  inputs.job_dir = "relative/jobs/app";
  inputs.local_dirs = {"", "also/relative"};
  const Sandbox sandbox = TaskSandbox(inputs);
  EXPECT_TRUE(sandbox.covers.empty());
}

}  // namespace
}  // namespace tony::executor
