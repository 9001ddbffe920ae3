// tony on a cluster whose default file system is ViewFS (scripts/hadoop-minicluster start DIR
// --viewfs: HDFS federated over two NameNodes, fs.defaultFS=viewfs://minicluster/ with /user and
// /tmp on the first, /data and the rest on the second), given only that client configuration:
// the job is staged, and its history written, where the mount table puts the user's directory;
// its tasks read a file on one NameNode and write one on the other through the ViewFS paths, with
// the job's tokens alone on a Kerberized cluster (one per NameNode); a mount table tony cannot
// follow is one line naming the key, exit 2, nothing submitted.

#include <fstream>
#include <regex>

#include "e2e/backend_fixture.h"
#include "hadoop/http/truststore.h"

namespace tony::testing {
namespace {

class ViewFsE2eTest : public BackendE2eTest {
 protected:
  void SetUp() override {
    BackendE2eTest::SetUp();
    if (IsSkipped()) return;
    if (cluster_->Value("MINICLUSTER_VIEWFS") != "true") {
      GTEST_SKIP() << conf_dir_ << " is not a --viewfs cluster";
    }
  }

  // WebHDFS to the second NameNode (ns2: /data and the fallback), as the test's own client.
  hadoop::WebHdfsClient SecondNameNode() {
    absl::StatusOr<hadoop::HadoopConf> conf = cluster_->Conf();
    EXPECT_TRUE(conf.ok()) << conf.status();
    absl::StatusOr<hadoop::NameService> ns2 =
        hadoop::ResolveNameService(*conf, "hdfs://" + cluster_->Value("MINICLUSTER_NN2_RPC"));
    EXPECT_TRUE(ns2.ok()) << ns2.status();
    absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> login = cluster_->Login();
    EXPECT_TRUE(login.ok()) << login.status();
    hadoop::WebHdfsClient client(ns2->WebHdfsServers(),
                                 hadoop::WebHdfsAuth{cluster_->user(), *login, std::nullopt});
    if (ns2->https) {
      absl::StatusOr<hadoop::http::Tls> tls = hadoop::ClientTls(*conf);
      EXPECT_TRUE(tls.ok()) << tls.status();
      if (tls.ok()) client.SetTls(*std::move(tls));
    }
    return client;
  }

  // A copy of the cluster's client configuration with `sed` applied to core-site.xml.
  std::string EditedConf(const std::string& sed) {
    const std::string dir = runner_.work_dir() + "/conf";
    fs::create_directories(dir);
    for (const char* name : {"core-site.xml", "hdfs-site.xml", "yarn-site.xml"}) {
      fs::copy_file(fs::path(conf_dir_) / name, fs::path(dir) / name,
                    fs::copy_options::overwrite_existing);
    }
    EXPECT_EQ(std::system(("sed -i -E '" + sed + "' '" + dir + "/core-site.xml'").c_str()), 0);
    return dir;
  }
  void ExpectRefused(const std::string& conf_dir, const std::string& text) {
    std::map<std::string, std::string> env = Env();
    env["HADOOP_CONF_DIR"] = conf_dir;
    env.erase("YARN_CONF_DIR");
    TonyResult r = runner_.Run(Submit({"tony.worker.instances=1"}, "echo never"), 120000, env);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_NE(r.err.find(text), std::string::npos) << Describe(r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err;
    EXPECT_EQ(r.out.find("submitted"), std::string::npos) << r.out;
  }
};

TEST_P(ViewFsE2eTest, TasksReadOneNameNodeAndWriteTheOtherThroughTheMountTable) {
  ASSERT_TRUE(fs::exists(PyDepsDir() + "/hdfs_native"))
      << "hdfs-native is not in " << PyDepsDir() << ": run scripts/install-pydeps";
  absl::StatusOr<hadoop::WebHdfsClient> first = cluster_->Hdfs();
  ASSERT_TRUE(first.ok()) << first.status();
  hadoop::WebHdfsClient second = SecondNameNode();
  // The input on ns2 (/data), the output on ns1 (/user): paths of the tasks' default file system,
  // viewfs://minicluster/.
  const std::string name = fs::path(runner_.work_dir()).filename().string();
  const std::string input = "/data/" + name + "/input.txt";
  const std::string out = "/user/" + cluster_->user() + "/" + name;
  ASSERT_TRUE(second.Create(input, "first line\nsecond\n").ok());
  ASSERT_TRUE(first->Mkdirs(out).ok());
  std::vector<std::string> args = Submit({"tony.worker.instances=1", "tony.worker.memory=256m"},
                                         "/usr/bin/python3 hdfs_io.py " + input + " " + out);
  args.insert(args.end(), {"--shell_env", "PYTHONPATH=" + PyDepsDir()});
  TonyResult r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  absl::StatusOr<std::string> written = first->Open(out + "/worker-0");
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, "worker-0 read 2 lines: first line");
  // Staged and recorded where the mount table puts the user's directory: ns1's /user.
  absl::StatusOr<std::string> job = first->Open(
      "/user/" + cluster_->user() + "/.tony/history/finished/" + r.app_id + "/job.json");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_NE(job->find("SUCCEEDED"), std::string::npos) << *job;
  (void)first->Delete(out, /*recursive=*/true);
  (void)second.Delete("/data/" + name, /*recursive=*/true);
}

TEST_P(ViewFsE2eTest, AMountTableTonyCannotFollowIsOneLineNamingTheKey) {
  // A kind of link tony does not read.
  ExpectRefused(EditedConf("s#</configuration>#<property><name>fs.viewfs.mounttable.minicluster."
                           "linkMerge./merged</name><value>hdfs://127.0.0.1:1/a</value>"
                           "</property></configuration>#"),
                "fs.viewfs.mounttable.minicluster.linkMerge./merged: tony reads ViewFS's link, "
                "linkFallback and homedir, not linkMerge");
  // The user's directory under no link and no fallback.
  ExpectRefused(EditedConf("s#<property><name>fs.viewfs.mounttable.minicluster.(link./user|"
                           "linkFallback)</name><value>[^<]*</value></property>##"),
                "/.tony: no mount point of the ViewFS table 'minicluster' holds it");
}

TEST_P(ViewFsE2eTest, ResourcesOnEitherNameNodeAreLocalized) {
  // /data is on ns2, the user's directory (where tony's own files are) on ns1: the client stats
  // the resource on ns2 and the AM looks it up there, through the mount table (hdfs:///data/...)
  // or named directly (hdfs://<ns2>/data/...); the NodeManager fetches it with the job's ns2 token.
  absl::StatusOr<hadoop::WebHdfsClient> first = cluster_->Hdfs();
  ASSERT_TRUE(first.ok()) << first.status();
  hadoop::WebHdfsClient second = SecondNameNode();
  const std::string name = fs::path(runner_.work_dir()).filename().string();
  const std::string dir = "/data/" + name;
  ASSERT_TRUE(second.Create(dir + "/through-table.txt", "from ns2 through the table\n").ok());
  ASSERT_TRUE(second.Create(dir + "/named.txt", "from ns2 by name\n").ok());
  // And one on ns1, under /user, through the table too.
  const std::string mine = "/user/" + cluster_->user() + "/" + name + "-mine.txt";
  ASSERT_TRUE(first->Create(mine, "from ns1\n").ok());
  const std::string named = "hdfs://" + cluster_->Value("MINICLUSTER_NN2_RPC") + dir + "/named.txt";
  TonyResult r = Run(Submit(
      {"tony.worker.instances=1", "tony.worker.memory=256m",
       "tony.worker.resources=hdfs://" + dir + "/through-table.txt," + named + ",hdfs://" + mine},
      "cat through-table.txt named.txt " + name + "-mine.txt"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string out = TaskStdout(r);
  EXPECT_NE(out.find("from ns2 through the table\nfrom ns2 by name\nfrom ns1\n"), std::string::npos)
      << out;
  (void)second.Delete(dir, /*recursive=*/true);
  (void)first->Delete(mine, /*recursive=*/false);
}

TEST_P(ViewFsE2eTest, AResourceOnANameNodeWithoutATokenIsRefused) {
  // A NameNode neither the mount table nor tony.other.namenodes names: the job would get no
  // token of it, so the NodeManagers could not fetch the file.
  TonyResult r = Run(Submit(
      {"tony.worker.instances=1", "tony.worker.resources=hdfs://127.0.0.1:1/x.zip"}, "echo never"));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("hdfs://127.0.0.1:1/x.zip: the job gets no delegation token of "
                       "hdfs://127.0.0.1:1, so YARN could not localize it; name it in "
                       "tony.other.namenodes"),
            std::string::npos)
      << Describe(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err;
  EXPECT_EQ(r.out.find("submitted"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Backends, ViewFsE2eTest, ::testing::Values("yarn"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tony::testing
