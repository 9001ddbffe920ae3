#include "hadoop/common/hadoop_conf.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace tony::hadoop {
namespace {

namespace fs = std::filesystem;

class HadoopConfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tony-hconf-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& properties) {
    std::ofstream(dir_ / name) << "<configuration>" << properties << "</configuration>\n";
  }
  fs::path dir_;
};

TEST_F(HadoopConfTest, DefaultsAndVariableExpansion) {
  Write("yarn-site.xml",
        "<property><name>yarn.resourcemanager.hostname</name><value>rm.example</value></property>");
  absl::StatusOr<HadoopConf> conf = HadoopConf::Load({dir_.string()});
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->ResourceManagerAddress()->ToString(), "rm.example:8032");
  EXPECT_EQ(conf->SchedulerAddress()->ToString(), "rm.example:8030");
  EXPECT_EQ(conf->NameNodeHttpAddress()->ToString(), "0.0.0.0:9870");
  EXPECT_EQ(conf->DefaultFs(), "file:///");
}

TEST_F(HadoopConfTest, SiteFilesOverrideAndAddressErrorsNameTheKey) {
  Write("core-site.xml",
        "<property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:9000</value></property>");
  Write("yarn-site.xml",
        "<property><name>yarn.resourcemanager.address</name><value>127.0.0.1:41234</value>"
        "</property><property><name>yarn.resourcemanager.scheduler.address</name>"
        "<value>nohost</value></property>");
  absl::StatusOr<HadoopConf> conf = HadoopConf::Load({dir_.string()});
  ASSERT_TRUE(conf.ok());
  EXPECT_EQ(conf->DefaultFs(), "hdfs://127.0.0.1:9000");
  EXPECT_EQ(conf->ResourceManagerAddress()->port, 41234);
  absl::StatusOr<HostPort> bad = conf->SchedulerAddress();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("yarn.resourcemanager.scheduler.address ("),
            std::string::npos)
      << bad.status();
}

TEST_F(HadoopConfTest, ResourceManagerHaAddressesArePerRmId) {
  // As an HA cluster's clients get it: no single-server address, rm2 named by its host only.
  Write("yarn-site.xml",
        "<property><name>yarn.resourcemanager.ha.enabled</name><value>true</value></property>"
        "<property><name>yarn.resourcemanager.ha.rm-ids</name><value>rm1, rm2</value></property>"
        "<property><name>yarn.resourcemanager.address.rm1</name><value>a.example:18032</value>"
        "</property><property><name>yarn.resourcemanager.hostname.rm2</name>"
        "<value>b.example</value></property>");
  absl::StatusOr<HadoopConf> conf = HadoopConf::Load({dir_.string()});
  ASSERT_TRUE(conf.ok()) << conf.status();
  absl::StatusOr<std::vector<ServerAddress>> rms =
      conf->RmAddresses("yarn.resourcemanager.address");
  ASSERT_TRUE(rms.ok()) << rms.status();
  ASSERT_EQ(rms->size(), 2u);
  EXPECT_EQ((*rms)[0].Name(), "rm1 (a.example:18032)");
  EXPECT_EQ((*rms)[1].Name(), "rm2 (b.example:8032)");
  absl::StatusOr<std::vector<ServerAddress>> schedulers =
      conf->RmAddresses("yarn.resourcemanager.scheduler.address");
  ASSERT_FALSE(schedulers.ok()) << "rm1 has neither a scheduler address nor a host name";
  EXPECT_EQ(std::string(schedulers.status().message()),
            "ResourceManager HA: neither yarn.resourcemanager.scheduler.address.rm1 nor "
            "yarn.resourcemanager.hostname.rm1 is set, but yarn.resourcemanager.ha.rm-ids names "
            "rm1");
  absl::StatusOr<std::vector<ServerAddress>> web = conf->WebProxyAddresses();
  EXPECT_FALSE(web.ok());
}

TEST_F(HadoopConfTest, ResourceManagerHaNeedsTwoIds) {
  Write("yarn-site.xml",
        "<property><name>yarn.resourcemanager.ha.enabled</name><value>true</value></property>"
        "<property><name>yarn.resourcemanager.ha.rm-ids</name><value>rm1</value></property>");
  absl::StatusOr<HadoopConf> conf = HadoopConf::Load({dir_.string()});
  ASSERT_TRUE(conf.ok());
  absl::StatusOr<std::vector<ServerAddress>> rms =
      conf->RmAddresses("yarn.resourcemanager.address");
  ASSERT_FALSE(rms.ok());
  EXPECT_NE(std::string(rms.status().message()).find("yarn.resourcemanager.ha.rm-ids"),
            std::string::npos)
      << rms.status();
}

TEST_F(HadoopConfTest, WithoutHaTheOneAddress) {
  Write("yarn-site.xml",
        "<property><name>yarn.resourcemanager.ha.rm-ids</name><value>rm1,rm2</value></property>"
        "<property><name>yarn.resourcemanager.hostname</name><value>rm.example</value></property>");
  absl::StatusOr<HadoopConf> conf = HadoopConf::Load({dir_.string()});
  ASSERT_TRUE(conf.ok());
  absl::StatusOr<std::vector<ServerAddress>> rms =
      conf->RmAddresses("yarn.resourcemanager.address");
  ASSERT_TRUE(rms.ok()) << rms.status();
  ASSERT_EQ(rms->size(), 1u);
  EXPECT_EQ((*rms)[0].Name(), "rm.example:8032");
  absl::StatusOr<std::vector<ServerAddress>> web = conf->WebProxyAddresses();
  ASSERT_TRUE(web.ok());
  EXPECT_EQ((*web)[0].Name(), "rm.example:8088");
}

TEST_F(HadoopConfTest, MissingDirectoryIsAnError) {
  absl::StatusOr<HadoopConf> conf = HadoopConf::Load({(dir_ / "nope").string()});
  EXPECT_EQ(conf.status().code(), absl::StatusCode::kNotFound);
}

TEST(HadoopUserTest, HadoopUserNameWins) {
  setenv("HADOOP_USER_NAME", "alice", 1);
  EXPECT_EQ(HadoopUser(), "alice");
  unsetenv("HADOOP_USER_NAME");
  EXPECT_FALSE(HadoopUser().empty());
}

}  // namespace
}  // namespace tony::hadoop
