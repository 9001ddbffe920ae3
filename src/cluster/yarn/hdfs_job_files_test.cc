#include "cluster/yarn/hdfs_job_files.h"

#include <gtest/gtest.h>

#include "common/strings.h"
#include "hadoop/common/temp_conf_dir.h"

namespace tony::cluster {
namespace {

TEST(LocateTonyHomeTest, OnTheDefaultFileSystem) {
  hadoop::TempConfDir dir;
  const hadoop::HadoopConf conf = dir.Load("core-site.xml", {{"fs.defaultFS", "hdfs://ns1"}});
  absl::StatusOr<TonyHome> home = LocateTonyHome(conf, "alice");
  ASSERT_TRUE(home.ok()) << home.status();
  EXPECT_EQ(home->fs, "hdfs://ns1");
  EXPECT_EQ(home->root, "/user/alice/.tony");
}

TEST(LocateTonyHomeTest, ThroughTheMountTable) {
  hadoop::TempConfDir dir;
  const hadoop::HadoopConf conf =
      dir.Load("core-site.xml", {{"fs.defaultFS", "viewfs://c/"},
                                 {"fs.viewfs.mounttable.c.homedir", "/home"},
                                 {"fs.viewfs.mounttable.c.link./home", "hdfs://ns2/users"},
                                 {"fs.viewfs.mounttable.c.link./web", "http://web.example/"}});
  absl::StatusOr<TonyHome> home = LocateTonyHome(conf, "alice");
  ASSERT_TRUE(home.ok()) << home.status();
  EXPECT_EQ(home->fs, "hdfs://ns2");
  EXPECT_EQ(home->root, "/users/alice/.tony");
}

TEST(LocateTonyHomeTest, ADirectoryNotOnHdfsOrUnderNoLinkNamesFsDefaultFs) {
  hadoop::TempConfDir dir;
  const hadoop::HadoopConf conf =
      dir.Load("core-site.xml", {{"fs.defaultFS", "viewfs://c/"},
                                 {"fs.viewfs.mounttable.c.link./user", "http://web.example/u"}});
  absl::StatusOr<TonyHome> home = LocateTonyHome(conf, "alice");
  ASSERT_FALSE(home.ok());
  EXPECT_EQ(home.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(ToStd(home.status().message()));
  EXPECT_TRUE(message.starts_with("fs.defaultFS (viewfs://c/): ")) << message;
  EXPECT_NE(message.find("not on HDFS"), std::string::npos) << message;

  hadoop::TempConfDir none;
  const hadoop::HadoopConf nolink = none.Load(
      "core-site.xml",
      {{"fs.defaultFS", "viewfs://c/"}, {"fs.viewfs.mounttable.c.link./data", "hdfs://ns1/data"}});
  home = LocateTonyHome(nolink, "alice");
  ASSERT_FALSE(home.ok());
  EXPECT_TRUE(
      std::string(ToStd(home.status().message())).starts_with("fs.defaultFS (viewfs://c/): "))
      << home.status();
}

}  // namespace
}  // namespace tony::cluster
