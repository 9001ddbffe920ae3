// tony on a Hadoop cluster in HA (scripts/hadoop-minicluster start DIR --ha: two ResourceManagers
// and an HDFS nameservice of two NameNodes; --rm-ha for the RM cases alone), given only the HA
// client configuration (no yarn.resourcemanager.address, no dfs.namenode.rpc-address): a job
// survives an RM failover, an RM restart and a NameNode failover during its run, each task running
// exactly once, and the cluster's own record and the job's history agree that it succeeded. Bad HA
// configurations, and ResourceManagers or NameNodes none of which is active, are refused with one
// line naming what is wrong, before anything is submitted.

#include <algorithm>
#include <fstream>
#include <regex>

#include "e2e/backend_fixture.h"
#include "hadoop/hdfs/namenode_client.h"
#include "hadoop/hdfs/nameservice.h"

namespace tony::testing {
namespace {

using Json = nlohmann::json;

class HaE2eTest : public BackendE2eTest {
 protected:
  void SetUp() override {
    BackendE2eTest::SetUp();
    if (IsSkipped()) return;
    const std::string env = ReadAll(fs::path(conf_dir_) / "minicluster.env");
    if (env.find("MINICLUSTER_RM_HA_IDS=") == std::string::npos) {
      GTEST_SKIP() << conf_dir_ << " is not an --rm-ha or --ha cluster";
    }
    nn_ha_ = env.find("MINICLUSTER_NN_HA_IDS=") != std::string::npos;
  }

  // `scripts/hadoop-minicluster COMMAND... DIR`'s exit code; it returns once the new active RM
  // serves every NodeManager.
  int Minicluster(const std::string& command, const std::string& arg = "") {
    const std::string line = TonyRunner::SourcePath("scripts/hadoop-minicluster") + " " + command +
                             " '" + conf_dir_ + "'" + (arg.empty() ? "" : " " + arg) + " 2>&1";
    FILE* out = popen(line.c_str(), "r");
    if (out == nullptr) return -1;
    char buffer[512];
    while (fgets(buffer, sizeof(buffer), out) != nullptr) std::cerr << buffer;
    return pclose(out);
  }

  // A 60-second job: two workers that note their start, wait for the test's go, then run on until
  // 60 s after they started (10 s at least after the go). `fault` runs while both wait, so the
  // job lives most of its minute after it. Returns how the job ended.
  TonyResult RunThrough(const std::function<void()>& fault) {
    const std::string go = runner_.work_dir() + "/go";
    runs_ = runner_.work_dir() + "/runs";
    pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                              "started=$(date +%s); echo \"$TASK_INDEX $$\" >> " + runs_ +
                                  "; echo waiting-$TASK_INDEX;"
                                  " while [ ! -e " +
                                  go +
                                  " ]; do sleep 0.1; done;"
                                  " for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1; done;"
                                  " while [ $(($(date +%s) - started)) -lt 60 ]; do sleep 1; done;"
                                  " echo went-after-$(($(date +%s) - started))s"));
    const bool both = WaitForTaskOutput("waiting-0") && WaitForTaskOutput("waiting-1");
    app_id_ = runner_.SubmittedAppId();
    if (both) {
      fault();
    } else {
      ADD_FAILURE() << "the tasks did not start:\n" << runner_.CurrentOutput();
    }
    std::ofstream(go) << "go\n";
    return Wait(tony);
  }

  // What every run must show: success as tony, the RM and the history record it, and each task
  // started once.
  void ExpectRanOnceAndSucceeded(const TonyResult& r) {
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_TRUE(TaskRow(r.out, "worker:0", "SUCCEEDED")) << r.out;
    EXPECT_TRUE(TaskRow(r.out, "worker:1", "SUCCEEDED")) << r.out;
    EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
    // Hadoop's own client agrees, finding the active RM by itself.
    const std::string status = HadoopApplicationStatus(r.app_id);
    EXPECT_TRUE(std::regex_search(status, std::regex(R"(Final-State\s*:\s*SUCCEEDED)"))) << status;
    EXPECT_TRUE(std::regex_search(status, std::regex(R"(\bState\s*:\s*FINISHED)"))) << status;
    std::istringstream runs(ReadAll(runs_));
    std::vector<std::string> lines;
    for (std::string line; std::getline(runs, line);) lines.push_back(line);
    EXPECT_EQ(lines.size(), 2u) << "every task's user process must have started once:\n"
                                << ReadAll(runs_);
    // Both ran to the end of their minute ("went-after-<seconds>s").
    const std::string out = TaskStdout(r);
    const std::regex after(R"(went-after-\d+s)");
    EXPECT_EQ(
        std::distance(std::sregex_iterator(out.begin(), out.end(), after), std::sregex_iterator()),
        2)
        << out;
    // The job's history, complete: submitted, started, both tasks, finished SUCCEEDED.
    absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster_->Hdfs();
    ASSERT_TRUE(hdfs.ok()) << hdfs.status();
    absl::StatusOr<std::string> events = hdfs->Open(
        "/user/" + cluster_->user() + "/.tony/history/finished/" + r.app_id + "/events.jsonl");
    ASSERT_TRUE(events.ok()) << events.status();
    std::istringstream in(*events);
    std::vector<Json> parsed;
    for (std::string line; std::getline(in, line);) parsed.push_back(Json::parse(line));
    ASSERT_GE(parsed.size(), 4u) << *events;
    EXPECT_EQ(parsed.front().value("kind", ""), "APPLICATION_SUBMITTED");
    EXPECT_EQ(parsed.back().value("kind", ""), "APPLICATION_FINISHED");
    EXPECT_EQ(parsed.back().value("state", ""), "SUCCEEDED");
    int started = 0;
    for (const Json& e : parsed) started += e.value("kind", "") == "TASK_STARTED";
    EXPECT_EQ(started, 2) << *events;
  }

  // What Hadoop's own `yarn application -status <app_id>` prints: its ApplicationCLI, the Java
  // client of the mini cluster's classpath, with the cluster's client configuration (the HA one)
  // and, on a Kerberized cluster, the test user's ticket (KRB5CCNAME, set by the fixture).
  std::string HadoopApplicationStatus(const std::string& app_id) const {
    std::string command = "java";
    if (cluster_->secure()) {
      command += " -Djava.security.krb5.conf='" + cluster_->Value("MINICLUSTER_KRB5_CONF") + "'";
    }
    command += " -cp '" + conf_dir_ + ":" + cluster_->Value("MINICLUSTER_CLASSPATH") +
               "' org.apache.hadoop.yarn.client.cli.ApplicationCLI application -status " + app_id +
               " 2>&1";
    FILE* out = popen(command.c_str(), "r");
    if (out == nullptr) return "popen failed";
    std::string text;
    char buffer[512];
    while (fgets(buffer, sizeof(buffer), out) != nullptr) text += buffer;
    pclose(out);
    return text;
  }

  // The AM's log of this job (the NodeManagers' container logs).
  std::string AmLog() const {
    return TonyRunner::ReadFilesBelow((fs::path(conf_dir_) / "data").string(), "am.log", app_id_);
  }

  std::string runs_;
  bool nn_ha_ = false;  // an --ha cluster: HDFS in HA too
};

TEST_P(HaE2eTest, AJobSurvivesAnRmFailover) {
  TonyResult r = RunThrough([&] { EXPECT_EQ(Minicluster("failover", "rm"), 0); });
  ExpectRanOnceAndSucceeded(r);
  EXPECT_NE(AmLog().find("the scheduler is now rm"), std::string::npos) << AmLog();
}

TEST_P(HaE2eTest, AJobSurvivesAnRmRestart) {
  TonyResult r = RunThrough([&] { EXPECT_EQ(Minicluster("restart-rm"), 0); });
  ExpectRanOnceAndSucceeded(r);
  EXPECT_NE(AmLog().find("registered again"), std::string::npos) << AmLog();
}

TEST_P(HaE2eTest, AJobSurvivesANameNodeFailover) {
  if (!nn_ha_) GTEST_SKIP() << conf_dir_ << " is not an --ha cluster";
  // The AM writes the job's history to HDFS before, during and after the failover.
  TonyResult r = RunThrough([&] { EXPECT_EQ(Minicluster("failover", "nn"), 0); });
  ExpectRanOnceAndSucceeded(r);
}

TEST_P(HaE2eTest, NameServiceTokenIsLogicalAndGoodAtEitherNameNode) {
  if (!nn_ha_ || !cluster_->secure()) {
    GTEST_SKIP() << conf_dir_ << " is not a --secure --ha cluster";
  }
  absl::StatusOr<hadoop::HadoopConf> conf = cluster_->Conf();
  ASSERT_TRUE(conf.ok()) << conf.status();
  absl::StatusOr<hadoop::NameService> namenodes = hadoop::DefaultNameService(*conf);
  ASSERT_TRUE(namenodes.ok()) << namenodes.status();
  absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> login = cluster_->Login();
  ASSERT_TRUE(login.ok()) << login.status();
  absl::StatusOr<hadoop::Token> token =
      hadoop::GetHdfsDelegationToken(*conf, *namenodes, *login, cluster_->user());
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(token->service, "ha-hdfs:minidfs-ns");

  absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster_->Hdfs();
  ASSERT_TRUE(hdfs.ok()) << hdfs.status();
  const std::string file = "/user/" + cluster_->user() + "/ha-token-" + std::to_string(getpid());
  ASSERT_TRUE(hdfs->Create(file, "read with the nameservice's token").ok());
  hadoop::WebHdfsClient with_token(namenodes->WebHdfsServers(),
                                   hadoop::WebHdfsAuth{"", nullptr, *token});
  // Good at the active NameNode, and at the other once it is active.
  for (int round = 0; round < 2; ++round) {
    absl::StatusOr<std::string> read = with_token.Open(file);
    ASSERT_TRUE(read.ok()) << "round " << round << ": " << read.status();
    EXPECT_EQ(*read, "read with the nameservice's token");
    absl::StatusOr<int64_t> renewed =
        hadoop::RenewHdfsDelegationToken(*conf, *namenodes, *login, *token);
    EXPECT_TRUE(renewed.ok()) << "round " << round << ": " << renewed.status();
    if (round == 0) {
      ASSERT_EQ(Minicluster("failover", "nn"), 0);
    }
  }
  (void)hdfs->Delete(file, /*recursive=*/false);
}

TEST_P(HaE2eTest, TonyCommandsFollowTheActiveRm) {
  // `tony cluster` answers from whichever RM is active, before and after a failover.
  for (int round = 0; round < 2; ++round) {
    TonyResult cluster = Run({"cluster"});
    EXPECT_EQ(cluster.exit_code, 0) << Describe(cluster);
    EXPECT_NE(cluster.out.find("Total NodeManagers: "), std::string::npos) << cluster.out;
    if (round == 0) {
      ASSERT_EQ(Minicluster("failover", "rm"), 0);
    }
  }
}

// A copy of the cluster's client configuration with `file`'s `edit` applied (sed), in a
// directory of its own.
class HaBadConfE2eTest : public HaE2eTest {
 protected:
  std::string EditedConf(const std::string& sed, const std::string& file = "yarn-site.xml") {
    const std::string dir = runner_.work_dir() + "/conf";
    fs::create_directories(dir);
    for (const char* name : {"core-site.xml", "hdfs-site.xml", "yarn-site.xml"}) {
      fs::copy_file(fs::path(conf_dir_) / name, fs::path(dir) / name,
                    fs::copy_options::overwrite_existing);
    }
    EXPECT_EQ(std::system(("sed -i -E '" + sed + "' '" + dir + "/" + file + "'").c_str()), 0);
    return dir;
  }
  // Refused before submission: exit 2, `text` in the error, nothing submitted.
  void ExpectRefused(const TonyResult& r, const std::string& text) {
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_NE(r.err.find(text), std::string::npos) << Describe(r);
    EXPECT_EQ(r.out.find("submitted"), std::string::npos) << r.out;
  }
  TonyResult SubmitWith(const std::string& conf_dir) {
    std::map<std::string, std::string> env = Env();
    env["HADOOP_CONF_DIR"] = conf_dir;
    env.erase("YARN_CONF_DIR");
    std::vector<std::string> args = Submit({"tony.worker.instances=1"}, "echo never");
    return runner_.Run(args, 120000, env);
  }
};

TEST_P(HaBadConfE2eTest, AnRmIdWithoutAnAddressIsNamed) {
  // rm2 named by neither its client address nor its host name.
  TonyResult r =
      SubmitWith(EditedConf("s#<property><name>yarn.resourcemanager.(address|hostname).rm2"
                            "</name><value>[^<]*</value></property>##"));
  ExpectRefused(r,
                "neither yarn.resourcemanager.address.rm2 nor yarn.resourcemanager.hostname.rm2 "
                "is set");
}

TEST_P(HaBadConfE2eTest, NoReachableRmIsOneLineNamingEach) {
  // Both RMs' client addresses moved to ports nothing listens on (port 1 of 127.0.0.1).
  TonyResult r = SubmitWith(EditedConf(
      "s#(<name>yarn.resourcemanager.address.rm[12]</name><value>)[^<]*#\\1127.0.0.1:1#"));
  ExpectRefused(r, "no active ResourceManager among 2");
  EXPECT_NE(r.err.find("rm1 (127.0.0.1:1)"), std::string::npos) << Describe(r);
  EXPECT_NE(r.err.find("rm2 (127.0.0.1:1)"), std::string::npos) << Describe(r);
}

TEST_P(HaBadConfE2eTest, ANameNodeIdWithoutAnAddressIsNamed) {
  if (!nn_ha_) GTEST_SKIP() << conf_dir_ << " is not an --ha cluster";
  TonyResult r =
      SubmitWith(EditedConf("s#<property><name>dfs.namenode.rpc-address.minidfs-ns.nn2</name>"
                            "<value>[^<]*</value></property>##",
                            "hdfs-site.xml"));
  ExpectRefused(r,
                "NameNode HA: dfs.namenode.rpc-address.minidfs-ns.nn2 is not set, but "
                "dfs.ha.namenodes.minidfs-ns names nn2");
}

TEST_P(HaBadConfE2eTest, NoActiveNameNodeIsOneLineNamingEach) {
  if (!nn_ha_) GTEST_SKIP() << conf_dir_ << " is not an --ha cluster";
  ASSERT_EQ(Minicluster("standby-nn"), 0);
  TonyResult r = SubmitWith(conf_dir_);
  // The cluster as it was, whatever the outcome.
  EXPECT_EQ(Minicluster("activate-nn"), 0);
  ExpectRefused(r, "no active NameNode among 2");
  EXPECT_NE(r.err.find("nn1 (127.0.0.1:"), std::string::npos) << Describe(r);
  EXPECT_NE(r.err.find("nn2 (127.0.0.1:"), std::string::npos) << Describe(r);
  EXPECT_NE(r.err.find("StandbyException"), std::string::npos) << Describe(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err;
  // Nothing of the application it reserved was staged.
  std::smatch app;
  ASSERT_TRUE(std::regex_search(r.err, app, std::regex(R"(application_\d+_\d+)"))) << r.err;
  absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster_->Hdfs();
  ASSERT_TRUE(hdfs.ok()) << hdfs.status();
  EXPECT_EQ(
      hdfs->GetFileStatus("/user/" + cluster_->user() + "/.tony/" + app[0].str()).status().code(),
      absl::StatusCode::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(Backends, HaE2eTest, ::testing::Values("yarn"),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Backends, HaBadConfE2eTest, ::testing::Values("yarn"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tony::testing
