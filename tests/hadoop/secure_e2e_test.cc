// tony on the Kerberized mini cluster (scripts/hadoop-minicluster start DIR --secure
// --rpc-protection privacy; TONY_TEST_HADOOP_CONF_DIR names it): the client's Kerberos logins
// (keytab, ticket cache), GSSAPI with privacy to the ResourceManager and the NameNode, SPNEGO to
// WebHDFS, delegation tokens, and each way a login or a token can be wrong. The shared backend
// suites, and yarn_e2e_test's HDFS cases (tasks that read and write HDFS with their delegation
// tokens alone, the digits example), run on this cluster too (tests/CMakeLists.txt).

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <krb5/krb5.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "common/strings.h"
#include "e2e/tony_runner.h"
#include "hadoop/common/credentials.h"
#include "hadoop/hdfs/namenode_client.h"
#include "hadoop/test_cluster.h"

namespace tony::testing {
namespace {

namespace fs = std::filesystem;

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

// A loopback port nothing listens on: bound (port 0), then closed; 0 on failure.
int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// A keytab for `principal` whose key the KDC has never seen.
void WriteWrongKeytab(const std::string& path, const std::string& principal) {
  krb5_context context = nullptr;
  ASSERT_EQ(krb5_init_context(&context), 0);
  krb5_keytab keytab = nullptr;
  ASSERT_EQ(krb5_kt_resolve(context, ("FILE:" + path).c_str(), &keytab), 0);
  for (krb5_enctype type : {ENCTYPE_AES256_CTS_HMAC_SHA1_96, ENCTYPE_AES128_CTS_HMAC_SHA1_96}) {
    krb5_keytab_entry entry{};
    ASSERT_EQ(krb5_parse_name(context, principal.c_str(), &entry.principal), 0);
    entry.vno = 1;
    ASSERT_EQ(krb5_c_make_random_key(context, type, &entry.key), 0);
    ASSERT_EQ(krb5_kt_add_entry(context, keytab, &entry), 0);
    krb5_free_keyblock_contents(context, &entry.key);
    krb5_free_principal(context, entry.principal);
  }
  krb5_kt_close(context, keytab);
  krb5_free_context(context);
}

class SecureE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = TestCluster::FromEnvironment();
    if (!cluster_) GTEST_SKIP() << "TONY_TEST_HADOOP_CONF_DIR is not set (no mini cluster)";
    if (!cluster_->secure()) GTEST_SKIP() << cluster_->conf_dir() << " is not Kerberized";
    principal_ = cluster_->Value("MINICLUSTER_USER_PRINCIPAL");
    keytab_ = cluster_->Value("MINICLUSTER_USER_KEYTAB");
    // A ticket cache at the default place would let a task authenticate without its tokens.
    ASSERT_FALSE(fs::exists("/tmp/krb5cc_" + std::to_string(getuid())))
        << "/tmp/krb5cc_" << getuid() << " exists (kdestroy it): tasks could use its ticket";
  }
  void TearDown() override {
    if (!cluster_ || !cluster_->secure()) return;
    EXPECT_TRUE(runner_.LeftoverProcesses().empty()) << "processes of the job outlived it";
  }

  std::map<std::string, std::string> Env() const {
    return cluster_->ProcessEnv(runner_.work_dir());
  }
  std::vector<std::string> Submit(const std::vector<std::string>& conf, const std::string& command,
                                  bool keytab = true) const {
    std::vector<std::string> args = {"submit",
                                     "--backend",
                                     "yarn",
                                     "--src_dir",
                                     TonyRunner::SourcePath("tests/e2e/scripts"),
                                     "--conf",
                                     "tony.am.memory=256m",
                                     "--conf",
                                     "tony.task.stop-grace-ms=1000",
                                     "--conf",
                                     "tony.containers.command=" + command};
    std::vector<std::string> all = conf;
    if (keytab) {
      for (const std::string& c : cluster_->SubmitConf()) all.push_back(c);
    }
    for (const std::string& c : all) args.insert(args.end(), {"--conf", c});
    return args;
  }
  hadoop::WebHdfsClient Hdfs() const {
    absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster_->Hdfs();
    EXPECT_TRUE(hdfs.ok()) << hdfs.status();
    return *std::move(hdfs);
  }
  // A copy of the cluster's client configuration (in the test's directory) whose
  // hadoop.security.key.provider.path is `kms`.
  std::string ConfWithKms(const std::string& kms) const {
    const std::string conf = runner_.work_dir() + "/conf";
    fs::create_directories(conf);
    for (const char* name : {"hdfs-site.xml", "yarn-site.xml"}) {
      fs::copy_file(fs::path(cluster_->conf_dir()) / name, fs::path(conf) / name,
                    fs::copy_options::overwrite_existing);
    }
    std::ifstream in(fs::path(cluster_->conf_dir()) / "core-site.xml");
    std::string core((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string old = cluster_->Value("MINICLUSTER_KMS");
    EXPECT_NE(core.find(old), std::string::npos) << core;
    if (core.find(old) != std::string::npos) core.replace(core.find(old), old.size(), kms);
    std::ofstream(conf + "/core-site.xml") << core;
    return conf;
  }
  std::string UserDir(const std::string& name) const {
    return "/user/" + cluster_->user() + "/" + name + "-" +
           fs::path(runner_.work_dir()).filename().string();
  }

  // The cluster's configuration, the test user's login and fs.defaultFS's NameNode, for the
  // cases that talk to the NameNode themselves.
  void ReachNameNode() {
    absl::StatusOr<hadoop::HadoopConf> conf = cluster_->Conf();
    ASSERT_TRUE(conf.ok()) << conf.status();
    absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> login = cluster_->Login();
    ASSERT_TRUE(login.ok()) << login.status();
    absl::StatusOr<hadoop::NameService> namenode =
        hadoop::ResolveNameService(*conf, conf->DefaultFs());
    ASSERT_TRUE(namenode.ok()) << namenode.status();
    conf_ = *std::move(conf);
    login_ = *std::move(login);
    namenode_ = *std::move(namenode);
  }
  absl::StatusOr<hadoop::Token> HdfsToken(const std::string& renewer) const {
    return hadoop::GetHdfsDelegationToken(*conf_, *namenode_, login_, renewer);
  }

  std::optional<TestCluster> cluster_;
  std::optional<hadoop::HadoopConf> conf_;
  std::shared_ptr<const hadoop::KerberosCredentials> login_;
  std::optional<hadoop::NameService> namenode_;
  std::string principal_;
  std::string keytab_;
  TonyRunner runner_;
};

TEST_F(SecureE2eTest, ClientSpeaksGssapiWithPrivacyToTheRmAndSpnegoToWebHdfs) {
  EXPECT_EQ(cluster_->Value("MINICLUSTER_RPC_PROTECTION"), "privacy");
  absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> yarn = cluster_->Yarn();
  ASSERT_TRUE(yarn.ok()) << yarn.status();
  absl::StatusOr<hadoop::ClusterMetrics> metrics = (*yarn)->GetClusterMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_GE(metrics->num_node_managers, 1);

  hadoop::WebHdfsClient hdfs = Hdfs();
  const std::string dir = UserDir("spnego");
  absl::Status created = hdfs.Create(dir + "/file.txt", "through SPNEGO");
  ASSERT_TRUE(created.ok()) << created;
  absl::StatusOr<std::string> read = hdfs.Open(dir + "/file.txt");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "through SPNEGO");
  absl::StatusOr<hadoop::FileStatus> status = hdfs.GetFileStatus(dir + "/file.txt");
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->owner, cluster_->user());

  // Without Kerberos, and without a token, WebHDFS says who is wrong.
  absl::StatusOr<hadoop::HadoopConf> conf = cluster_->Conf();
  ASSERT_TRUE(conf.ok());
  absl::StatusOr<std::string> anonymous =
      hadoop::WebHdfsClient(conf->NameNodeHttpAddress()->ToString(), cluster_->user())
          .Open(dir + "/file.txt");
  EXPECT_FALSE(anonymous.ok());
  (void)hdfs.Delete(dir, /*recursive=*/true);
}

TEST_F(SecureE2eTest, DelegationTokenFromTheNameNodeWorksAloneAndATamperedOneIsRefused) {
  ASSERT_NO_FATAL_FAILURE(ReachNameNode());
  absl::StatusOr<hadoop::Token> token = HdfsToken(cluster_->Value("MINICLUSTER_YARN_PRINCIPAL"));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(token->kind, "HDFS_DELEGATION_TOKEN");
  EXPECT_EQ(token->service, cluster_->Value("MINICLUSTER_NN_RPC"));  // 127.0.0.1:<port>

  const std::string dir = UserDir("token");
  ASSERT_TRUE(Hdfs().Create(dir + "/file.txt", "read with a token").ok());
  const std::string http = conf_->NameNodeHttpAddress()->ToString();
  hadoop::WebHdfsClient with_token(http, hadoop::WebHdfsAuth{"", nullptr, *token});
  absl::StatusOr<std::string> read = with_token.Open(dir + "/file.txt");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "read with a token");

  hadoop::Token tampered = *token;
  tampered.password[0] = static_cast<char>(tampered.password[0] ^ 1);
  absl::StatusOr<std::string> refused =
      hadoop::WebHdfsClient(http, hadoop::WebHdfsAuth{"", nullptr, tampered})
          .Open(dir + "/file.txt");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(Message(refused.status()).find("WebHDFS OPEN " + dir + "/file.txt: HTTP"),
            std::string::npos)
      << refused.status();
  (void)Hdfs().Delete(dir, /*recursive=*/true);
}

TEST_F(SecureE2eTest, TicketCacheLoginWorksAsKinitLeavesIt) {
  // Env()'s cache holds the ticket kinit -kt would have put there.
  std::map<std::string, std::string> env = Env();
  TonyResult r = runner_.Run({"cluster"}, 60000, env);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.out.find("RUNNING"), std::string::npos) << r.out;
  // A job, from the cache alone.
  r = runner_.Run(Submit({"tony.worker.instances=1", "tony.worker.memory=256m"}, "true",
                         /*keytab=*/false),
                  180000, env);
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
}

// A task reads a file of an HDFS encryption zone (scripts/hadoop-minicluster --kms: a KMS, the
// zone /ez and a file in it) with Hadoop's Java client and the task's tokens alone: the client got
// a KMS delegation token besides the HDFS one (the ResourceManager, its renewer, took it at
// submit), and the AM handed both to the task.
TEST_F(SecureE2eTest, TaskReadsAnEncryptionZoneWithItsTokensAlone) {
  const std::string kms = cluster_->Value("MINICLUSTER_KMS");
  if (kms.empty()) GTEST_SKIP() << "this cluster has no KMS (hadoop-minicluster --kms)";
  // The control too: the same read without the KMS token fails.
  std::vector<std::string> args =
      Submit({"tony.worker.instances=1", "tony.worker.memory=512m"},
             "sh read_encryption_zone.sh " + cluster_->conf_dir() + " " + kms);
  TonyResult r = runner_.Run(args, 240000, Env());
  const std::string out =
      TonyRunner::ReadFilesBelow(cluster_->conf_dir() + "/data", "stdout", r.app_id);
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << out;
  EXPECT_NE(out.find("without the KMS token: refused"), std::string::npos) << out;
  // Both tokens, the KMS's under the provider URI the Java client looks it up by.
  EXPECT_NE(out.find("kms-dt"), std::string::npos) << out;
  EXPECT_NE(out.find(kms), std::string::npos) << out;
  EXPECT_NE(out.find("HDFS_DELEGATION_TOKEN"), std::string::npos) << out;
  EXPECT_NE(out.find("content: " + cluster_->Value("MINICLUSTER_EZ_TEXT")), std::string::npos)
      << out;
}

// A KMS that cannot be reached stops the job at submit: one line naming the provider, exit 2,
// nothing staged.
TEST_F(SecureE2eTest, AnUnreachableKmsIsOneLineAtSubmit) {
  const std::string kms = cluster_->Value("MINICLUSTER_KMS");
  if (kms.empty()) GTEST_SKIP() << "this cluster has no KMS (hadoop-minicluster --kms)";
  // A port nothing listens on: bound, then closed.
  const int port = FreeLoopbackPort();
  ASSERT_GT(port, 0);
  const std::string gone = "kms://http@127.0.0.1:" + std::to_string(port) + "/kms";
  const std::string conf = ConfWithKms(gone);
  std::map<std::string, std::string> env = Env();
  env["HADOOP_CONF_DIR"] = conf;
  TonyResult r = runner_.Run(
      Submit({"tony.worker.instances=1", "tony.worker.memory=256m"}, "echo never"), 120000, env);
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("KMS GETDELEGATIONTOKEN " + gone), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err;
  EXPECT_EQ(r.out.find("submitted"), std::string::npos) << r.out;
  std::smatch app;
  ASSERT_TRUE(std::regex_search(r.err, app, std::regex(R"(application_\d+_\d+)"))) << r.err;
  EXPECT_EQ(
      Hdfs().GetFileStatus("/user/" + cluster_->user() + "/.tony/" + app[0].str()).status().code(),
      absl::StatusCode::kNotFound);
}

// The client's configuration names the KMS in another spelling than the NameNode's (a trailing
// slash): Hadoop's client in the task would ask the NameNode which KMS to use and find no token
// of that one, but the job's credentials map each file system to the client's KMS
// (dfs-kms-hdfs://...), the one the token is of.
TEST_F(SecureE2eTest, TheTasksUseTheKmsTheirTokenIsOf) {
  const std::string kms = cluster_->Value("MINICLUSTER_KMS");
  if (kms.empty()) GTEST_SKIP() << "this cluster has no KMS (hadoop-minicluster --kms)";
  const std::string conf = ConfWithKms(kms + "/");
  // The task's Java client reads the same configuration (the script puts the directory first on
  // its classpath and reads minicluster.env there).
  fs::copy_file(fs::path(cluster_->conf_dir()) / "minicluster.env",
                fs::path(conf) / "minicluster.env", fs::copy_options::overwrite_existing);
  std::map<std::string, std::string> env = Env();
  env["HADOOP_CONF_DIR"] = conf;
  TonyResult r = runner_.Run(Submit({"tony.worker.instances=1", "tony.worker.memory=512m"},
                                    "sh read_encryption_zone.sh " + conf),
                             240000, env);
  const std::string out =
      TonyRunner::ReadFilesBelow(cluster_->conf_dir() + "/data", "stdout", r.app_id);
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << out;
  EXPECT_NE(out.find(kms + "/ "), std::string::npos) << out;  // the token, of the client's KMS
  EXPECT_NE(out.find("content: " + cluster_->Value("MINICLUSTER_EZ_TEXT")), std::string::npos)
      << out;
}

// A job that outlives its first HDFS tokens, on a cluster whose tokens die within seconds
// (scripts/hadoop-minicluster --token-lifetime-s; CTest runs this case on such a cluster): the
// AM, which has the user's keytab, gets fresh tokens before the first die, and the task's
// executor puts them into the task's token file, where a new HDFS client finds them.
TEST_F(SecureE2eTest, TasksOutliveTheirFirstTokensWithTheAmsFreshOnes) {
  const int lifetime_s = std::atoi(cluster_->Value("MINICLUSTER_TOKEN_LIFETIME_S").c_str());
  if (lifetime_s == 0) GTEST_SKIP() << "this cluster's tokens live for days";
  ASSERT_TRUE(fs::exists(PyDepsDir() + "/hdfs_native"))
      << "hdfs-native is not in " << PyDepsDir() << ": run scripts/install-pydeps";

  // What the client's token says of itself, as the NameNode wrote it.
  ASSERT_NO_FATAL_FAILURE(ReachNameNode());
  absl::StatusOr<hadoop::Token> for_yarn = HdfsToken(cluster_->Value("MINICLUSTER_YARN_PRINCIPAL"));
  ASSERT_TRUE(for_yarn.ok()) << for_yarn.status();
  absl::StatusOr<hadoop::DelegationTokenIdentifier> id =
      hadoop::DecodeDelegationTokenIdentifier(for_yarn->identifier);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->owner, principal_);
  EXPECT_EQ(id->renewer, "yarn");
  EXPECT_EQ(id->max_date_ms - id->issue_date_ms, lifetime_s * 1000);
  // Only its renewer may renew it; the user may renew one that names the user.
  EXPECT_FALSE(hadoop::RenewHdfsDelegationToken(*conf_, *namenode_, login_, *for_yarn).ok());
  absl::StatusOr<hadoop::Token> own = HdfsToken(cluster_->user());
  ASSERT_TRUE(own.ok()) << own.status();
  absl::StatusOr<hadoop::DelegationTokenIdentifier> own_id =
      hadoop::DecodeDelegationTokenIdentifier(own->identifier);
  ASSERT_TRUE(own_id.ok()) << own_id.status();
  absl::StatusOr<int64_t> expiry =
      hadoop::RenewHdfsDelegationToken(*conf_, *namenode_, login_, *own);
  ASSERT_TRUE(expiry.ok()) << expiry.status();
  EXPECT_GT(*expiry, own_id->issue_date_ms);
  EXPECT_LE(*expiry, own_id->max_date_ms);

  hadoop::WebHdfsClient hdfs = Hdfs();
  const std::string dir = UserDir("outlive");
  ASSERT_TRUE(hdfs.Create(dir + "/input.txt", "one\ntwo\nthree\n").ok());
  // With a KMS (--kms), the task also reads the encryption zone once the first tokens died.
  const std::string kms = cluster_->Value("MINICLUSTER_KMS");
  std::vector<std::string> args =
      Submit({"tony.worker.instances=1", "tony.worker.memory=512m"},
             "/usr/bin/python3 outlive_tokens.py " + dir + "/input.txt " + dir + "/result.txt" +
                 (kms.empty() ? "" : " " + cluster_->conf_dir()));
  args.insert(args.end(), {"--shell_env", "PYTHONPATH=" + PyDepsDir()});
  TonyResult r = runner_.Run(args, 420000, Env());
  const std::string data = cluster_->conf_dir() + "/data";
  const std::string out = TonyRunner::ReadFilesBelow(data, "stdout", r.app_id);
  const std::string am_log = TonyRunner::ReadFilesBelow(data, "am.log", r.app_id);
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << out << am_log;
  EXPECT_NE(out.find("read with the first tokens: True 3"), std::string::npos) << out;
  EXPECT_NE(out.find("done waiting for the first tokens to die"), std::string::npos) << out;
  EXPECT_NE(out.find("read with the fresh tokens: True 3"), std::string::npos) << out;
  EXPECT_NE(am_log.find("fresh delegation token(s) (HDFS_DELEGATION_TOKEN"), std::string::npos)
      << am_log;
  if (!kms.empty()) {
    // The KMS's tokens die as fast, and the AM got a fresh one too: the zone is still readable.
    EXPECT_NE(am_log.find(", kms-dt " + kms), std::string::npos) << am_log;
    EXPECT_NE(out.find("content: " + cluster_->Value("MINICLUSTER_EZ_TEXT")), std::string::npos)
        << out;
  }
  absl::StatusOr<std::string> result = hdfs.Open(dir + "/result.txt");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, "read 3 lines after the first tokens died");
  // The first tokens are dead indeed: one the NameNode issued before the job's is refused now.
  hadoop::WebHdfsClient dead(conf_->NameNodeHttpAddress()->ToString(),
                             hadoop::WebHdfsAuth{"", nullptr, *for_yarn});
  EXPECT_GT(std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count(),
            id->max_date_ms);
  absl::StatusOr<std::string> refused = dead.Open(dir + "/input.txt");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(Message(refused.status()).find("expired"), std::string::npos) << refused.status();
  (void)hdfs.Delete(dir, /*recursive=*/true);
}

// Each bad login: one line naming the cause, exit 2 (1 for a KDC that is down), nothing submitted.
class SecureBadLoginTest : public SecureE2eTest {
 protected:
  std::map<std::string, std::string> NoCache() const {
    return {{"KRB5CCNAME", "FILE:" + runner_.work_dir() + "/no-such-cache"}};
  }
  std::string ExpectRefused(const std::vector<std::string>& conf,
                            const std::map<std::string, std::string>& env_overrides,
                            int exit_code = 2) {
    std::map<std::string, std::string> env = Env();
    for (const auto& [key, value] : env_overrides) env[key] = value;
    TonyResult r = runner_.Run(Submit(conf, "true", /*keytab=*/false), 60000, env);
    EXPECT_EQ(r.exit_code, exit_code) << r.Describe();
    EXPECT_TRUE(r.app_id.empty()) << "submitted:\n" << r.out;
    std::string error;
    for (size_t start = 0; start < r.err.size();) {
      size_t end = r.err.find('\n', start);
      std::string line = r.err.substr(start, end - start);
      if (line.starts_with("tony: error: ")) {
        EXPECT_TRUE(error.empty()) << "more than one error line:\n" << r.err;
        error = line;
      }
      start = end == std::string::npos ? r.err.size() : end + 1;
    }
    EXPECT_FALSE(error.empty()) << r.err;
    return error;
  }
};

TEST_F(SecureBadLoginTest, NoTicketAndNoKeytab) {
  const std::string error =
      ExpectRefused({}, {{"KRB5CCNAME", "FILE:" + runner_.work_dir() + "/no-such-cache"}});
  EXPECT_NE(error.find("no Kerberos ticket"), std::string::npos) << error;
  EXPECT_NE(error.find("run kinit"), std::string::npos) << error;
}

TEST_F(SecureBadLoginTest, KeytabWithAKeyTheKdcDoesNotKnow) {
  const std::string wrong = runner_.work_dir() + "/wrong.keytab";
  WriteWrongKeytab(wrong, principal_);
  const std::string error =
      ExpectRefused({"tony.kerberos.principal=" + principal_, "tony.kerberos.keytab=" + wrong}, {});
  EXPECT_NE(error.find("from keytab " + wrong), std::string::npos) << error;
  EXPECT_NE(error.find("no valid key for this principal"), std::string::npos) << error;
}

TEST_F(SecureBadLoginTest, PrincipalTheKdcDoesNotKnow) {
  const std::string stranger = "stranger@" + cluster_->Value("MINICLUSTER_REALM");
  const std::string keytab = runner_.work_dir() + "/stranger.keytab";
  WriteWrongKeytab(keytab, stranger);
  const std::string error =
      ExpectRefused({"tony.kerberos.principal=" + stranger, "tony.kerberos.keytab=" + keytab}, {});
  EXPECT_NE(error.find("does not know this principal"), std::string::npos) << error;
}

TEST_F(SecureBadLoginTest, ExpiredTicket) {
  const std::string cache = runner_.work_dir() + "/krb5cc-old";
  ASSERT_TRUE(WriteTicketCache(cache, principal_, keytab_, /*expired=*/true).ok());
  const std::string error = ExpectRefused({}, {{"KRB5CCNAME", "FILE:" + cache}});
  EXPECT_NE(error.find("expired"), std::string::npos) << error;
  EXPECT_NE(error.find("kinit"), std::string::npos) << error;
}

TEST_F(SecureBadLoginTest, KdcThatIsDown) {
  // The same realm, its KDC moved to a port where nothing listens.
  std::ifstream in(cluster_->Value("MINICLUSTER_KRB5_CONF"));
  std::string conf((std::istreambuf_iterator<char>(in)), {});
  conf = std::regex_replace(conf, std::regex("kdc = 127\\.0\\.0\\.1:[0-9]+"), "kdc = 127.0.0.1:1");
  const std::string moved = runner_.work_dir() + "/krb5-down.conf";
  std::ofstream(moved) << conf;
  const std::string error =
      ExpectRefused({"tony.kerberos.principal=" + principal_, "tony.kerberos.keytab=" + keytab_},
                    {{"KRB5_CONFIG", moved}}, /*exit_code=*/1);
  EXPECT_NE(error.find("Cannot contact any KDC"), std::string::npos) << error;
}

}  // namespace
}  // namespace tony::testing
