#include "executor/task_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/clock.h"
#include "gtest/gtest.h"

namespace tony::executor {
namespace {

namespace fs = std::filesystem;

class TaskFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("task_files_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Append(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::app) << text;
  }

  fs::path dir_;
  FakeClock clock_;
  ProgressTracker tracker_{R"(step (?P<step>\d+))", &clock_, 0};
};

TEST_F(TaskFilesTest, OpensOnlyARegularFileItCreatesOrFinds) {
  const int fd = OpenTaskFile(Path("stdout"), O_RDONLY, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  struct stat info {};
  ASSERT_EQ(stat(Path("stdout").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  // A link (to anywhere), a FIFO (which would block an open) and a directory are refused.
  fs::create_symlink(Path("stdout"), Path("link"));
  EXPECT_EQ(OpenTaskFile(Path("link"), O_RDONLY, 0600), -1);
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0600), 0);
  EXPECT_EQ(OpenTaskFile(Path("fifo"), O_RDONLY, 0600), -1);
  fs::create_directory(Path("dir"));
  EXPECT_EQ(OpenTaskFile(Path("dir"), O_RDONLY, 0600), -1);
}

TEST_F(TaskFilesTest, FeedsWhatWasAppendedAndStartsAgainWhenTheFileWasWrittenOver) {
  const int fd = OpenTaskFile(Path("stdout"), O_RDONLY, 0600);
  ASSERT_GE(fd, 0);
  int64_t offset = 0;
  FeedTaskFile(fd, ProgressTracker::Stream::kStdout, &offset, tracker_);
  EXPECT_EQ(offset, 0);
  Append("stdout", "step 3\n");
  FeedTaskFile(fd, ProgressTracker::Stream::kStdout, &offset, tracker_);
  EXPECT_EQ(offset, 7);
  EXPECT_EQ(tracker_.progress().step(), 3);
  Append("stdout", "step 4\n");
  FeedTaskFile(fd, ProgressTracker::Stream::kStdout, &offset, tracker_);
  EXPECT_EQ(offset, 14);
  EXPECT_EQ(tracker_.progress().step(), 4);
  // Written over and shorter: read from its start.
  std::ofstream(Path("stdout"), std::ios::trunc) << "step 9\n";
  FeedTaskFile(fd, ProgressTracker::Stream::kStdout, &offset, tracker_);
  EXPECT_EQ(offset, 7);
  EXPECT_EQ(tracker_.progress().step(), 9);
  close(fd);
  int64_t none = 5;
  FeedTaskFile(-1, ProgressTracker::Stream::kStdout, &none, tracker_);
  EXPECT_EQ(none, 5);
}

TEST_F(TaskFilesTest, OnlyTheLatestBytesOfALongBurstAreRead) {
  const int fd = OpenTaskFile(Path("stdout"), O_RDONLY, 0600);
  ASSERT_GE(fd, 0);
  const std::string filler(static_cast<size_t>(kMaxProgressReadBytes), 'x');
  Append("stdout", "step 1\n" + filler + "\nstep 2\n");
  int64_t offset = 0;
  FeedTaskFile(fd, ProgressTracker::Stream::kStdout, &offset, tracker_);
  EXPECT_EQ(offset, static_cast<int64_t>(fs::file_size(Path("stdout"))));
  EXPECT_EQ(tracker_.progress().step(), 2) << "the last lines say the step";
  close(fd);
}

TEST_F(TaskFilesTest, TheReportsFileStartsAgainOnceAMegabyteOfItWasRead) {
  const int fd = OpenTaskFile(Path("progress"), O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  const std::string line = "step 7\n";
  std::string reports;
  while (static_cast<int64_t>(reports.size()) < kMaxProgressReadBytes) reports += line;
  Append("progress", reports);
  int64_t offset = 0;
  FeedTaskFile(fd, ProgressTracker::Stream::kReports, &offset, tracker_);
  EXPECT_EQ(offset, 0);
  EXPECT_EQ(fs::file_size(Path("progress")), 0u);
  // A short file is kept.
  Append("progress", line);
  FeedTaskFile(fd, ProgressTracker::Stream::kReports, &offset, tracker_);
  EXPECT_EQ(offset, static_cast<int64_t>(line.size()));
  EXPECT_EQ(fs::file_size(Path("progress")), line.size());
  close(fd);
}

TEST_F(TaskFilesTest, TheModelParametersAreTheRestOfTheFirstLineWithTheMarker) {
  const std::string marker = "Model parameters: ";
  const int fd = OpenTaskFile(Path("stdout"), O_RDONLY, 0600);
  ASSERT_GE(fd, 0);
  absl::StatusOr<std::string> params = FindModelParams(fd, marker);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(*params, "") << "an empty stdout hands nothing on";
  // The line may come after much output, split over reads, with a CR; the first one counts.
  Append("stdout", std::string(200000, 'x') + "\nloading\n");
  Append("stdout", "INFO Model parameters: --lr 0.1 --layers 4\r\nModel parameters: late\n");
  params = FindModelParams(fd, marker);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(*params, "--lr 0.1 --layers 4");
  close(fd);
  // A last line without its newline.
  Append("tail", "done\nModel parameters: a=1");
  const int tail = OpenTaskFile(Path("tail"), O_RDONLY, 0600);
  params = FindModelParams(tail, marker);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(*params, "a=1");
  close(tail);
  // A marker at the end of a very long line.
  Append("long", std::string(300000, 'y') + "Model parameters: b=2\n");
  const int lng = OpenTaskFile(Path("long"), O_RDONLY, 0600);
  params = FindModelParams(lng, marker);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(*params, "b=2");
  close(lng);
}

TEST_F(TaskFilesTest, ModelParametersPastTheLimitAreRefusedNotCut) {
  Append("stdout", "Model parameters: " + std::string(kMaxModelParamsBytes + 1, 'p') + "\n");
  const int fd = OpenTaskFile(Path("stdout"), O_RDONLY, 0600);
  absl::StatusOr<std::string> params = FindModelParams(fd, "Model parameters: ");
  ASSERT_FALSE(params.ok());
  EXPECT_NE(params.status().message().find("more than 32768 bytes"), std::string::npos)
      << params.status();
  close(fd);
  Append("exact", "Model parameters: " + std::string(kMaxModelParamsBytes, 'p'));
  const int exact = OpenTaskFile(Path("exact"), O_RDONLY, 0600);
  params = FindModelParams(exact, "Model parameters: ");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->size(), kMaxModelParamsBytes);
  close(exact);
  EXPECT_FALSE(FindModelParams(-1, "Model parameters: ").ok());
  // Bytes that are not UTF-8 could not travel to the AM: refused, not dropped.
  Append("binary", "Model parameters: caf\xc3\xa9 \xff\n");
  const int binary = OpenTaskFile(Path("binary"), O_RDONLY, 0600);
  params = FindModelParams(binary, "Model parameters: ");
  ASSERT_FALSE(params.ok());
  EXPECT_NE(params.status().message().find("not UTF-8 (byte 7)"), std::string::npos)
      << params.status();
  close(binary);
}

}  // namespace
}  // namespace tony::executor
