// The disk on the local backend, through the real binary: a job that fills the disk, what a job
// leaves in its directory when it ends, and the retention of old job directories (`tony gc`).
// The full-disk tests mount a small tmpfs as TONY_HOME, so they need root; they skip otherwise.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/process.h"
#include "e2e/tony_runner.h"

namespace tony::testing {
namespace {

namespace fs = std::filesystem;

std::string Describe(const TonyResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

// One task running a shell command line, small, with a short grace period.
std::vector<std::string> SubmitShell(const std::string& command,
                                     const std::vector<std::string>& conf = {}) {
  std::vector<std::string> args = {"submit",
                                   "--conf",
                                   "tony.containers.command=" + command,
                                   "--conf",
                                   "tony.worker.instances=1",
                                   "--conf",
                                   "tony.worker.memory=256m",
                                   "--conf",
                                   "tony.task.stop-grace-ms=2000"};
  for (const std::string& c : conf) {
    args.push_back("--conf");
    args.push_back(c);
  }
  return args;
}

// Sets the modification time of `dir` and of its top-level entries to `age` ago.
void SetAge(const std::string& dir, std::chrono::seconds age) {
  const auto at = std::chrono::system_clock::now() - age;
  const int64_t sec =
      std::chrono::duration_cast<std::chrono::seconds>(at.time_since_epoch()).count();
  const timespec times[2] = {{sec, 0}, {sec, 0}};
  for (const auto& entry : fs::directory_iterator(dir)) {
    ASSERT_EQ(utimensat(AT_FDCWD, entry.path().c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
  }
  ASSERT_EQ(utimensat(AT_FDCWD, dir.c_str(), times, 0), 0);
}

class DiskE2eTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_TRUE(runner_.LeftoverProcesses().empty()) << "processes of the job outlived it";
    if (mounted_) {
      // Lazily: a test that failed half-way may have left a file open.
      EXPECT_EQ(umount2(runner_.home().c_str(), MNT_DETACH), 0) << std::strerror(errno);
    }
  }

  // Mounts a tmpfs of `size` over the runner's TONY_HOME; false (and the test skips) if this
  // process may not mount.
  bool MountSmallHome(const std::string& size) {
    // Private, as tony requires of TONY_HOME (a tmpfs is 1777 unless told).
    if (mount("tmpfs", runner_.home().c_str(), "tmpfs", 0,
              ("size=" + size + ",mode=0700").c_str()) != 0) {
      skip_reason_ =
          std::string("cannot mount a tmpfs as TONY_HOME (needs root): ") + std::strerror(errno);
      return false;
    }
    mounted_ = true;
    return true;
  }

  TonyRunner runner_;
  bool mounted_ = false;
  std::string skip_reason_;
};

TEST_F(DiskE2eTest, AJobThatFillsTheDiskSucceedsAndSaysItsStatusCouldNotBeSaved) {
  if (!MountSmallHome("4m")) GTEST_SKIP() << skip_reason_;
  // Outside the job's directory, so that nothing the AM removes makes room again: the task's
  // container directory, which the AM removes at the end, keeps no data (the tony_task helper's
  // module goes first).
  TonyResult r = runner_.Run(
      SubmitShell("rm -f .tony-task/tony_task.py; "
                  "dd if=/dev/zero of=$TONY_HOME/fill bs=64k 2>/dev/null; echo filled; exit 0"),
      120000);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find(r.app_id + " SUCCEEDED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("final status SUCCEEDED; could not be saved"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("LOG ERROR"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(r.job_dir + "/final-status.json"));

  // Afterwards the job is known as failed for want of a record, and the full disk is named.
  TonyResult status = runner_.Run({"status", r.app_id}, 30000);
  EXPECT_EQ(status.exit_code, 0) << Describe(status);
  EXPECT_NE(status.out.find("is full"), std::string::npos) << status.out;
  // A job submitted onto the full disk fails to stage, says why, and leaves nothing behind.
  TonyResult staged = runner_.Run(SubmitShell("true"), 60000);
  EXPECT_EQ(staged.exit_code, 1) << Describe(staged);
  EXPECT_NE(staged.err.find("No space left on device"), std::string::npos) << staged.err;
  const auto job_dirs =
      std::distance(fs::directory_iterator(runner_.home() + "/jobs"), fs::directory_iterator());
  EXPECT_EQ(job_dirs, 1) << "a half-staged job directory was left";
}

TEST_F(DiskE2eTest, AFullDiskFromTheTaskWorkingDirectoryIsClearedToSaveTheStatus) {
  if (!MountSmallHome("4m")) GTEST_SKIP() << skip_reason_;
  TonyResult r =
      runner_.Run(SubmitShell("dd if=/dev/zero of=fill bs=64k 2>/dev/null; exit 0"), 120000);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.out.find("could not be saved"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(r.job_dir + "/final-status.json"));
  EXPECT_FALSE(fs::exists(r.job_dir + "/containers"));
  TonyResult status = runner_.Run({"status", r.app_id}, 30000);
  EXPECT_NE(status.out.find("final status SUCCEEDED"), std::string::npos) << Describe(status);
}

// The job's history on a disk that fills up: a warning in the AM's log, and the job goes on to
// its own result (docs/history.md).
TEST_F(DiskE2eTest, AHistoryOnAFullDiskIsAWarningAndTheJobGoesOn) {
  const std::string disk = runner_.work_dir() + "/history-disk";
  fs::create_directories(disk);
  if (mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << std::strerror(errno);
  }
  TonyResult r = runner_.Run(
      SubmitShell("head -c 1000000 /dev/zero | tr '\\0' x; echo; echo trained",
                  {"tony.history.location=" + disk, "tony.task.heartbeat-interval-ms=100"}),
      120000);
  const std::string am_log = [&] {
    std::ifstream in(r.job_dir + "/am.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  EXPECT_EQ(umount2(disk.c_str(), MNT_DETACH), 0) << std::strerror(errno);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find(r.app_id + " SUCCEEDED"), std::string::npos) << r.out;
  EXPECT_NE(am_log.find("the job's history is incomplete"), std::string::npos) << am_log;
  EXPECT_NE(am_log.find("No space left on device"), std::string::npos) << am_log;
}

TEST_F(DiskE2eTest, ASucceededJobLeavesItsLogsAndRecordButNoWorkingFiles) {
  const std::string src = runner_.work_dir() + "/src";
  fs::create_directories(src);
  std::ofstream(src + "/main.sh") << "echo from-src\n";
  // An old ended job's directory, which this submit removes on its way (retention 30 days).
  const std::string old_job = runner_.home() + "/jobs/application_1_0001";
  fs::create_directories(old_job + "/logs");
  std::ofstream(old_job + "/final-status.json") << "{}";
  SetAge(old_job, std::chrono::hours(24 * 40));

  TonyResult r = runner_.Run({"submit", "--src_dir", "src", "--executes", "sh main.sh", "--conf",
                              "tony.worker.instances=2", "--conf", "tony.worker.memory=256m"},
                             120000);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_FALSE(fs::exists(old_job)) << "the expired job directory was not removed";
  for (const char* gone : {"containers", "secrets", "src.zip"}) {
    EXPECT_FALSE(fs::exists(r.job_dir + "/" + gone)) << gone;
  }
  for (const char* kept : {"final-status.json", "tony-final.xml", "am.log", "logs"}) {
    EXPECT_TRUE(fs::exists(r.job_dir + "/" + kept)) << kept;
  }
  EXPECT_NE(TonyRunner::ReadFilesBelow(r.job_dir + "/logs", "stdout", ""), "");
}

TEST_F(DiskE2eTest, AFailedJobKeepsItsWorkingDirectoriesWhenAsked) {
  TonyResult r = runner_.Run(
      SubmitShell("echo kept > marker; exit 3", {"tony.local.keep-work-dirs-on-failure=true"}),
      120000);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(fs::exists(r.job_dir + "/secrets"));
  EXPECT_NE(TonyRunner::ReadFilesBelow(r.job_dir + "/containers", "marker", ""), "");

  TonyResult removed = runner_.Run(SubmitShell("exit 3"), 120000);
  ASSERT_EQ(removed.exit_code, 1) << Describe(removed);
  EXPECT_FALSE(fs::exists(removed.job_dir + "/containers"));
  EXPECT_FALSE(fs::exists(removed.job_dir + "/secrets"));
}

TEST_F(DiskE2eTest, GcRemovesOnlyEndedJobDirectoriesOlderThanTheRetention) {
  const std::string jobs = runner_.home() + "/jobs/";
  auto make = [&](const std::string& id, const std::string& file, const std::string& content,
                  std::chrono::seconds age) {
    fs::create_directories(jobs + id + "/logs");
    std::ofstream(jobs + id + "/" + file) << content;
    SetAge(jobs + id, age);
  };
  const std::chrono::seconds forty_days = std::chrono::hours(24 * 40);
  make("application_1_0001", "final-status.json", "{}", forty_days);
  make("application_1_0002", "final-status.json", "{}", forty_days);
  // A job that left a model in its outputs: they stay until asked for.
  fs::create_directories(jobs + "application_1_0009/outputs");
  std::ofstream(jobs + "application_1_0009/outputs/model.pt") << "weights";
  make("application_1_0009", "final-status.json", "{}", forty_days);
  make("application_1_0003", "final-status.json", "{}", std::chrono::hours(1));
  // A running job's AM: a live process that carries the job's directory.
  SpawnOptions spawn;
  spawn.argv = {"/bin/sleep", "120"};
  spawn.set_env = {{"TONY_JOB_DIR", jobs + "application_1_0004"}};
  absl::StatusOr<pid_t> am = Spawn(spawn);
  ASSERT_TRUE(am.ok());
  make("application_1_0004", "am.pid", std::to_string(*am) + "\n", forty_days);
  // Histories: two ended jobs, an old and a new one, and an old one whose AM never ended it.
  const std::string history = runner_.home() + "/history/";
  auto record = [&](const std::string& dir, std::chrono::seconds age) {
    fs::create_directories(history + dir + "/logs");
    std::ofstream(history + dir + "/job.json") << "{}";
    SetAge(history + dir, age);
  };
  record("finished/application_1_0005", forty_days);
  record("finished/application_1_0006", std::chrono::hours(1));
  record("intermediate/application_1_0007", forty_days);
  // A local job whose AM died before it could finish its history: its job directory has no AM.
  make("application_1_0008", "tony-final.xml", "<configuration/>", forty_days);
  record("intermediate/application_1_0008", forty_days);

  TonyResult dry = runner_.Run({"gc", "--dry-run"}, 30000);
  EXPECT_EQ(dry.exit_code, 0) << Describe(dry);
  EXPECT_NE(dry.out.find("would remove " + jobs + "application_1_0001"), std::string::npos)
      << dry.out;
  EXPECT_NE(dry.out.find("would remove " + jobs + "application_1_0002"), std::string::npos);
  EXPECT_EQ(dry.out.find("application_1_0003"), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find("application_1_0004"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("would remove " + history + "finished/application_1_0005 (history"),
            std::string::npos)
      << dry.out;
  EXPECT_EQ(dry.out.find("application_1_0006"), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find("application_1_0007"), std::string::npos) << dry.out;
  for (const char* id : {"application_1_0001", "application_1_0002"}) {
    EXPECT_TRUE(fs::exists(jobs + id)) << "--dry-run removed " << id;
  }

  TonyResult forever = runner_.Run({"gc", "--conf", "tony.history.retention-sec=0"}, 30000);
  EXPECT_EQ(forever.exit_code, 0) << Describe(forever);
  EXPECT_NE(forever.out.find("kept forever"), std::string::npos) << forever.out;
  EXPECT_TRUE(fs::exists(jobs + "application_1_0001"));

  TonyResult gc = runner_.Run({"gc"}, 30000);
  EXPECT_EQ(gc.exit_code, 0) << Describe(gc);
  EXPECT_NE(gc.out.find("removed " + jobs + "application_1_0001"), std::string::npos) << gc.out;
  EXPECT_FALSE(fs::exists(jobs + "application_1_0001"));
  EXPECT_FALSE(fs::exists(jobs + "application_1_0002"));
  EXPECT_TRUE(fs::exists(jobs + "application_1_0003"));
  EXPECT_TRUE(fs::exists(jobs + "application_1_0004"));
  EXPECT_FALSE(fs::exists(history + "finished/application_1_0005"));
  EXPECT_TRUE(fs::exists(history + "finished/application_1_0006"));
  EXPECT_TRUE(fs::exists(history + "intermediate/application_1_0007")) << "not ended: kept";
  EXPECT_FALSE(fs::exists(history + "intermediate/application_1_0008")) << "its AM is gone";
  EXPECT_NE(gc.out.find("removed " + jobs + "application_1_0009 (final status recorded; "),
            std::string::npos)
      << gc.out;
  EXPECT_NE(gc.out.find("; keeping its outputs, " + jobs + "application_1_0009/outputs)"),
            std::string::npos)
      << gc.out;
  EXPECT_TRUE(fs::exists(jobs + "application_1_0009/outputs/model.pt"));
  EXPECT_FALSE(fs::exists(jobs + "application_1_0009/final-status.json"));

  kill(*am, SIGKILL);
  ASSERT_TRUE(WaitForExit(*am).ok());
  // Its AM gone, the old directory has ended too.
  TonyResult after = runner_.Run({"gc"}, 30000);
  EXPECT_NE(after.out.find("removed " + jobs + "application_1_0004"), std::string::npos)
      << after.out;
  EXPECT_EQ(after.out.find("application_1_0009"), std::string::npos)
      << "only its outputs are left:\n"
      << after.out;
  SetAge(jobs + "application_1_0009", forty_days);
  TonyResult outputs = runner_.Run({"gc", "--outputs"}, 30000);
  EXPECT_EQ(outputs.exit_code, 0) << Describe(outputs);
  EXPECT_NE(outputs.out.find("removed " + jobs + "application_1_0009"), std::string::npos)
      << outputs.out;
  EXPECT_FALSE(fs::exists(jobs + "application_1_0009"));

  TonyResult bad = runner_.Run({"gc", "--conf", "tony.history.retention-sec=soon"}, 30000);
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("tony.history.retention-sec"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace tony::testing
