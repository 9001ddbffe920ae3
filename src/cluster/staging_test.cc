#include "cluster/staging.h"

#include <gtest/gtest.h>

namespace tony::cluster {
namespace {

TEST(StagingTest, ResourceSpecsNameTheirFileAndArchiveFlag) {
  ResourceSpec plain = ParseResourceSpec("data/plain.txt").value();
  EXPECT_EQ(plain.path, "data/plain.txt");
  EXPECT_EQ(plain.name, "plain.txt");
  EXPECT_FALSE(plain.is_archive);
  ResourceSpec renamed = ParseResourceSpec("hdfs:///user/a/d.zip::data#archive").value();
  EXPECT_EQ(renamed.path, "hdfs:///user/a/d.zip");
  EXPECT_EQ(renamed.name, "data");
  EXPECT_TRUE(renamed.is_archive);
  EXPECT_EQ(ParseResourceSpec("hdfs:///user/a/lib/").value().name, "lib");
  EXPECT_FALSE(ParseResourceSpec("x.zip#tar").ok());
  EXPECT_FALSE(ParseResourceSpec("::name").ok());
  EXPECT_FALSE(ParseResourceSpec("x::a/b").ok());
}

TEST(StagingTest, RemoteInputsAreLocalizedFromWhereTheyAreAndLocalOnesFromTheStagingDir) {
  EXPECT_TRUE(IsRemotePath("hdfs:///user/a/venv.zip"));
  EXPECT_TRUE(IsRemotePath("hdfs://nn:8020/lib"));
  EXPECT_FALSE(IsRemotePath("/tmp/venv.zip"));
  EXPECT_FALSE(IsRemotePath("hdfs.zip"));

  std::vector<LocalResource> resources = ContainerResources(
      "/stage", /*has_src=*/true, "hdfs:///envs/venv.zip",
      {"local.txt::renamed.txt", "hdfs:///user/a/lib", "hdfs:///user/a/d.zip::data#archive"});
  ASSERT_EQ(resources.size(), 5u);
  EXPECT_EQ(resources[0].source, "/stage/src.zip");
  EXPECT_EQ(resources[0].name, "");
  EXPECT_TRUE(resources[0].is_archive);
  EXPECT_EQ(resources[1].source, "hdfs:///envs/venv.zip");
  EXPECT_EQ(resources[1].name, "venv");
  EXPECT_TRUE(resources[1].is_archive);
  EXPECT_TRUE(resources[1].shared);  // the venv
  EXPECT_FALSE(resources[0].shared);
  EXPECT_EQ(resources[2].source, "/stage/resources/renamed.txt");
  EXPECT_EQ(resources[2].name, "renamed.txt");
  EXPECT_EQ(resources[3].source, "hdfs:///user/a/lib");
  EXPECT_EQ(resources[3].name, "lib");
  EXPECT_FALSE(resources[3].is_archive);
  EXPECT_EQ(resources[4].source, "hdfs:///user/a/d.zip");
  EXPECT_TRUE(resources[4].is_archive);

  EXPECT_TRUE(ContainerResources("/stage", false, "", {}).empty());
}

}  // namespace
}  // namespace tony::cluster
