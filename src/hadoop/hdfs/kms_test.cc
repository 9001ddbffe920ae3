#include "hadoop/hdfs/kms.h"

#include <gtest/gtest.h>

#include "common/strings.h"
#include "hadoop/common/temp_conf_dir.h"

namespace tony::hadoop {
namespace {

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

TEST(KmsProviderTest, OneHost) {
  absl::StatusOr<KmsProvider> kms = ParseKmsProvider("kms://http@kms1.example.com:9600/kms");
  ASSERT_TRUE(kms.ok()) << kms.status();
  EXPECT_EQ(kms->uri, "kms://http@kms1.example.com:9600/kms");
  EXPECT_FALSE(kms->https);
  EXPECT_EQ(kms->hosts, std::vector<std::string>{"kms1.example.com"});
  EXPECT_EQ(kms->port, 9600);
  EXPECT_EQ(kms->path, "/kms");
  EXPECT_EQ(kms->RestUrl(0), "http://kms1.example.com:9600/kms/v1");
}

TEST(KmsProviderTest, SeveralHostsOverHttpsKeepTheUriAsWritten) {
  // Hadoop's load-balancing form: one KMS behind several hosts, one token for all of them.
  absl::StatusOr<KmsProvider> kms = ParseKmsProvider("kms://https@kms1;kms2;10.0.0.3:16000/kms/");
  ASSERT_TRUE(kms.ok()) << kms.status();
  EXPECT_EQ(kms->uri, "kms://https@kms1;kms2;10.0.0.3:16000/kms/");
  EXPECT_TRUE(kms->https);
  EXPECT_EQ(kms->hosts, (std::vector<std::string>{"kms1", "kms2", "10.0.0.3"}));
  EXPECT_EQ(kms->path, "/kms");
  EXPECT_EQ(kms->RestUrl(1), "https://kms2:16000/kms/v1");
}

TEST(KmsProviderTest, WithoutAPortTheProtocolsOwn) {
  absl::StatusOr<KmsProvider> kms = ParseKmsProvider("kms://http@kms1/kms");
  ASSERT_TRUE(kms.ok()) << kms.status();
  EXPECT_EQ(kms->RestUrl(0), "http://kms1:80/kms/v1");
  kms = ParseKmsProvider("kms://https@kms1;kms2/kms");
  ASSERT_TRUE(kms.ok()) << kms.status();
  EXPECT_EQ(kms->RestUrl(1), "https://kms2:443/kms/v1");
}

TEST(KmsProviderTest, MalformedUrisNameWhatIsWrong) {
  struct Case {
    const char* uri;
    const char* why;
  };
  for (const Case& c : {Case{"jceks://file@/etc/keys.jceks", "not a kms:// URI"},
                        Case{"kms://kms1:9600/kms", "no http@ or https@"},
                        Case{"kms://ftp@kms1:9600/kms", "unknown protocol 'ftp'"},
                        Case{"kms://http@kms1:96x0/kms", "bad port '96x0'"},
                        Case{"kms://http@kms1:70000/kms", "bad port '70000'"},
                        Case{"kms://http@kms1;;kms2:9600/kms", "bad host ''"},
                        Case{"kms://http@user:pw@kms1:9600/kms", "bad host 'user:pw@kms1'"},
                        Case{"kms://http@kms1:9600", "no path"}}) {
    absl::StatusOr<KmsProvider> kms = ParseKmsProvider(c.uri);
    ASSERT_FALSE(kms.ok()) << c.uri;
    EXPECT_EQ(kms.status().code(), absl::StatusCode::kInvalidArgument) << c.uri;
    EXPECT_NE(Message(kms.status()).find(c.why), std::string::npos) << kms.status();
    EXPECT_NE(Message(kms.status()).find(c.uri), std::string::npos) << kms.status();
  }
}

TEST(KmsMapAliasTest, TheFileSystemsSchemeAndAuthority) {
  EXPECT_EQ(KmsMapAlias("hdfs://ns1"), "dfs-kms-hdfs://ns1");
  EXPECT_EQ(KmsMapAlias("hdfs://127.0.0.1:8020/"), "dfs-kms-hdfs://127.0.0.1:8020");
  EXPECT_EQ(KmsMapAlias("hdfs://nn:8020/user/alice"), "dfs-kms-hdfs://nn:8020");
  EXPECT_EQ(KmsMapAlias("hdfs:///user"), "");
  EXPECT_EQ(KmsMapAlias("/user"), "");
}

TEST(KmsProvidersTest, OnlyTheKmsEntriesOfTheProviderPath) {
  TempConfDir dir;
  HadoopConf conf =
      dir.Load("core-site.xml", {{"hadoop.security.key.provider.path",
                                  "jceks://file@/etc/hadoop/keys.jceks, kms://http@kms1:9600/kms "
                                  ",kms://https@kms2:9601/kms"}});
  absl::StatusOr<std::vector<KmsProvider>> providers = KmsProviders(conf);
  ASSERT_TRUE(providers.ok()) << providers.status();
  ASSERT_EQ(providers->size(), 2u);
  EXPECT_EQ((*providers)[0].uri, "kms://http@kms1:9600/kms");
  EXPECT_EQ((*providers)[1].uri, "kms://https@kms2:9601/kms");
}

TEST(KmsProvidersTest, HadoopTwosKeyWhenTheProviderPathIsUnset) {
  TempConfDir dir;
  HadoopConf conf =
      dir.Load("hdfs-site.xml", {{"dfs.encryption.key.provider.uri", "kms://http@old:16000/kms"}});
  absl::StatusOr<std::vector<KmsProvider>> providers = KmsProviders(conf);
  ASSERT_TRUE(providers.ok()) << providers.status();
  ASSERT_EQ(providers->size(), 1u);
  EXPECT_EQ(providers->front().hosts, std::vector<std::string>{"old"});
}

TEST(KmsProvidersTest, NoneConfiguredIsNone) {
  TempConfDir dir;
  HadoopConf conf = dir.Load("core-site.xml", {{"fs.defaultFS", "hdfs://nn:8020"}});
  absl::StatusOr<std::vector<KmsProvider>> providers = KmsProviders(conf);
  ASSERT_TRUE(providers.ok()) << providers.status();
  EXPECT_TRUE(providers->empty());
}

TEST(KmsProvidersTest, AMalformedEntryNamesTheKey) {
  TempConfDir dir;
  HadoopConf conf =
      dir.Load("core-site.xml", {{"hadoop.security.key.provider.path", "kms://http@kms1:x/kms"}});
  absl::StatusOr<std::vector<KmsProvider>> providers = KmsProviders(conf);
  ASSERT_FALSE(providers.ok());
  EXPECT_EQ(providers.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Message(providers.status()).starts_with("hadoop.security.key.provider.path: "))
      << providers.status();
}

}  // namespace
}  // namespace tony::hadoop
