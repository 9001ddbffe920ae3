#include "cluster/local/kept_containers.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

class KeptContainersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_dir_ = (fs::path(::testing::TempDir()) / ("kept_" + std::to_string(getpid()))).string();
    fs::remove_all(job_dir_);
    fs::create_directories(job_dir_);
  }
  void TearDown() override { fs::remove_all(job_dir_); }
  std::string job_dir_;
};

TEST_F(KeptContainersTest, ARecordReadsBackAsItWasWrittenPrivately) {
  KeptContainer kept;
  kept.pid = 4242;
  kept.start_ticks = 987654321;
  kept.container.id = "container_1_0001_01_000002";
  kept.container.job_type = "worker";
  kept.container.host = "127.0.0.1";
  kept.container.log_dir = "/logs/c2";
  kept.container.resources.memory_mb = 512;
  kept.container.resources.vcores = 2;
  kept.container.env = {{"A", "1"}};
  kept.gpus = {1, 3};
  ASSERT_TRUE(WriteKeptContainer(job_dir_, kept).ok());
  const std::string path = KeptContainerPath(job_dir_, kept.container.id);
  EXPECT_EQ(path, job_dir_ + "/running/container_1_0001_01_000002.json");
  EXPECT_EQ(fs::status(job_dir_ + "/running").permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  const std::vector<KeptContainer> read = ReadKeptContainers(job_dir_, "app");
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].pid, 4242);
  EXPECT_EQ(read[0].start_ticks, 987654321u);
  EXPECT_EQ(read[0].container.id, kept.container.id);
  EXPECT_EQ(read[0].container.job_type, "worker");
  EXPECT_EQ(read[0].container.host, "127.0.0.1");
  EXPECT_EQ(read[0].container.log_dir, "/logs/c2");
  EXPECT_EQ(read[0].container.resources.memory_mb, 512);
  EXPECT_EQ(read[0].container.resources.vcores, 2);
  EXPECT_EQ(read[0].container.resources.gpus, 2) << "as many as it holds";
  EXPECT_EQ(read[0].container.env, kept.container.env);
  EXPECT_EQ(read[0].gpus, (std::vector<int>{1, 3}));
}

TEST_F(KeptContainersTest, AFileThatIsNoRecordIsRemovedAndLeftOut) {
  KeptContainer kept;
  kept.pid = 7;
  kept.container.id = "good";
  ASSERT_TRUE(WriteKeptContainer(job_dir_, kept).ok());
  std::ofstream(job_dir_ + "/running/garbage.json") << "{not json";
  std::ofstream(job_dir_ + "/running/partial.json") << R"({"pid": 3, "id": "x"})";
  const std::vector<KeptContainer> read = ReadKeptContainers(job_dir_, "app");
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].container.id, "good");
  EXPECT_FALSE(fs::exists(job_dir_ + "/running/garbage.json"));
  EXPECT_FALSE(fs::exists(job_dir_ + "/running/partial.json"));
  EXPECT_TRUE(ReadKeptContainers(job_dir_ + "/none", "app").empty()) << "no running/: none";
}

}  // namespace
}  // namespace tony::cluster
