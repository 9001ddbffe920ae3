// The retention of job directories and the removal of a job's working files, on real temporary
// directories with set modification times, real processes as AMs, and a fake clock.

#include "cluster/local/job_dir_retention.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cluster/local/job_dir_cleanup.h"
#include "cluster/local/local_container_allocator.h"
#include "common/files.h"
#include "common/process.h"
#include "common/strings.h"

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kNowMs = 1'800'000'000'000;  // the fake clock's wall time
constexpr int64_t kDayMs = 86'400'000;

class JobDirRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tony-retention-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    home_ = pattern;
    fs::create_directories(home_ + "/jobs");
  }
  void TearDown() override {
    for (pid_t pid : children_) {
      kill(pid, SIGKILL);
      (void)WaitForExit(pid);
    }
    std::error_code ec;
    fs::remove_all(home_, ec);
  }

  // A job directory with `files` (name -> content), everything in it last changed `age_ms` ago.
  std::string MakeJobDir(const std::string& app_id, const std::map<std::string, std::string>& files,
                         int64_t age_ms) {
    std::string dir = home_;
    dir.append("/jobs/").append(app_id);
    fs::create_directories(dir + "/logs");
    for (const auto& [name, content] : files) std::ofstream(StrCat(dir, "/", name)) << content;
    SetAge(dir, age_ms);
    return dir;
  }
  // Sets the modification time of `dir` and its top-level entries to `age_ms` before the clock.
  static void SetAge(const std::string& dir, int64_t age_ms) {
    const int64_t at = kNowMs - age_ms;
    const timespec times[2] = {{at / 1000, (at % 1000) * 1000000},
                               {at / 1000, (at % 1000) * 1000000}};
    for (const auto& entry : fs::directory_iterator(dir)) {
      ASSERT_EQ(utimensat(AT_FDCWD, entry.path().c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
    }
    ASSERT_EQ(utimensat(AT_FDCWD, dir.c_str(), times, 0), 0);
  }
  // A live process that carries `env` (e.g. an AM's TONY_JOB_DIR).
  pid_t LiveProcess(const std::map<std::string, std::string>& env) {
    SpawnOptions spawn;
    spawn.argv = {"/bin/sleep", "60"};
    spawn.set_env = env;
    absl::StatusOr<pid_t> pid = Spawn(spawn);
    EXPECT_TRUE(pid.ok());
    children_.push_back(*pid);
    return *pid;
  }
  std::vector<std::string> ExpiredIds(int64_t retention_sec) const {
    JobDirRetention retention(home_, retention_sec, &clock_);
    std::vector<std::string> ids;
    for (const ExpiredJobDir& dir : retention.FindExpired()) ids.push_back(dir.app_id);
    return ids;
  }

  std::string home_;
  FakeClock clock_{kNowMs};
  std::vector<pid_t> children_;
};

TEST_F(JobDirRetentionTest, OnlyEndedDirectoriesOlderThanTheRetentionExpire) {
  MakeJobDir("application_1_0001", {{"final-status.json", "{}"}}, 40 * kDayMs);
  MakeJobDir("application_1_0002", {{"final-status.json", "{}"}}, 2 * kDayMs);
  MakeJobDir("application_1_0003", {}, 40 * kDayMs);  // a YARN job's local copy
  const std::string running = home_ + "/jobs/application_1_0004";
  const pid_t am = LiveProcess({{"TONY_JOB_DIR", running}});
  MakeJobDir("application_1_0004", {{"am.pid", AmPidRecord(am)}}, 40 * kDayMs);
  // A live process that is not this job's AM (the pid was reused).
  const pid_t other = LiveProcess({{"TONY_JOB_DIR", home_ + "/jobs/elsewhere"}});
  MakeJobDir("application_1_0005", {{"am.pid", AmPidRecord(other)}}, 40 * kDayMs);
  MakeJobDir("not_a_job", {}, 40 * kDayMs);
  MakeJobDir("application_2_0001", {{"final-status.json", "{}"}}, 31 * kDayMs);

  EXPECT_EQ(ExpiredIds(int64_t{30} * 86400),
            (std::vector<std::string>{"application_1_0001", "application_1_0003",
                                      "application_1_0005", "application_2_0001"}));
  EXPECT_EQ(
      ExpiredIds(int64_t{1} * 86400),
      (std::vector<std::string>{"application_1_0001", "application_1_0002", "application_1_0003",
                                "application_1_0005", "application_2_0001"}));
  EXPECT_TRUE(ExpiredIds(0).empty());
  EXPECT_TRUE(ExpiredIds(-1).empty());
}

TEST_F(JobDirRetentionTest, JobEndedFromItsFilesAndTheProcessTable) {
  const std::string dir = MakeJobDir("application_1_0001", {}, 0);
  EXPECT_EQ(JobEndedBecause(dir), "no AM on this machine");
  const pid_t am = LiveProcess({{"TONY_JOB_DIR", dir}});
  const std::string record = AmPidRecord(am);
  ASSERT_TRUE(WriteFile(dir + "/am.pid", record).ok());
  EXPECT_EQ(JobEndedBecause(dir), std::nullopt);
  // The right pid with another start time: the pid was reused.
  ASSERT_TRUE(WriteFile(dir + "/am.pid", std::to_string(am) + " 1\n").ok());
  ASSERT_TRUE(JobEndedBecause(dir).has_value());
  EXPECT_NE(JobEndedBecause(dir)->find("another process's now"), std::string::npos);
  // An am.pid of an older tony (the pid alone): the job's marker decides.
  ASSERT_TRUE(WriteFile(dir + "/am.pid", std::to_string(am) + "\n").ok());
  EXPECT_EQ(FindAm(dir).state, AmProcess::State::kRunning);
  // An am.pid that names nothing (emptied, or of another format) cannot tell.
  for (const char* text : {"", "garbage\n", "1 2 3\n"}) {
    ASSERT_TRUE(WriteFile(dir + "/am.pid", text).ok());
    EXPECT_EQ(JobEndedBecause(dir), std::nullopt) << text;
    EXPECT_EQ(FindAm(dir).state, AmProcess::State::kUnknown) << text;
  }
  // The AM's TONY_JOB_DIR spelled another way is still this directory.
  const pid_t spelled = LiveProcess({{"TONY_JOB_DIR", home_ + "/jobs/../jobs/application_1_0001"}});
  ASSERT_TRUE(WriteFile(dir + "/am.pid", AmPidRecord(spelled)).ok());
  EXPECT_EQ(JobEndedBecause(dir), std::nullopt);

  kill(am, SIGKILL);
  ASSERT_TRUE(WaitForExit(am).ok());
  children_.erase(children_.begin());
  ASSERT_TRUE(WriteFile(dir + "/am.pid", record).ok());
  ASSERT_TRUE(JobEndedBecause(dir).has_value());
  EXPECT_NE(JobEndedBecause(dir)->find("has exited"), std::string::npos);
  ASSERT_TRUE(WriteFile(dir + "/final-status.json", "{}").ok());
  EXPECT_EQ(JobEndedBecause(dir), "final status recorded");
}

TEST_F(JobDirRetentionTest, OnlyTheJobsOwnAmIsEverSignalled) {
  const std::string dir = MakeJobDir("application_1_0001", {}, 0);
  // A process of this user that is not the job's AM, named by a well-formed am.pid (a reused pid,
  // or a hand-made file).
  const pid_t stranger = LiveProcess({});
  ASSERT_TRUE(WriteFile(dir + "/am.pid", AmPidRecord(stranger)).ok());
  EXPECT_EQ(FindAm(dir).state, AmProcess::State::kGone);
  EXPECT_FALSE(SignalAm(dir, stranger, SIGTERM));
  EXPECT_FALSE(PollExit(stranger).value_or(std::nullopt).has_value())
      << "the stranger was signalled";

  const pid_t am = LiveProcess({{"TONY_JOB_DIR", dir}});
  ASSERT_TRUE(WriteFile(dir + "/am.pid", AmPidRecord(am)).ok());
  EXPECT_EQ(FindAm(dir).state, AmProcess::State::kRunning);
  EXPECT_FALSE(SignalAm(dir, stranger, SIGTERM)) << "only the pid am.pid names";
  ASSERT_TRUE(SignalAm(dir, am, SIGTERM));
  absl::StatusOr<ExitStatus> status = WaitForExit(am);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->signal, SIGTERM);
  std::erase(children_, am);
}

TEST_F(JobDirRetentionTest, AgeIsTheNewestChangeOfTheDirectoryAndItsEntries) {
  const std::string dir =
      MakeJobDir("application_1_0001", {{"final-status.json", "{}"}, {"am.log", ""}}, 40 * kDayMs);
  EXPECT_EQ(NewestChangeMs(dir), kNowMs - 40 * kDayMs);
  const int64_t at = kNowMs - kDayMs;
  const timespec times[2] = {{at / 1000, 0}, {at / 1000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, (dir + "/am.log").c_str(), times, 0), 0);
  EXPECT_EQ(NewestChangeMs(dir), at / 1000 * 1000);
  EXPECT_TRUE(ExpiredIds(int64_t{30} * 86400).empty());
}

TEST_F(JobDirRetentionTest, RemoveDeletesTheWholeDirectory) {
  const std::string dir = MakeJobDir("application_1_0001", {{"final-status.json", "{}"}}, 0);
  fs::create_directories(dir + "/containers/c1/ro/inner");
  fs::permissions(dir + "/containers/c1/ro", fs::perms::owner_read | fs::perms::owner_exec,
                  fs::perm_options::replace);
  JobDirRetention retention(home_, 1, &clock_);
  ASSERT_TRUE(retention.Remove({"application_1_0001", dir, 0, ""}).ok());
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(retention.Remove({"application_1_0001", dir, 0, ""}).ok()) << "already gone";
}

// A job's outputs outlive its directory: the rest goes; a directory with nothing but its outputs
// is not expired again; `tony gc --outputs` takes them too; an empty outputs/ is nothing to keep.
TEST_F(JobDirRetentionTest, TheOutputsStayUnlessTheyAreAskedFor) {
  const std::string kept = MakeJobDir("application_1_0001", {{"final-status.json", "{}"}}, 0);
  fs::create_directories(kept + "/outputs/run");
  std::ofstream(kept + "/outputs/run/model.pt") << "weights";
  const std::string empty = MakeJobDir("application_1_0002", {{"final-status.json", "{}"}}, 0);
  fs::create_directories(empty + "/outputs");
  SetAge(kept, 40 * kDayMs);
  SetAge(empty, 40 * kDayMs);

  JobDirRetention retention(home_, 86400, &clock_);
  std::vector<ExpiredJobDir> expired = retention.FindExpired();
  ASSERT_EQ(expired.size(), 2u);
  EXPECT_TRUE(expired[0].keeps_outputs);
  EXPECT_FALSE(expired[1].keeps_outputs);
  for (const ExpiredJobDir& dir : expired) ASSERT_TRUE(retention.Remove(dir).ok()) << dir.path;
  EXPECT_EQ(ReadFile(kept + "/outputs/run/model.pt").value_or(""), "weights");
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(kept)) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"outputs"});
  EXPECT_FALSE(fs::exists(empty));

  SetAge(kept, 40 * kDayMs);
  EXPECT_TRUE(retention.FindExpired().empty()) << "only its outputs are left";

  JobDirRetention with_outputs(home_, 86400, &clock_, /*remove_outputs=*/true);
  expired = with_outputs.FindExpired();
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_FALSE(expired[0].keeps_outputs);
  ASSERT_TRUE(with_outputs.Remove(expired[0]).ok());
  EXPECT_FALSE(fs::exists(kept));
}

// The local allocator's end of a job: what goes, what stays, and a final status it cannot write.
class LocalAllocatorCleanupTest : public JobDirRetentionTest {
 protected:
  std::string StagedJobDir() {
    std::string dir = MakeJobDir(
        "application_1_0001",
        {{"src.zip", "zip"}, {"venv.zip", "zip"}, {"tony-final.xml", ""}, {"am.log", "log"}}, 0);
    for (const char* sub : {"containers/container_1_0001_01_000002/venv", "secrets", "resources",
                            "logs/container_1_0001_01_000002"}) {
      fs::create_directories(dir + "/" + sub);
    }
    std::ofstream(dir + "/logs/container_1_0001_01_000002/stdout") << "out";
    return dir;
  }
  absl::Status EndJob(const std::string& dir, FinalStatus final_status, bool keep) {
    LocalAllocatorOptions options;
    options.app_id = "application_1_0001";
    options.job_dir = dir;
    options.keep_work_dirs_on_failure = keep;
    LocalContainerAllocator allocator(options);
    EXPECT_TRUE(allocator.Start("127.0.0.1", 1, "", {}).ok());
    absl::Status finished = allocator.Finish(final_status, "", "{}");
    allocator.Shutdown();
    return finished;
  }
};

TEST_F(LocalAllocatorCleanupTest, ASucceededJobKeepsOnlyItsRecordAndLogs) {
  const std::string dir = StagedJobDir();
  ASSERT_TRUE(EndJob(dir, FinalStatus::kSucceeded, /*keep=*/true).ok());
  for (const char* gone : {"containers", "secrets", "src.zip", "venv.zip", "resources"}) {
    EXPECT_FALSE(fs::exists(dir + "/" + gone)) << gone;
  }
  for (const char* kept : {"final-status.json", "tony-final.xml", "am.log",
                           "logs/container_1_0001_01_000002/stdout"}) {
    EXPECT_TRUE(fs::exists(dir + "/" + kept)) << kept;
  }
}

TEST_F(LocalAllocatorCleanupTest, AFailedJobKeepsItsWorkFilesOnlyWhenAsked) {
  const std::string kept = StagedJobDir();
  ASSERT_TRUE(EndJob(kept, FinalStatus::kFailed, /*keep=*/true).ok());
  for (const char* path : {"containers/container_1_0001_01_000002/venv", "secrets", "src.zip"}) {
    EXPECT_TRUE(fs::exists(kept + "/" + path)) << path;
  }
  fs::remove_all(kept);
  const std::string removed = StagedJobDir();
  ASSERT_TRUE(EndJob(removed, FinalStatus::kFailed, /*keep=*/false).ok());
  EXPECT_FALSE(fs::exists(removed + "/containers"));
  EXPECT_FALSE(fs::exists(removed + "/src.zip"));
}

TEST_F(LocalAllocatorCleanupTest, AFinalStatusThatCannotBeWrittenIsAnErrorAndKeepsTheStagedFiles) {
  const std::string dir = StagedJobDir();
  // A directory in the way makes the rename of the written file fail, as a full disk would fail
  // its write.
  fs::create_directories(dir + "/final-status.json/in-the-way");
  absl::Status finished = EndJob(dir, FinalStatus::kSucceeded, /*keep=*/false);
  ASSERT_FALSE(finished.ok());
  EXPECT_NE(finished.message().find("final-status.json"), std::string::npos) << finished;
  EXPECT_FALSE(fs::exists(dir + "/containers")) << "working directories go to make room";
  EXPECT_TRUE(fs::exists(dir + "/src.zip")) << "a retried AM needs the staged files";
}

}  // namespace
}  // namespace tony::cluster
