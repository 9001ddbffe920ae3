#include "cluster/yarn/job_tokens.h"

#include <gtest/gtest.h>

#include "common/strings.h"
#include "hadoop/common/temp_conf_dir.h"

namespace tony::cluster {
namespace {

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

// A ViewFS default file system over two NameNodes (by RPC address, as mount tables name them),
// with a KMS.
std::map<std::string, std::string> ViewFsSite() {
  return {{"fs.defaultFS", "viewfs://c/"},
          {"fs.viewfs.mounttable.c.link./data", "hdfs://10.0.0.2:8020/data"},
          {"fs.viewfs.mounttable.c.link./user", "hdfs://10.0.0.1:8020/user"},
          {"fs.viewfs.mounttable.c.link./tmp", "hdfs://10.0.0.1:8020/tmp"},
          {"fs.viewfs.mounttable.c.link./web", "http://web.example/"},
          {"hadoop.security.key.provider.path", "kms://http@10.0.0.9:9600/kms"}};
}

TEST(JobTokensTest, TonysFileSystemFirstThenTheMountTablesThenTheOthersEachOnce) {
  hadoop::TempConfDir dir;
  const hadoop::HadoopConf conf = dir.Load("core-site.xml", ViewFsSite());
  absl::StatusOr<JobTokens> tokens =
      JobTokens::Resolve(conf, "hdfs://10.0.0.1:8020", {"hdfs://10.0.0.3:8020", "hdfs://10.0.0.2"});
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  // /user's NameNode once although two links name it; 10.0.0.2 once although named twice; no
  // token of an http:// target.
  EXPECT_EQ(tokens->file_systems(),
            (std::vector<std::string>{"hdfs://10.0.0.1:8020", "hdfs://10.0.0.2:8020",
                                      "hdfs://10.0.0.3:8020"}));
  ASSERT_EQ(tokens->namenodes().size(), 3u);
  EXPECT_EQ(tokens->namenodes().front().authority, "10.0.0.1:8020");
  ASSERT_EQ(tokens->key_servers().size(), 1u);
  EXPECT_EQ(tokens->key_servers().front().uri, "kms://http@10.0.0.9:9600/kms");

  absl::StatusOr<hadoop::NameService> covered =
      hadoop::ResolveNameService(conf, "hdfs://10.0.0.2:8020");
  ASSERT_TRUE(covered.ok()) << covered.status();
  EXPECT_TRUE(tokens->Covers(*covered));
  absl::StatusOr<hadoop::NameService> other =
      hadoop::ResolveNameService(conf, "hdfs://10.0.0.4:8020");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(tokens->Covers(*other));
}

TEST(JobTokensTest, WithoutViewFsTheDefaultFileSystemAndTheOthers) {
  hadoop::TempConfDir dir;
  const hadoop::HadoopConf conf =
      dir.Load("core-site.xml", {{"fs.defaultFS", "hdfs://10.0.0.1:8020"}});
  absl::StatusOr<JobTokens> tokens =
      JobTokens::Resolve(conf, "hdfs://10.0.0.1:8020", {"hdfs://10.0.0.5:9000"});
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_EQ(tokens->file_systems(),
            (std::vector<std::string>{"hdfs://10.0.0.1:8020", "hdfs://10.0.0.5:9000"}));
  EXPECT_TRUE(tokens->key_servers().empty());
}

TEST(JobTokensTest, ErrorsNameTheKey) {
  hadoop::TempConfDir dir;
  const hadoop::HadoopConf conf =
      dir.Load("core-site.xml", {{"fs.defaultFS", "hdfs://10.0.0.1:8020"}});
  absl::StatusOr<JobTokens> tokens =
      JobTokens::Resolve(conf, "hdfs://10.0.0.1:8020", {"s3a://bucket"});
  ASSERT_FALSE(tokens.ok());
  EXPECT_EQ(tokens.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Message(tokens.status()).starts_with("tony.other.namenodes: ")) << tokens.status();

  hadoop::TempConfDir bad_kms;
  const hadoop::HadoopConf kms_conf =
      bad_kms.Load("core-site.xml", {{"fs.defaultFS", "hdfs://10.0.0.1:8020"},
                                     {"hadoop.security.key.provider.path", "kms://ftp@k:1/kms"}});
  tokens = JobTokens::Resolve(kms_conf, "hdfs://10.0.0.1:8020", {});
  ASSERT_FALSE(tokens.ok());
  EXPECT_TRUE(Message(tokens.status()).starts_with("hadoop.security.key.provider.path: "))
      << tokens.status();
}

}  // namespace
}  // namespace tony::cluster
