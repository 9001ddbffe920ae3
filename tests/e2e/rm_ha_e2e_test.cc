// tony on a YARN with two ResourceManagers in HA (scripts/hadoop-minicluster start DIR --rm-ha),
// given only the HA client configuration (no yarn.resourcemanager.address): a job survives an RM
// failover and an RM restart during its run, each task running exactly once, and the cluster's
// own record and the job's history agree that it succeeded. Bad HA configurations and RMs that
// are all down are refused with one line naming what is wrong, before anything is submitted.

#include <fstream>

#include "e2e/backend_fixture.h"

namespace tony::testing {
namespace {

using Json = nlohmann::json;

class RmHaE2eTest : public BackendE2eTest {
 protected:
  void SetUp() override {
    BackendE2eTest::SetUp();
    if (IsSkipped()) return;
    if (ReadAll(fs::path(conf_dir_) / "minicluster.env").find("MINICLUSTER_RM_HA_IDS=") ==
        std::string::npos) {
      GTEST_SKIP() << conf_dir_ << " is not an --rm-ha cluster";
    }
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

  // Two workers that note their start, wait for the test's go, then run 10 s more. `fault` runs
  // while both wait. Returns how the job ended.
  TonyResult RunThrough(const std::function<void()>& fault) {
    const std::string go = runner_.work_dir() + "/go";
    runs_ = runner_.work_dir() + "/runs";
    pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                              "echo \"$TASK_INDEX $$\" >> " + runs_ +
                                  "; echo waiting-$TASK_INDEX;"
                                  " while [ ! -e " +
                                  go +
                                  " ]; do sleep 0.1; done;"
                                  " for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1; done; echo went"));
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
    std::istringstream runs(ReadAll(runs_));
    std::vector<std::string> lines;
    for (std::string line; std::getline(runs, line);) lines.push_back(line);
    EXPECT_EQ(lines.size(), 2u) << "every task's user process must have started once:\n"
                                << ReadAll(runs_);
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

  // The AM's log of this job (the NodeManagers' container logs).
  std::string AmLog() const {
    return TonyRunner::ReadFilesBelow((fs::path(conf_dir_) / "data").string(), "am.log", app_id_);
  }

  std::string runs_;
};

TEST_P(RmHaE2eTest, AJobSurvivesAnRmFailover) {
  TonyResult r = RunThrough([&] { EXPECT_EQ(Minicluster("failover", "rm"), 0); });
  ExpectRanOnceAndSucceeded(r);
  EXPECT_NE(AmLog().find("the scheduler is now rm"), std::string::npos) << AmLog();
}

TEST_P(RmHaE2eTest, AJobSurvivesAnRmRestart) {
  TonyResult r = RunThrough([&] { EXPECT_EQ(Minicluster("restart-rm"), 0); });
  ExpectRanOnceAndSucceeded(r);
  EXPECT_NE(AmLog().find("registered again"), std::string::npos) << AmLog();
}

TEST_P(RmHaE2eTest, TonyCommandsFollowTheActiveRm) {
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

// A copy of the cluster's client configuration with yarn-site.xml's `edit` applied (sed), in a
// directory of its own.
class RmHaBadConfE2eTest : public RmHaE2eTest {
 protected:
  std::string EditedConf(const std::string& sed) {
    const std::string dir = runner_.work_dir() + "/conf";
    fs::create_directories(dir);
    for (const char* name : {"core-site.xml", "hdfs-site.xml", "yarn-site.xml"}) {
      fs::copy_file(fs::path(conf_dir_) / name, fs::path(dir) / name,
                    fs::copy_options::overwrite_existing);
    }
    EXPECT_EQ(std::system(("sed -i -E '" + sed + "' '" + dir + "/yarn-site.xml'").c_str()), 0);
    return dir;
  }
  TonyResult SubmitWith(const std::string& conf_dir) {
    std::map<std::string, std::string> env = Env();
    env["HADOOP_CONF_DIR"] = conf_dir;
    env.erase("YARN_CONF_DIR");
    std::vector<std::string> args = Submit({"tony.worker.instances=1"}, "echo never");
    return runner_.Run(args, 120000, env);
  }
};

TEST_P(RmHaBadConfE2eTest, AnRmIdWithoutAnAddressIsNamed) {
  // rm2 named by neither its client address nor its host name.
  TonyResult r =
      SubmitWith(EditedConf("s#<property><name>yarn.resourcemanager.(address|hostname).rm2"
                            "</name><value>[^<]*</value></property>##"));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("neither yarn.resourcemanager.address.rm2 nor "
                       "yarn.resourcemanager.hostname.rm2 is set"),
            std::string::npos)
      << Describe(r);
  EXPECT_EQ(r.out.find("submitted"), std::string::npos) << r.out;
}

TEST_P(RmHaBadConfE2eTest, NoReachableRmIsOneLineNamingEach) {
  // Both RMs' client addresses moved to ports nothing listens on (port 1 of 127.0.0.1).
  TonyResult r = SubmitWith(EditedConf(
      "s#(<name>yarn.resourcemanager.address.rm[12]</name><value>)[^<]*#\\1127.0.0.1:1#"));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("no active ResourceManager among 2"), std::string::npos) << Describe(r);
  EXPECT_NE(r.err.find("rm1 (127.0.0.1:1)"), std::string::npos) << Describe(r);
  EXPECT_NE(r.err.find("rm2 (127.0.0.1:1)"), std::string::npos) << Describe(r);
  EXPECT_EQ(r.out.find("submitted"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Backends, RmHaE2eTest, ::testing::Values("yarn"),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Backends, RmHaBadConfE2eTest, ::testing::Values("yarn"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tony::testing
