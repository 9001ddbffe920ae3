#include "hadoop/hdfs/nameservice.h"

#include <gtest/gtest.h>

#include <map>

#include "common/strings.h"
#include "hadoop/common/temp_conf_dir.h"
#include "hadoop/ipc/failover.h"

namespace tony::hadoop {
namespace {

class NameServiceTest : public ::testing::Test {
 protected:
  HadoopConf Conf(const std::map<std::string, std::string>& hdfs_site) {
    return dir_.Load("hdfs-site.xml", hdfs_site);
  }

  // An HA cluster's client configuration, as Hadoop's documentation writes it.
  std::map<std::string, std::string> HaSite() {
    return {{"dfs.nameservices", "ns1"},
            {"dfs.ha.namenodes.ns1", "nn1, nn2"},
            {"dfs.namenode.rpc-address.ns1.nn1", "10.0.0.1:8020"},
            {"dfs.namenode.rpc-address.ns1.nn2", "10.0.0.2:8020"},
            {"dfs.namenode.http-address.ns1.nn1", "10.0.0.1:9870"},
            {"dfs.namenode.http-address.ns1.nn2", "10.0.0.2:9871"},
            {"dfs.client.failover.proxy.provider.ns1",
             "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider"}};
  }

  TempConfDir dir_;
};

TEST_F(NameServiceTest, AnotherNameNodeServesWebHdfsOnItsOwnHost) {
  // The generic http-address is the default NameNode's; another NameNode (tony.other.namenodes,
  // a resource's hdfs://host:port) is asked on its own host, at that key's port.
  const HadoopConf conf = Conf({{"dfs.namenode.rpc-address", "nn1.example:8020"},
                                {"dfs.namenode.http-address", "nn1.example:9870"}});
  absl::StatusOr<NameService> own = ResolveNameService(conf, "hdfs://nn1.example:8020/x");
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(own->namenodes[0].http.ToString(), "nn1.example:9870");
  absl::StatusOr<NameService> other = ResolveNameService(conf, "hdfs://nn2.example/x");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->authority, "nn2.example:8020");
  EXPECT_EQ(other->namenodes[0].http.ToString(), "nn2.example:9870");
}

TEST_F(NameServiceTest, OneNameNodeByHostAndPort) {
  const HadoopConf conf = Conf({{"dfs.namenode.http-address", "0.0.0.0:50070"}});
  absl::StatusOr<NameService> service = ResolveNameService(conf, "hdfs://127.0.0.1:9000/user/a");
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_FALSE(service->ha);
  EXPECT_EQ(service->authority, "127.0.0.1:9000");
  ASSERT_EQ(service->namenodes.size(), 1u);
  EXPECT_EQ(service->namenodes[0].rpc.ToString(), "127.0.0.1:9000");
  // A wildcard host in the HTTP address is the NameNode's own.
  EXPECT_EQ(service->namenodes[0].http.ToString(), "127.0.0.1:50070");
  EXPECT_EQ(service->TokenService(), "127.0.0.1:9000");
  EXPECT_EQ(FormatServerList(service->HttpTargets()), "127.0.0.1:50070");
}

TEST_F(NameServiceTest, DefaultRpcPortIs8020) {
  absl::StatusOr<NameService> service = ResolveNameService(Conf({}), "hdfs://127.0.0.1/x");
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_EQ(service->namenodes[0].rpc.ToString(), "127.0.0.1:8020");
  EXPECT_EQ(service->namenodes[0].http.ToString(), "127.0.0.1:9870");
}

TEST_F(NameServiceTest, HaNameServiceHasEachNameNodeUnderItsId) {
  absl::StatusOr<NameService> service = ResolveNameService(Conf(HaSite()), "hdfs://ns1/user/a");
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_TRUE(service->ha);
  EXPECT_EQ(service->Uri(), "hdfs://ns1");
  ASSERT_EQ(service->namenodes.size(), 2u);
  EXPECT_EQ(service->namenodes[1].id, "nn2");
  EXPECT_EQ(FormatServerList(service->RpcTargets()), "nn1=10.0.0.1:8020,nn2=10.0.0.2:8020");
  EXPECT_EQ(FormatServerList(service->HttpTargets()), "nn1=10.0.0.1:9870,nn2=10.0.0.2:9871");
  // The logical token, good at either NameNode, as Hadoop's clients look it up.
  EXPECT_EQ(service->TokenService(), "ha-hdfs:ns1");
}

TEST_F(NameServiceTest, HttpsOnlyMeansEachNameNodesHttpsAddress) {
  std::map<std::string, std::string> site = HaSite();
  site["dfs.http.policy"] = "HTTPS_ONLY";
  site["dfs.namenode.https-address.ns1.nn1"] = "10.0.0.1:9471";
  // nn2's HTTPS address is unset: its RPC host with the generic key's port (its default 9871).
  absl::StatusOr<NameService> service = ResolveNameService(Conf(site), "hdfs://ns1");
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_TRUE(service->https);
  EXPECT_EQ(service->WebHdfsServers(), "https://nn1=10.0.0.1:9471,nn2=10.0.0.2:9871");

  const HadoopConf one = Conf({{"dfs.http.policy", "HTTPS_ONLY"},
                               {"dfs.namenode.http-address", "0.0.0.0:9870"},
                               {"dfs.namenode.https-address", "0.0.0.0:9443"}});
  service = ResolveNameService(one, "hdfs://10.0.0.5:8020");
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_EQ(service->WebHdfsServers(), "https://10.0.0.5:9443");
}

TEST_F(NameServiceTest, HttpAndHttpsIsSpokenOverHttpAsHadoopsWebhdfsClientsDo) {
  std::map<std::string, std::string> site = HaSite();
  site["dfs.http.policy"] = "HTTP_AND_HTTPS";
  absl::StatusOr<NameService> service = ResolveNameService(Conf(site), "hdfs://ns1");
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_FALSE(service->https);
  EXPECT_EQ(service->WebHdfsServers(), "nn1=10.0.0.1:9870,nn2=10.0.0.2:9871");
}

TEST_F(NameServiceTest, HaNameServiceKnownByItsProxyProviderAlone) {
  std::map<std::string, std::string> site = HaSite();
  site.erase("dfs.nameservices");
  absl::StatusOr<NameService> service = ResolveNameService(Conf(site), "hdfs://ns1");
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_TRUE(service->ha);
}

TEST_F(NameServiceTest, MissingHttpAddressIsTheRpcHostWithTheDefaultPort) {
  std::map<std::string, std::string> site = HaSite();
  site.erase("dfs.namenode.http-address.ns1.nn2");
  absl::StatusOr<NameService> service = ResolveNameService(Conf(site), "hdfs://ns1");
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_EQ(service->namenodes[1].http.ToString(), "10.0.0.2:9870");
}

TEST_F(NameServiceTest, MissingRpcAddressNamesTheKey) {
  std::map<std::string, std::string> site = HaSite();
  site.erase("dfs.namenode.rpc-address.ns1.nn2");
  absl::StatusOr<NameService> service = ResolveNameService(Conf(site), "hdfs://ns1");
  EXPECT_EQ(service.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(service.status().message(),
            "NameNode HA: dfs.namenode.rpc-address.ns1.nn2 is not set, but dfs.ha.namenodes.ns1 "
            "names nn2");
}

TEST_F(NameServiceTest, BadRpcAddressNamesTheKey) {
  std::map<std::string, std::string> site = HaSite();
  site["dfs.namenode.rpc-address.ns1.nn1"] = "10.0.0.1";
  absl::StatusOr<NameService> service = ResolveNameService(Conf(site), "hdfs://ns1");
  EXPECT_EQ(service.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ToStd(service.status().message()).starts_with("dfs.namenode.rpc-address.ns1.nn1: "))
      << service.status();
}

TEST_F(NameServiceTest, FederatedNameServiceWithoutHa) {
  const HadoopConf conf = Conf({{"dfs.nameservices", "ns1,ns2"},
                                {"dfs.namenode.rpc-address.ns2", "10.0.0.3:8020"},
                                {"dfs.namenode.http-address.ns2", "10.0.0.3:9870"}});
  absl::StatusOr<NameService> service = ResolveNameService(conf, "hdfs://ns2/data");
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_FALSE(service->ha);
  EXPECT_EQ(service->TokenService(), "10.0.0.3:8020");
  absl::StatusOr<NameService> unknown = ResolveNameService(conf, "hdfs://ns1/data");
  EXPECT_EQ(unknown.status().message(),
            "hdfs://ns1 is a nameservice (dfs.nameservices), but neither dfs.ha.namenodes.ns1 "
            "nor dfs.namenode.rpc-address.ns1 is set");
}

TEST_F(NameServiceTest, AFederatedNameNodeByItsRpcAddressHasItsOwnHttpAddress) {
  const HadoopConf conf = Conf({{"dfs.nameservices", "ns1,ns2"},
                                {"dfs.namenode.http-address", "0.0.0.0:9870"},
                                {"dfs.namenode.rpc-address.ns1", "127.0.0.1:8020"},
                                {"dfs.namenode.http-address.ns1", "127.0.0.1:9870"},
                                {"dfs.namenode.rpc-address.ns2", "127.0.0.1:8021"},
                                {"dfs.namenode.http-address.ns2", "127.0.0.1:9871"}});
  absl::StatusOr<NameService> service = ResolveNameService(conf, "hdfs://127.0.0.1:8021/data");
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_EQ(service->WebHdfsServers(), "127.0.0.1:9871");
  // The token of a NameNode named by address is by address, as Hadoop's clients name it.
  EXPECT_EQ(service->TokenService(), "127.0.0.1:8021");
  service = ResolveNameService(conf, "hdfs://127.0.0.1:8022/data");
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_EQ(service->WebHdfsServers(), "127.0.0.1:9870");
}

TEST_F(NameServiceTest, NotAnHdfsUri) {
  EXPECT_EQ(ResolveNameService(Conf({}), "viewfs://cluster/x").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveNameService(Conf({}), "hdfs:///x").status().message(),
            "'hdfs:///x' names no NameNode");
}

TEST_F(NameServiceTest, DefaultNameServiceNamesFsDefaultFs) {
  std::map<std::string, std::string> site = HaSite();
  site.erase("dfs.namenode.rpc-address.ns1.nn1");
  site["fs.defaultFS"] = "hdfs://ns1";
  absl::StatusOr<NameService> service = DefaultNameService(Conf(site));
  EXPECT_TRUE(ToStd(service.status().message())
                  .starts_with("fs.defaultFS (hdfs://ns1): NameNode HA: "
                               "dfs.namenode.rpc-address.ns1.nn1 is not set"))
      << service.status();
}

}  // namespace
}  // namespace tony::hadoop
