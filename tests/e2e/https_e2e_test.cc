// tony on a cluster whose web endpoints serve HTTPS only (scripts/hadoop-minicluster start DIR
// --https: dfs.http.policy and yarn.http.policy HTTPS_ONLY, a test CA, ssl-client.xml and its JKS
// truststore in DIR), given only the cluster's client configuration: the client stages the job and
// the AM writes its history over WebHDFS with TLS, trusting the CA of ssl-client.xml, and the
// links go to the HTTPS web proxy. A truststore that does not trust the NameNode, none at all, or
// one that cannot be opened is one line naming it, exit 2, with nothing staged (and `tony list`,
// which needs no WebHDFS, still works).

#include <fstream>
#include <regex>

#include "e2e/backend_fixture.h"

namespace tony::testing {
namespace {

class HttpsE2eTest : public BackendE2eTest {
 protected:
  void SetUp() override {
    BackendE2eTest::SetUp();
    if (IsSkipped()) return;
    if (ReadAll(fs::path(conf_dir_) / "minicluster.env").find("MINICLUSTER_HTTPS=true") ==
        std::string::npos) {
      GTEST_SKIP() << conf_dir_ << " is not an --https cluster";
    }
  }

  // A copy of the cluster's client configuration, with `ssl_client` as its ssl-client.xml (none
  // when empty).
  std::string ConfWith(const std::string& ssl_client) {
    const std::string dir = runner_.work_dir() + "/conf";
    fs::create_directories(dir);
    for (const char* name : {"core-site.xml", "hdfs-site.xml", "yarn-site.xml"}) {
      fs::copy_file(fs::path(conf_dir_) / name, fs::path(dir) / name,
                    fs::copy_options::overwrite_existing);
    }
    if (!ssl_client.empty()) std::ofstream(dir + "/ssl-client.xml") << ssl_client;
    return dir;
  }
  static std::string SslClient(const std::string& truststore, const std::string& password) {
    return "<configuration>\n<property><name>ssl.client.truststore.location</name><value>" +
           truststore +
           "</value></property>\n<property><name>ssl.client.truststore.password</name><value>" +
           password + "</value></property>\n</configuration>\n";
  }
  TonyResult SubmitWith(const std::string& conf_dir) {
    std::map<std::string, std::string> env = Env();
    env["HADOOP_CONF_DIR"] = conf_dir;
    env.erase("YARN_CONF_DIR");
    return runner_.Run(Submit({"tony.worker.instances=1"}, "echo never"), 120000, env);
  }
  // Refused: exit 2, one line with `text`, nothing started, and nothing of the application it
  // may have reserved left on HDFS.
  void ExpectRefused(const TonyResult& r, const std::string& text) {
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_NE(r.err.find(text), std::string::npos) << Describe(r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err;
    EXPECT_EQ(r.out.find("submitted"), std::string::npos) << r.out;
    std::smatch app;
    if (std::regex_search(r.err, app, std::regex(R"(application_\d+_\d+)"))) {
      absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster_->Hdfs();
      ASSERT_TRUE(hdfs.ok()) << hdfs.status();
      EXPECT_EQ(hdfs->GetFileStatus("/user/" + cluster_->user() + "/.tony/" + app[0].str())
                    .status()
                    .code(),
                absl::StatusCode::kNotFound);
    }
  }
};

TEST_P(HttpsE2eTest, TheJobIsStagedAndItsHistoryWrittenOverHttps) {
  // The NameNode serves no plain HTTP here: every WebHDFS call below went over TLS.
  const std::string hdfs_site = ReadAll(fs::path(conf_dir_) / "hdfs-site.xml");
  ASSERT_NE(hdfs_site.find("<value>HTTPS_ONLY</value>"), std::string::npos) << hdfs_site;
  ASSERT_EQ(hdfs_site.find("dfs.namenode.http-address"), std::string::npos) << hdfs_site;

  TonyResult r = Run(Submit({"tony.worker.instances=2"}, "echo over-tls-$TASK_INDEX"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  // The AM wrote the history with the CA the client shipped it.
  absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster_->Hdfs();
  ASSERT_TRUE(hdfs.ok()) << hdfs.status();
  absl::StatusOr<std::string> job =
      hdfs->Open("/user/" + cluster_->user() + "/.tony/history/finished/" + r.app_id + "/job.json");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_NE(job->find("SUCCEEDED"), std::string::npos) << *job;
  // The RM's links are its HTTPS web proxy's, the tasks' logs their NodeManagers' HTTPS pages.
  EXPECT_NE(r.out.find("tracking URL https://"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"( https://[^ ]+/node/containerlogs/)")))
      << r.out;
}

TEST_P(HttpsE2eTest, ATruststoreWithoutTheClustersCaIsOneLineNamingIt) {
  // Two CAs, neither the cluster's.
  const std::string other = TonyRunner::SourcePath("src/hadoop/http/testdata/truststore/two.jks");
  TonyResult r = SubmitWith(ConfWith(SslClient(other, "changeit")));
  ExpectRefused(r, "TLS certificate is not trusted by the truststore " + other);
}

TEST_P(HttpsE2eTest, WithoutSslClientXmlTheSystemsAuthoritiesDoNotTrustATestCa) {
  TonyResult r = SubmitWith(ConfWith(""));
  ExpectRefused(r, "TLS certificate is not trusted by the system's certificate authorities");
}

TEST_P(HttpsE2eTest, ATruststoreThatCannotBeOpenedNamesTheKeyAndTheFile) {
  const std::string truststore = conf_dir_ + "/truststore.jks";
  TonyResult r = SubmitWith(ConfWith(SslClient(truststore, "not-the-password")));
  ExpectRefused(r, "ssl.client.truststore.location in ");
  EXPECT_NE(r.err.find(truststore + ": the keystore's integrity check failed"), std::string::npos)
      << Describe(r);
  // What needs no WebHDFS still works with it.
  std::map<std::string, std::string> env = Env();
  env["HADOOP_CONF_DIR"] = runner_.work_dir() + "/conf";
  env.erase("YARN_CONF_DIR");
  TonyResult list = runner_.Run({"list", "--backend", "yarn"}, 60000, env);
  EXPECT_EQ(list.exit_code, 0) << Describe(list);
}

INSTANTIATE_TEST_SUITE_P(Backends, HttpsE2eTest, ::testing::Values("yarn"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tony::testing
