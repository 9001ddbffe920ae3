#include "cluster/yarn/hdfs_namenodes.h"

#include <gtest/gtest.h>

#include "common/strings.h"
#include "hadoop/common/temp_conf_dir.h"

namespace tony::cluster {
namespace {

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

class HdfsNameNodesTest : public ::testing::Test {
 protected:
  // A ViewFS default file system over two NameNodes: /user on nn1, /data on nn2 (at
  // /warehouse), nothing else.
  HdfsNameNodes ViewFs() {
    conf_ = std::make_shared<const hadoop::HadoopConf>(
        dir_.Load("core-site.xml",
                  {{"fs.defaultFS", "viewfs://c/"},
                   {"fs.viewfs.mounttable.c.link./user", "hdfs://nn1.example:8020/user"},
                   {"fs.viewfs.mounttable.c.link./data", "hdfs://nn2.example:8020/warehouse"},
                   {"fs.viewfs.mounttable.c.link./web", "http://web.example/"}}));
    return HdfsNameNodes({conf_, "hdfs://nn1.example:8020", {"alice", nullptr, {}}, {}},
                         &default_client_);
  }

  hadoop::TempConfDir dir_;
  std::shared_ptr<const hadoop::HadoopConf> conf_;
  hadoop::WebHdfsClient default_client_{"nn1.example:9870", "alice"};
};

TEST_F(HdfsNameNodesTest, ThroughTheMountTableToEachNameNode) {
  HdfsNameNodes namenodes = ViewFs();
  absl::StatusOr<hadoop::YarnUrl> mine = namenodes.Resolve("hdfs:///user/alice//x.zip");
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(mine->ToString(), "hdfs://nn1.example:8020/user/alice/x.zip");
  EXPECT_TRUE(namenodes.OnDefault(*mine));
  absl::StatusOr<hadoop::WebHdfsClient*> client = namenodes.ClientFor(*mine);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(*client, &default_client_);

  absl::StatusOr<hadoop::YarnUrl> data = namenodes.Resolve("hdfs:///data/set/part-0");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->ToString(), "hdfs://nn2.example:8020/warehouse/set/part-0");
  EXPECT_FALSE(namenodes.OnDefault(*data));
  client = namenodes.ClientFor(*data);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_NE(*client, &default_client_);
  // One client per NameNode, made once.
  absl::StatusOr<hadoop::WebHdfsClient*> again =
      namenodes.ClientFor(*namenodes.Resolve("hdfs:///data/other"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *client);
}

TEST_F(HdfsNameNodesTest, AUriThatNamesItsNameNodeIsTakenAsItIs) {
  HdfsNameNodes namenodes = ViewFs();
  absl::StatusOr<hadoop::YarnUrl> url = namenodes.Resolve("hdfs://nn2.example:8020/data/x");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->ToString(), "hdfs://nn2.example:8020/data/x");
  EXPECT_FALSE(namenodes.OnDefault(*url));
  // The default port is the default NameNode's too.
  url = namenodes.Resolve("hdfs://nn1.example/user/alice/x");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_TRUE(namenodes.OnDefault(*url));
}

TEST_F(HdfsNameNodesTest, WhatCannotBeLocalizedIsNamed) {
  HdfsNameNodes namenodes = ViewFs();
  struct Case {
    const char* uri;
    const char* why;
  };
  for (const Case& c :
       {Case{"s3a://bucket/x", "s3a://bucket/x: only hdfs:// paths can be localized"},
        Case{"hdfs:///tmp/x", "hdfs:///tmp/x: "},  // under no link, no fallback
        Case{"hdfs:///web/x", "this is http://web.example/x, not on HDFS"}}) {
    absl::StatusOr<hadoop::YarnUrl> url = namenodes.Resolve(c.uri);
    ASSERT_FALSE(url.ok()) << c.uri;
    EXPECT_EQ(url.status().code(), absl::StatusCode::kInvalidArgument) << url.status();
    EXPECT_NE(Message(url.status()).find(c.why), std::string::npos) << url.status();
  }
}

TEST_F(HdfsNameNodesTest, WithoutAConfigurationOnlyTheDefaultFileSystem) {
  HdfsNameNodes namenodes({nullptr, "hdfs://nn1.example:8020", {"alice", nullptr, {}}, {}},
                          &default_client_);
  absl::StatusOr<hadoop::YarnUrl> mine = namenodes.Resolve("hdfs:///user/alice/x");
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(mine->ToString(), "hdfs://nn1.example:8020/user/alice/x");
  absl::StatusOr<hadoop::YarnUrl> other = namenodes.Resolve("hdfs://nn2.example:8020/x");
  ASSERT_TRUE(other.ok()) << other.status();
  absl::StatusOr<hadoop::WebHdfsClient*> client = namenodes.ClientFor(*other);
  ASSERT_FALSE(client.ok());
  EXPECT_NE(
      Message(client.status()).find("not on the cluster's file system hdfs://nn1.example:8020"),
      std::string::npos)
      << client.status();
}

}  // namespace
}  // namespace tony::cluster
