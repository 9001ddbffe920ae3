#include "history/history_reader.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace tony::history {
namespace {

TEST(HistoryReaderTest, LogNamesParseBackIntoTheirTask) {
  std::optional<LogFile> file = ParseLogName(LogFileName("data-loader", 12, 3, "stderr"));
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->type, "data-loader");
  EXPECT_EQ(file->index, 12);
  EXPECT_EQ(file->attempt, 3);
  EXPECT_EQ(file->stream, "stderr");
  EXPECT_EQ(file->Task(), "data-loader:12");
  for (const char* bad :
       {"", "worker-0-0", "worker-0-0.log", "worker-0.stdout", "-0-0.stdout", "worker-x-0.stdout",
        "worker-0--1.stdout", "worker-0-99999999999.stdout", "worker--0.stdout", ".stdout"}) {
    EXPECT_FALSE(ParseLogName(bad).has_value()) << bad;
  }
}

TEST(HistoryReaderTest, FindsAJobAndListsItsLogsInOrder) {
  char pattern[] = "/tmp/tony_reader_XXXXXX";
  const std::string root = mkdtemp(pattern);
  std::shared_ptr<HistoryFs> fs = LocalHistoryFs();
  const HistoryDirs dirs = DirsAt(root, "", "");
  EXPECT_EQ(FindJob(*fs, dirs, "app_1").status().code(), absl::StatusCode::kNotFound);
  const std::string dir = dirs.intermediate + "/app_1";
  ASSERT_TRUE(fs->MakeDirs(dir + "/logs").ok());
  for (const char* name : {"worker-1-0.stdout", "worker-0-1.stdout", "worker-0-0.stderr",
                           "worker-0-0.stdout", "ps-0-0.stdout", "junk.txt"}) {
    ASSERT_TRUE(fs->Append(dir + "/logs/" + name, "x").ok());
  }
  absl::StatusOr<JobLocation> found = FindJob(*fs, dirs, "app_1");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_FALSE(found->finished);
  absl::StatusOr<std::vector<LogFile>> logs = ListLogs(*fs, found->dir);
  ASSERT_TRUE(logs.ok()) << logs.status();
  std::vector<std::string> names;
  for (const LogFile& log : *logs) names.push_back(log.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"ps-0-0.stdout", "worker-0-0.stdout", "worker-0-0.stderr",
                                      "worker-0-1.stdout", "worker-1-0.stdout"}));
  ASSERT_TRUE(fs->MakeDirs(dirs.finished).ok());
  ASSERT_TRUE(fs->Rename(dir, dirs.finished + "/app_1").ok());
  found = FindJob(*fs, dirs, "app_1");
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found->finished);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace tony::history
