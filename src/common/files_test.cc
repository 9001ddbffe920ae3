#include "common/files.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

// The lines, or one line with the error.
std::vector<std::string> Tail(const std::string& path, int max_lines) {
  auto lines = ReadTailLines(path, max_lines);
  if (!lines.ok()) return {lines.status().ToString()};
  return *lines;
}

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/tony_files_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const std::string& name : Entries()) unlink((dir_ + "/" + name).c_str());
    rmdir(dir_.c_str());
  }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    DIR* dir = opendir(dir_.c_str());
    if (dir == nullptr) return names;
    while (dirent* entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
    return names;
  }

  std::string dir_;
};

TEST_F(FilesTest, WriteThenReadAndOverwrite) {
  const std::string path = dir_ + "/a.txt";
  ASSERT_TRUE(WriteFile(path, "first").ok());
  EXPECT_EQ(ReadFile(path).value_or("?"), "first");
  std::string binary("x\0y\n", 4);
  ASSERT_TRUE(WriteFile(path, binary).ok());
  EXPECT_EQ(ReadFile(path).value_or("?"), binary);
  ASSERT_TRUE(WriteFile(path, "").ok());
  EXPECT_EQ(ReadFile(path).value_or("?"), "");
  EXPECT_EQ(Entries(), std::vector<std::string>{"a.txt"});  // No temporary file left.
}

TEST_F(FilesTest, WriteFileAppliesTheModeExactly) {
  const std::string secret = dir_ + "/secret";
  ASSERT_TRUE(WriteFile(secret, "token", 0600).ok());
  struct stat info {};
  ASSERT_EQ(stat(secret.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0600u);
  // Not narrowed by the umask either.
  mode_t old_mask = umask(0077);
  const std::string shared = dir_ + "/shared";
  absl::Status status = WriteFile(shared, "x", 0644);
  umask(old_mask);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(stat(shared.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0644u);
}

TEST_F(FilesTest, ErrorsNameThePath) {
  const std::string missing = dir_ + "/missing";
  auto content = ReadFile(missing);
  ASSERT_FALSE(content.ok());
  EXPECT_EQ(content.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(content.status().message(), "cannot read '" + missing + "': No such file or directory");
  auto tail = ReadTailLines(missing, 3);
  ASSERT_FALSE(tail.ok());
  EXPECT_NE(tail.status().message().find(missing), std::string::npos);
  absl::Status write = WriteFile(dir_ + "/no/such/dir/file", "x");
  ASSERT_FALSE(write.ok());
  EXPECT_NE(write.message().find(dir_ + "/no/such/dir/file"), std::string::npos) << write;
}

TEST_F(FilesTest, ReadTailLinesWithFewerLinesThanAsked) {
  const std::string path = dir_ + "/log";
  ASSERT_TRUE(WriteFile(path, "one\ntwo\nthree\n").ok());
  EXPECT_EQ(Tail(path, 10), (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_TRUE(Tail(path, 0).empty());
}

TEST_F(FilesTest, ReadTailLinesWithMoreLinesThanAsked) {
  const std::string path = dir_ + "/log";
  std::string content;
  for (int i = 1; i <= 10; ++i) absl::StrAppend(&content, "line ", i, "\n");
  ASSERT_TRUE(WriteFile(path, content).ok());
  EXPECT_EQ(Tail(path, 3), (std::vector<std::string>{"line 8", "line 9", "line 10"}));
}

TEST_F(FilesTest, ReadTailLinesWithoutTrailingNewline) {
  const std::string path = dir_ + "/log";
  ASSERT_TRUE(WriteFile(path, "a\n\nb\nlast").ok());
  EXPECT_EQ(Tail(path, 3), (std::vector<std::string>{"", "b", "last"}));
  ASSERT_TRUE(WriteFile(path, "").ok());
  EXPECT_TRUE(Tail(path, 3).empty());
  ASSERT_TRUE(WriteFile(path, "\n").ok());
  EXPECT_EQ(Tail(path, 3), (std::vector<std::string>{""}));
}

TEST_F(FilesTest, ReadTailLinesOfALargeFileReadsOnlyItsEnd) {
  const std::string path = dir_ + "/log";
  std::string content;
  for (int i = 0; i < 20000; ++i) absl::StrAppend(&content, "line number ", i, "\n");
  ASSERT_GT(content.size(), 64u * 1024);
  ASSERT_TRUE(WriteFile(path, content).ok());
  auto lines = ReadTailLines(path, 100000);
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_FALSE(lines->empty());
  EXPECT_EQ(lines->back(), "line number 19999");
  // The first line returned is whole, not the cut end of an earlier one.
  EXPECT_TRUE(lines->front().starts_with("line number ")) << lines->front();
  EXPECT_EQ(lines->size(), 20000 - std::stoul(lines->front().substr(12)));

  // One line longer than the window: its end comes back.
  ASSERT_TRUE(WriteFile(path, std::string(size_t{100} * 1024, 'x') + "\n").ok());
  auto long_line = ReadTailLines(path, 5);
  ASSERT_TRUE(long_line.ok());
  ASSERT_EQ(long_line->size(), 1u);
  EXPECT_EQ(long_line->front(), std::string(64 * 1024 - 1, 'x'));
}

}  // namespace
}  // namespace tony

namespace tony {
namespace {

class PrivateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/tony_private_dir_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    const std::string command = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(command.c_str()), 0);
  }
  mode_t Mode(const std::string& path) const {
    struct stat info {};
    EXPECT_EQ(lstat(path.c_str(), &info), 0) << path;
    return info.st_mode & 07777;
  }
  std::string dir_;
};

TEST_F(PrivateDirTest, CreatesEveryLevelPrivateWhateverTheUmask) {
  const mode_t old = umask(0);
  const absl::Status made = EnsurePrivateDir(dir_ + "/home/jobs");
  umask(old);
  ASSERT_TRUE(made.ok()) << made;
  EXPECT_EQ(Mode(dir_ + "/home"), 0700u);
  EXPECT_EQ(Mode(dir_ + "/home/jobs"), 0700u);
  EXPECT_TRUE(EnsurePrivateDir(dir_ + "/home/jobs").ok()) << "an existing private one is fine";
}

TEST_F(PrivateDirTest, RefusesWhatOthersMayWriteALinkOrAFile) {
  ASSERT_EQ(mkdir((dir_ + "/open").c_str(), 0700), 0);
  ASSERT_EQ(chmod((dir_ + "/open").c_str(), 0777), 0);
  absl::Status open = EnsurePrivateDir(dir_ + "/open");
  EXPECT_EQ(open.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(open.message(), "'" + dir_ + "/open' is writable by others (mode 0777): chmod go-w '" +
                                dir_ + "/open'");
  // Readable by others on purpose: only what others may write is refused.
  ASSERT_EQ(chmod((dir_ + "/open").c_str(), 0755), 0);
  EXPECT_TRUE(EnsurePrivateDir(dir_ + "/open").ok()) << "readable by others is the user's choice";

  ASSERT_EQ(symlink((dir_ + "/open").c_str(), (dir_ + "/link").c_str()), 0);
  absl::Status link = EnsurePrivateDir(dir_ + "/link");
  EXPECT_EQ(link.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(link.message().find("symbolic link"), std::string::npos) << link;
  EXPECT_TRUE(EnsurePrivateDir(dir_ + "/link", /*follow_link=*/true).ok());

  ASSERT_TRUE(WriteFile(dir_ + "/file", "x").ok());
  EXPECT_EQ(EnsurePrivateDir(dir_ + "/file").code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tony
