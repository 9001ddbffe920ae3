#include "hadoop/hdfs/viewfs.h"

#include <gtest/gtest.h>

#include <map>

#include "common/strings.h"
#include "hadoop/common/temp_conf_dir.h"

namespace tony::hadoop {
namespace {

class ViewFsTest : public ::testing::Test {
 protected:
  HadoopConf Conf(const std::map<std::string, std::string>& core_site) {
    return dir_.Load("core-site.xml", core_site);
  }

  // A cluster's table as Hadoop's documentation writes one: home directories on one nameservice,
  // data on another, the rest on a third NameNode.
  std::map<std::string, std::string> Site() {
    return {{"fs.defaultFS", "viewfs://cluster1/"},
            {"fs.viewfs.mounttable.cluster1.link./user", "hdfs://ns1/user"},
            {"fs.viewfs.mounttable.cluster1.link./data", "hdfs://ns2/warehouse/"},
            {"fs.viewfs.mounttable.cluster1.link./logs/app", "hdfs://ns1/logs"},
            {"fs.viewfs.mounttable.cluster1.link./tmp", "hdfs://nn3.example:8020/tmp"}};
  }

  TempConfDir dir_;
};

TEST_F(ViewFsTest, EachPathGoesToItsLongestMountPoint) {
  const HadoopConf conf = Conf(Site());
  absl::StatusOr<MountTable> table = LoadMountTable(conf, "viewfs://cluster1/");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->name, "cluster1");
  EXPECT_EQ(*table->Resolve("/user/alice/.tony"), "hdfs://ns1/user/alice/.tony");
  EXPECT_EQ(*table->Resolve("/user"), "hdfs://ns1/user");
  // The trailing slash of a target is dropped.
  EXPECT_EQ(*table->Resolve("/data/x/y"), "hdfs://ns2/warehouse/x/y");
  EXPECT_EQ(*table->Resolve("/logs/app/today"), "hdfs://ns1/logs/today");
  EXPECT_EQ(table->Resolve("/logs/other").status().code(), absl::StatusCode::kNotFound);
  // Whole components only: /database is under no link.
  EXPECT_EQ(table->Resolve("/database").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*ResolveViewFs(conf, "viewfs://cluster1/tmp//a/"), "hdfs://nn3.example:8020/tmp/a");
  EXPECT_EQ(*ResolveViewFs(conf, "hdfs://ns1/x"), "hdfs://ns1/x");
  EXPECT_EQ(*ResolveDefaultFsPath(conf, "/user//bob/"), "hdfs://ns1/user/bob");
}

TEST_F(ViewFsTest, EveryTargetFileSystemOnceInOrder) {
  absl::StatusOr<MountTable> table = LoadMountTable(Conf(Site()), "viewfs://cluster1");
  ASSERT_TRUE(table.ok()) << table.status();
  // The links in key order, each file system once.
  EXPECT_EQ(Join(table->TargetFileSystems(), ","), "hdfs://ns2,hdfs://ns1,hdfs://nn3.example:8020");
}

TEST_F(ViewFsTest, AFallbackTakesWhatNoLinkHolds) {
  std::map<std::string, std::string> site = Site();
  site["fs.viewfs.mounttable.cluster1.linkFallback"] = "hdfs://ns3/";
  absl::StatusOr<MountTable> table = LoadMountTable(Conf(site), "viewfs://cluster1/");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(*table->Resolve("/database/t"), "hdfs://ns3/database/t");
  EXPECT_EQ(*table->Resolve("/"), "hdfs://ns3");
  EXPECT_EQ(table->TargetFileSystems().back(), "hdfs://ns3");
}

TEST_F(ViewFsTest, ViewFsWithoutATableIsTheDefaultTable) {
  absl::StatusOr<MountTable> table = LoadMountTable(
      Conf({{"fs.viewfs.mounttable.default.link./user", "hdfs://ns1/user"}}), "viewfs:///");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->name, "default");
  // A default file system of viewfs:/// is the default table too.
  const HadoopConf no_table =
      Conf({{"fs.defaultFS", "viewfs:///"},
            {"fs.viewfs.mounttable.default.link./user", "hdfs://ns1/user"}});
  EXPECT_EQ(*ResolveDefaultFsPath(no_table, "/user/a"), "hdfs://ns1/user/a");
  table = LoadMountTable(Conf({{"fs.viewfs.mounttable.default.name.key", "mine"},
                               {"fs.viewfs.mounttable.mine.link./user", "hdfs://ns1/user"},
                               {"fs.viewfs.mounttable.mine.homedir", "/home/"}}),
                         "viewfs:///");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->name, "mine");
  EXPECT_EQ(table->homedir, "/home");
}

TEST_F(ViewFsTest, BadTablesNameTheKey) {
  struct Case {
    std::map<std::string, std::string> site;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{}, "the ViewFS mount table 'cluster1' has no links"},
      {{{"fs.viewfs.mounttable.cluster1.link./user", "ns1/user"}},
       "fs.viewfs.mounttable.cluster1.link./user='ns1/user'"},
      {{{"fs.viewfs.mounttable.cluster1.link.user", "hdfs://ns1/user"}},
       "fs.viewfs.mounttable.cluster1.link.user="},
      {{{"fs.viewfs.mounttable.cluster1.link./user", "hdfs://ns1/user"},
        {"fs.viewfs.mounttable.cluster1.linkMerge./data", "hdfs://ns1/a,hdfs://ns2/b"}},
       "fs.viewfs.mounttable.cluster1.linkMerge./data: tony reads ViewFS's link, linkFallback and "
       "homedir, not linkMerge"},
      {{{"fs.viewfs.mounttable.cluster1.link./", "hdfs://ns1/"}},
       "fs.viewfs.mounttable.cluster1.link./: a link of / is linkMergeSlash"},
      {{{"fs.viewfs.mounttable.cluster1.link./data", "hdfs://ns1/data"},
        {"fs.viewfs.mounttable.cluster1.link./data/logs", "hdfs://ns2/logs"}},
       "fs.viewfs.mounttable.cluster1.link./data/logs lies under "
       "fs.viewfs.mounttable.cluster1.link./data"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<MountTable> table = LoadMountTable(Conf(c.site), "viewfs://cluster1/");
    ASSERT_FALSE(table.ok()) << c.message;
    EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(table.status().message()).find(c.message), std::string::npos)
        << table.status();
  }
  EXPECT_EQ(LoadMountTable(Conf(Site()), "hdfs://ns1/").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tony::hadoop
