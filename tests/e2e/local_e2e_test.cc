// End-to-end tests of `tony submit` on the local backend: the real binary, real processes, real
// PyTorch. After every test no process of the job may be left.

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "common/archive.h"
#include "e2e/tony_runner.h"

namespace tony::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kPython[] = "/usr/bin/python3";

class LocalE2eTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_TRUE(runner_.LeftoverProcesses().empty()) << "processes of the job outlived it";
  }

  // Common flags: the scripts as the source dir, small containers, enough vcores for the job.
  std::vector<std::string> Submit(const std::string& command,
                                  const std::vector<std::string>& conf) {
    std::vector<std::string> args = {"submit",
                                     "--src_dir",
                                     SourceDir(),
                                     "--executes",
                                     command,
                                     "--conf",
                                     "tony.local.vcores=16",
                                     "--conf",
                                     "tony.task.stop-grace-ms=2000"};
    for (const std::string& c : conf) {
      args.push_back("--conf");
      args.push_back(c);
    }
    return args;
  }
  // The same, with a shell command line as the task command instead of --executes.
  std::vector<std::string> SubmitShell(const std::string& command,
                                       const std::vector<std::string>& conf) {
    std::vector<std::string> args = Submit("unused", conf);
    args.erase(args.begin() + 3, args.begin() + 5);  // --executes unused
    args.push_back("--conf");
    args.push_back("tony.containers.command=" + command);
    return args;
  }
  static std::string SourceDir() { return TonyRunner::SourcePath("tests/e2e/scripts"); }

  TonyRunner runner_;
};

std::string Describe(const TonyResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The stdout of every container of a job, concatenated.
std::string AllTaskStdout(const TonyResult& r) {
  std::string out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(r.job_dir + "/logs", ec)) {
    out += ReadAll(entry.path().string() + "/stdout");
  }
  return out;
}

TEST_F(LocalE2eTest, FailedWorkerWithSuccessfulChiefSucceedsAndIsNamed) {
  TonyResult r = runner_.Run(Submit(std::string(kPython) + " exit_with.py 3 --only worker:1",
                                    {"tony.worker.instances=3", "tony.worker.memory=256m"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("SUCCEEDED after"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failed tasks: worker:1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worker:1 failed with exit code 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failing on purpose with exit code 3"), std::string::npos) << r.out;
}

// Without tony.local.vcores the tasks time-share the CPUs, as under YARN's default scheduler: a
// GANG job asking far more vcores than any machine has runs, all of it at once.
TEST_F(LocalE2eTest, VcoresAreNoLimitUnlessTonyLocalVcoresIsSet) {
  std::vector<std::string> args = {"submit",
                                   "--src_dir",
                                   SourceDir(),
                                   "--executes",
                                   "true",
                                   "--conf",
                                   "tony.worker.instances=8",
                                   "--conf",
                                   "tony.worker.vcores=64",
                                   "--conf",
                                   "tony.worker.memory=128m"};
  TonyResult r = runner_.Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("SUCCEEDED after"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\\nworker:7 +SUCCEEDED "))) << r.out;
  // With the key, the same job is bad input: it could never run whole.
  args.insert(args.end(), {"--conf", "tony.local.vcores=64"});
  TonyResult limited = runner_.Run(args);
  EXPECT_EQ(limited.exit_code, 2) << Describe(limited);
  EXPECT_NE(limited.err.find("asks for 512 vcores, but this machine offers 64"), std::string::npos)
      << limited.err;
}

TEST_F(LocalE2eTest, StandaloneAndSingleNodeJobs) {
  TonyResult standalone =
      runner_.Run(Submit("echo standalone $JOB_NAME:$TASK_INDEX",
                         {"tony.application.framework=standalone", "tony.worker.instances=1"}));
  ASSERT_EQ(standalone.exit_code, 0) << Describe(standalone);
  EXPECT_NE(AllTaskStdout(standalone).find("standalone worker:0"), std::string::npos);

  TonyResult single = runner_.Run(Submit("echo single node task $TASK_NUM", {}));
  ASSERT_EQ(single.exit_code, 0) << Describe(single);
  EXPECT_NE(AllTaskStdout(single).find("single node task 1"), std::string::npos);
}

TEST_F(LocalE2eTest, TaskEnvironmentFollowsTonyAndTorchConventions) {
  TonyResult r =
      runner_.Run(Submit(std::string(kPython) + " print_env.py",
                         {"tony.application.framework=pytorch", "tony.worker.instances=2",
                          "tony.worker.memory=256m", "tony.execution.envs=MY_FLAG=on"}),
                  60000, {{"MALLOC_ARENA_MAX", "2"}});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string out = AllTaskStdout(r);
  for (const char* expected :
       {"\"RANK\": \"1\"", "\"WORLD_SIZE\": \"2\"", "\"WORLD\": \"2\"", "\"JOB_NAME\": \"worker\"",
        "\"MY_FLAG\": \"on\"", "\"IS_CHIEF\": \"true\"", "\"LOCAL_WORLD_SIZE\": \"2\""}) {
    EXPECT_NE(out.find(expected), std::string::npos) << expected << "\n" << out;
  }
  EXPECT_EQ(out.find("MALLOC_ARENA_MAX"), std::string::npos) << out;
  EXPECT_NE(out.find("\"JOB_ID\": \"" + r.app_id + "\""), std::string::npos) << out;
}

TEST_F(LocalE2eTest, EachGpuTaskGetsItsOwnDevices) {
  TonyResult r =
      runner_.Run(Submit(std::string(kPython) + " print_env.py",
                         {"tony.local.gpus=3", "tony.worker.instances=2", "tony.worker.gpus=1",
                          "tony.worker.memory=256m", "tony.ps.instances=1", "tony.ps.memory=256m",
                          "tony.application.untracked.jobtypes="}),
                  60000);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string out = AllTaskStdout(r);
  EXPECT_NE(out.find("\"CUDA_VISIBLE_DEVICES\": \"0\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"CUDA_VISIBLE_DEVICES\": \"1\""), std::string::npos) << out;
  // The ps asked for no GPU and must see none.
  EXPECT_NE(out.find("\"CUDA_VISIBLE_DEVICES\": \"\""), std::string::npos) << out;
  EXPECT_EQ(out.find("\"CUDA_VISIBLE_DEVICES\": \"2\""), std::string::npos) << out;
}

// The venv is unpacked once per job and shared read-only; resources go into every container.
TEST_F(LocalE2eTest, VenvSourceAndResourcesAreUnpackedIntoEveryContainer) {
  // A stand-in venv whose interpreter wraps the system one and marks that it was used.
  const fs::path venv = fs::path(runner_.work_dir()) / "venv-tree";
  fs::create_directories(venv / "bin");
  std::ofstream(venv / "bin/python")
      << "#!/bin/sh\nexport FROM_VENV=yes\nexec /usr/bin/python3 \"$@\"\n";
  fs::permissions(venv / "bin/python", fs::perms::owner_all);
  ASSERT_TRUE(CreateZipFromDirectory(venv.string(), runner_.work_dir() + "/venv.zip").ok());
  const fs::path src = fs::path(runner_.work_dir()) / "src";
  fs::create_directories(src);
  std::ofstream(src / "main.py")
      << "import os, stat\n"
         "assert os.environ['FROM_VENV'] == 'yes'\n"
         "print(open('renamed.txt').read().strip(), open('data/inner.txt').read().strip())\n"
         "writable = [p for p in ('venv', 'venv/bin', 'venv/bin/python')\n"
         "            if os.stat(p).st_mode & 0o222]\n"
         "print('venv at', os.path.realpath('venv'), 'writable:', writable)\n";
  std::ofstream(fs::path(runner_.work_dir()) / "plain.txt") << "plain-resource\n";
  const fs::path data = fs::path(runner_.work_dir()) / "data-tree";
  fs::create_directories(data);
  std::ofstream(data / "inner.txt") << "archived-resource\n";
  ASSERT_TRUE(CreateZipFromDirectory(data.string(), runner_.work_dir() + "/data.zip").ok());

  TonyResult r = runner_.Run(
      {"submit", "--src_dir", "src", "--executes", "main.py", "--python_venv", "venv.zip",
       "--python_binary_path", "bin/python", "--conf", "tony.worker.instances=2", "--conf",
       "tony.worker.memory=256m", "--conf", "tony.local.vcores=8", "--conf",
       "tony.worker.resources=plain.txt::renamed.txt,data.zip::data#archive"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string out = AllTaskStdout(r);
  size_t count = 0;
  for (size_t at = out.find("plain-resource archived-resource"); at != std::string::npos;
       at = out.find("plain-resource archived-resource", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 2u) << out;
  // One read-only copy of the venv for the whole job, which goes with it.
  const std::string shared = "venv at " + r.job_dir + "/shared/venv writable: []";
  EXPECT_NE(out.find(shared), std::string::npos) << out;
  EXPECT_NE(out.find(shared, out.find(shared) + 1), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(r.job_dir + "/shared")) << "the unpacked venv outlived the job";
}

int CountLogDirs(const TonyResult& r) {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(r.job_dir + "/logs", ec))
    n += entry.is_directory();
  return n;
}

TEST_F(LocalE2eTest, TaskThatFailsMoreOftenThanAllowedFailsTheJob) {
  TonyResult r =
      runner_.Run(SubmitShell("if [ $TASK_INDEX = 0 ]; then exit 3; fi",
                              {"tony.worker.instances=2", "tony.worker.memory=256m",
                               "tony.worker.max-restarts=1", "tony.worker.restart-policy=task",
                               "tony.worker.restart-backoff-ms=0"}),
                  60000);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("chief worker:0 failed (exit code 3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worker:0 attempt 0 failed with exit code 3 and was restarted"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(CountLogDirs(r), 3);
}

// A Python task that reports its steps through the tony_task helper and then hangs: found hung at
// its last step, its Python stacks (faulthandler, through the helper) and the kernel's view of it
// are in its log, and its second attempt succeeds.
TEST_F(LocalE2eTest, TheTonyTaskHelperReportsProgressAndGivesAHungTasksPythonStacks) {
  TonyResult r =
      runner_.Run(Submit("/usr/bin/python3 hang_once.py",
                         {"tony.worker.instances=2", "tony.worker.memory=256m",
                          "tony.worker.max-restarts=1", "tony.worker.restart-policy=task",
                          "tony.worker.restart-backoff-ms=0", "tony.task.hang-timeout-ms=3000"}),
                  120000);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("worker:1 is hung: no progress for [0-9]+ ms \\(tony.task.hang-timeout-ms "
                        "= 3000\\), at step 3\n")))
      << r.out;
  std::string stderr_logs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(r.job_dir + "/logs", ec)) {
    stderr_logs += ReadAll(entry.path().string() + "/stderr");
  }
  EXPECT_NE(stderr_logs.find("[tony] stacks of worker:1's processes: worker:1 is hung"),
            std::string::npos)
      << stderr_logs;
  EXPECT_TRUE(std::regex_search(stderr_logs, std::regex(R"(thread [0-9]+ \(python3\) stopped)")))
      << stderr_logs;
  // Python's own stacks, from faulthandler: the line where the task stopped itself.
  EXPECT_TRUE(
      std::regex_search(stderr_logs, std::regex(R"(File ".*hang_once\.py", line 11 in <module>)")))
      << stderr_logs;
  EXPECT_NE(AllTaskStdout(r).find("done"), std::string::npos);
  // The job's history says which task hung and why.
  const std::string events =
      TonyRunner::ReadFilesBelow(runner_.home() + "/history", "events.jsonl", r.app_id);
  EXPECT_TRUE(std::regex_search(
      events,
      std::regex(
          R"("task":"worker:1","attempt":0,"kind":"TASK_HUNG","diagnostics":"worker:1 is hung: no progress)")))
      << events;
}

// The digits example keeps each epoch in TONY_CHECKPOINT_DIR: when rank 1 fails in epoch 10, the
// gang restarts and both ranks go on after epoch 9, and the model is as good as unbroken
// training's.
TEST_F(LocalE2eTest, ThePyTorchDigitsExampleResumesFromItsCheckpointAfterAGangRestart) {
  TonyResult r =
      runner_.Run({"submit", "--src_dir", TonyRunner::SourcePath("examples/pytorch-digits"),
                   "--executes", "train.py", "--python_binary_path", "/usr/bin/python3",
                   "--conf_file", TonyRunner::SourcePath("examples/pytorch-digits/tony.xml"),
                   "--task_params", "--fail_at_epoch 10", "--conf", "tony.local.vcores=4", "--conf",
                   "tony.worker.max-restarts=1", "--conf", "tony.worker.restart-backoff-ms=0"},
                  180000);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string out = AllTaskStdout(r);
  EXPECT_NE(out.find("rank 1 fails at the start of epoch 10"), std::string::npos) << out;
  EXPECT_NE(out.find("rank 0 resumes after epoch 9 (attempt 1)"), std::string::npos) << out;
  EXPECT_NE(out.find("rank 1 resumes after epoch 9 (attempt 1)"), std::string::npos) << out;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(out, match, std::regex(R"(test accuracy: ([0-9.]+))"))) << out;
  EXPECT_GT(std::stod(match[1].str()), 0.9);
  EXPECT_NE(
      r.out.find("worker:0 attempt 0 failed with exit code -1002 (stopped for a gang restart) "
                 "and was restarted:\n  gang restart 1: worker:1 failed (exit code 1)"),
      std::string::npos)
      << r.out;
}

// A restarted task finds what its earlier attempt kept in TONY_CHECKPOINT_DIR.
TEST_F(LocalE2eTest, ARestartedTaskResumesFromItsCheckpointDirectory) {
  TonyResult r = runner_.Run(
      SubmitShell(
          "if [ -f $TONY_CHECKPOINT_DIR/step ]; then echo resumed from step $(cat "
          "$TONY_CHECKPOINT_DIR/step); else echo 41 > $TONY_CHECKPOINT_DIR/step; exit 3; fi",
          {"tony.worker.instances=1", "tony.worker.memory=256m", "tony.worker.max-restarts=1",
           "tony.worker.restart-policy=task", "tony.worker.restart-backoff-ms=0"}),
      60000);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(AllTaskStdout(r).find("resumed from step 41"), std::string::npos) << AllTaskStdout(r);
  const std::string dir = r.job_dir + "/checkpoints";
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(ReadAll(dir + "/step"), "41\n");
  // Given by the job, it is used as it is.
  const std::string mine = runner_.work_dir() + "/my-checkpoints";
  r = runner_.Run(SubmitShell("echo kept in $TONY_CHECKPOINT_DIR; touch $TONY_CHECKPOINT_DIR/x",
                              {"tony.worker.instances=1", "tony.worker.memory=256m",
                               "tony.application.checkpoint-dir=" + mine}),
                  60000);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(AllTaskStdout(r).find("kept in " + mine), std::string::npos);
  EXPECT_TRUE(fs::exists(mine + "/x"));
}

// A task that swaps its own output files and progress file for links to a file it must not read
// (the sandbox hides such files from it; a link's target needs no access), and for a FIFO: the
// executor reads what the task printed, through the files it opened before the task ran, and
// neither follows the links nor hangs on the FIFO.
TEST_F(LocalE2eTest, ATaskCannotPointTheExecutorAtAnotherFile) {
  const std::string secret = runner_.work_dir() + "/not-the-tasks";
  std::ofstream(secret) << "TOPSECRET-CONTENT\n";
  TonyResult r =
      runner_.Run(SubmitShell("echo printed before the swap; echo error before the swap >&2; "
                              "out=$(readlink /proc/$$/fd/1); err=$(readlink /proc/$$/fd/2); "
                              "rm -f \"$out\" \"$err\" \"$TONY_PROGRESS_FILE\"; "
                              "ln -s " +
                                  secret + " \"$out\"; ln -s " + secret +
                                  " \"$err\"; "
                                  "mkfifo \"$TONY_PROGRESS_FILE\"; sleep 3; exit 7",
                              {"tony.worker.instances=1", "tony.worker.memory=256m",
                               "tony.task.heartbeat-interval-ms=200"}),
                  60000);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("printed before the swap"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error before the swap"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("TOPSECRET"), std::string::npos) << r.out;
  const std::string history =
      TonyRunner::ReadFilesBelow(runner_.home() + "/history", "worker-0-0.stdout", r.app_id) +
      TonyRunner::ReadFilesBelow(runner_.home() + "/history", "worker-0-0.stderr", r.app_id);
  EXPECT_NE(history.find("printed before the swap"), std::string::npos) << history;
  EXPECT_EQ(history.find("TOPSECRET"), std::string::npos) << history;
  EXPECT_EQ(ReadAll(secret), "TOPSECRET-CONTENT\n");
}

TEST_F(LocalE2eTest, CommandThatIsNotExecutableFailsTheTaskWithTheReason) {
  const std::string script = runner_.work_dir() + "/not-executable.sh";
  std::ofstream(script) << "#!/bin/sh\necho hi\n";
  TonyResult r = runner_.Run({"submit", "--executes", script, "--conf", "tony.worker.instances=1",
                              "--conf", "tony.worker.memory=256m"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("Permission denied"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tony::testing
