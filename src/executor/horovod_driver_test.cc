#include "executor/horovod_driver.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace tony::executor {
namespace {

namespace fs = std::filesystem;

class HorovodDriverWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/horovod_driver_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }
  static void Touch(const fs::path& path) { std::ofstream(path) << "[]"; }

  fs::path root_;
};

TEST_F(HorovodDriverWatchTest, FindsThePortTheDriverWrote) {
  absl::StatusOr<HorovodDriverWatch> watch = HorovodDriverWatch::Create(root_ / "driver");
  ASSERT_TRUE(watch.ok()) << watch.status();
  struct stat info {};
  ASSERT_EQ(stat(watch->dir().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  EXPECT_EQ(watch->FindPort(), std::nullopt);
  Touch(root_ / "driver" / "something_else");
  EXPECT_EQ(watch->FindPort(), std::nullopt);
  Touch(root_ / "driver" / (std::string("41234") + kDriverPortFileSuffix));
  EXPECT_EQ(watch->FindPort(), 41234);
}

TEST_F(HorovodDriverWatchTest, IgnoresFilesThatNameNoPort) {
  absl::StatusOr<HorovodDriverWatch> watch = HorovodDriverWatch::Create(root_ / "driver");
  ASSERT_TRUE(watch.ok()) << watch.status();
  for (const char* prefix : {"", "0", "65536", "-1", "12ab", " 80", "99999999999"}) {
    Touch(root_ / "driver" / (std::string(prefix) + kDriverPortFileSuffix));
  }
  EXPECT_EQ(watch->FindPort(), std::nullopt);
}

// A restarted driver starts from an empty directory: an old attempt's port is not published again.
TEST_F(HorovodDriverWatchTest, CreateEmptiesTheDirectory) {
  fs::create_directories(root_ / "driver");
  Touch(root_ / "driver" / (std::string("5000") + kDriverPortFileSuffix));
  absl::StatusOr<HorovodDriverWatch> watch = HorovodDriverWatch::Create(root_ / "driver");
  ASSERT_TRUE(watch.ok()) << watch.status();
  EXPECT_EQ(watch->FindPort(), std::nullopt);
}

}  // namespace
}  // namespace tony::executor
