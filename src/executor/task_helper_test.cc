#include "executor/task_helper.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/files.h"
#include "common/process.h"
#include "common/strings.h"

namespace tony::executor {
namespace {

namespace fs = std::filesystem;

// The module as a task's Python uses it: a real python3 with the environment the executor gives.
TEST(TaskHelperTest, PythonReportsProgressThroughTheModule) {
  char pattern[] = "/tmp/tony_helper_XXXXXX";
  const std::string root = mkdtemp(pattern);
  const std::string dir = root + "/.tony-task";
  absl::StatusOr<std::map<std::string, std::string>> env = InstallTaskHelper(dir, "/opt/mine");
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("PYTHONPATH"), dir + ":/opt/mine");
  EXPECT_EQ(env->at("TONY_PROGRESS_FILE"), dir + "/progress");
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);

  SpawnOptions spawn;
  spawn.argv = {"python3", "-c",
                "import tony_task, signal, faulthandler\n"
                "tony_task.progress(3, total=10, loss=0.5)\n"
                "tony_task.progress(4, acc=float('nan'), bad_name=1, **{'x y': 2})\n"};
  spawn.set_env = *env;
  spawn.stderr_path = root + "/stderr";
  absl::StatusOr<pid_t> python = Spawn(spawn);
  ASSERT_TRUE(python.ok()) << python.status();
  absl::StatusOr<ExitStatus> exit = WaitForExit(*python);
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->ShellCode(), 0) << ReadFile(root + "/stderr").value_or("");
  absl::StatusOr<std::string> reports = ReadFile(dir + "/progress");
  ASSERT_TRUE(reports.ok()) << reports.status();
  EXPECT_EQ(*reports,
            StrCat("faulthandler=", *python, "\nstep=3 total=10 loss=0.5\nstep=4 bad_name=1.0\n"));

  // Outside tony the module does nothing.
  spawn.set_env = {{"PYTHONPATH", dir}};
  spawn.unset_env = {"TONY_PROGRESS_FILE"};
  spawn.argv = {"python3", "-c", "import tony_task; tony_task.progress(1)"};
  python = Spawn(spawn);
  ASSERT_TRUE(python.ok());
  exit = WaitForExit(*python);
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->ShellCode(), 0);
  EXPECT_EQ(*ReadFile(dir + "/progress"), *reports);
  fs::remove_all(root);
}

}  // namespace
}  // namespace tony::executor
