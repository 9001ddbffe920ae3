// Horovod as TonY's users run it, with real Horovod (built by scripts/install-horovod: Gloo and
// PyTorch), on the local backend and on the YARN mini cluster: TonY's workers-only configuration
// unchanged, with the AM serving Horovod's rendezvous; TonY's debug mode, with a driver of the
// user's; and a driver that fails.

#include "e2e/backend_fixture.h"

namespace tony::testing {
namespace {

class HorovodE2eTest : public BackendE2eTest {
 protected:
  void SetUp() override {
    BackendE2eTest::SetUp();
    if (IsSkipped()) return;
    RequireInstalled(HorovodDir() + "/horovod/torch", "TONY_REQUIRE_HOROVOD",
                     "scripts/install-horovod");
    if (IsSkipped() || HasFatalFailure()) return;
    out_ = runner_.work_dir() + "/ranks";
    fs::create_directories(out_);
  }

  // TonY's Horovod job: framework horovod, two workers, the user's script.
  std::vector<std::string> HorovodJob(std::vector<std::string> conf) const {
    conf.insert(conf.begin(), {"tony.application.framework=horovod", "tony.worker.instances=2",
                               "tony.worker.memory=1g"});
    std::vector<std::string> args = Submit(conf, "/usr/bin/python3 horovod_collectives.py " + out_);
    args.insert(args.end(), {"--shell_env", "PYTHONPATH=" + HorovodDir()});
    return args;
  }

  nlohmann::json Rank(int rank) const {
    return nlohmann::json::parse(
        ReadAll(fs::path(out_) / ("rank-" + std::to_string(rank) + ".json")), nullptr, false);
  }

  // What Horovod itself reports on both ranks: the layout tony gave, collectives that agree, and
  // a training whose parameters are the same everywhere and whose loss fell.
  void ExpectTwoRanksTrainedTogether() {
    const nlohmann::json r0 = Rank(0), r1 = Rank(1);
    ASSERT_TRUE(r0.is_object() && r1.is_object()) << "a rank wrote no result";
    for (const nlohmann::json& r : {r0, r1}) {
      EXPECT_EQ(r["size"], 2);
      EXPECT_EQ(r["gloo"], true);
      EXPECT_EQ(r["sum"], 3.0);  // 1 + 2
      EXPECT_EQ(r["gathered"], nlohmann::json({0, 1}));
      EXPECT_EQ(r["broadcast"], 42.0);
      EXPECT_LT(r["last_loss"].get<double>(), r["first_loss"].get<double>() / 100);
      ASSERT_EQ(r["params"].size(), 2u);
      EXPECT_EQ(r["params"][0], r["params"][1]) << "the ranks' parameters differ";
      EXPECT_NEAR(r["params"][0][0].get<double>(), 3.0, 0.2);
      // TonY's check_horovod_env.py: every variable it reads is there.
      for (const char* name :
           {"HOROVOD_CONTROLLER", "HOROVOD_CPU_OPERATIONS", "HOROVOD_GLOO_TIMEOUT_SECONDS",
            "HOROVOD_GLOO_RENDEZVOUS_PORT", "HOROVOD_GLOO_RENDEZVOUS_ADDR", "HOROVOD_CROSS_RANK",
            "HOROVOD_CROSS_SIZE", "HOROVOD_LOCAL_RANK", "HOROVOD_LOCAL_SIZE", "HOROVOD_SIZE",
            "HOROVOD_RANK", "HOROVOD_HOSTNAME"}) {
        EXPECT_TRUE(r["env"].contains(name)) << name;
      }
    }
    EXPECT_EQ(r0["rank"], 0);
    EXPECT_EQ(r1["rank"], 1);
    EXPECT_EQ(r0["env"]["HOROVOD_RANK"], "0");
    // Both workers run on this machine: one host, two local ranks.
    EXPECT_EQ(r1["local_rank"], 1);
    EXPECT_EQ(r1["local_size"], 2);
    EXPECT_EQ(r1["cross_size"], 1);
  }

  std::string out_;
};

// TonY's configuration unchanged: workers only. The AM serves the rendezvous, so the job has no
// driver task, and the workers reach the AM's host for it.
TEST_P(HorovodE2eTest, WorkersOnlyJobTrainsWithTheAmsRendezvous) {
  TonyResult r = Run(HorovodJob({}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ExpectTwoRanksTrainedTogether();
  EXPECT_EQ(r.out.find("driver:0"), std::string::npos) << r.out;
  const std::string port = Rank(0)["env"].value("HOROVOD_GLOO_RENDEZVOUS_PORT", "");
  EXPECT_EQ(Rank(1)["env"].value("HOROVOD_GLOO_RENDEZVOUS_PORT", ""), port);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nworker:1 +SUCCEEDED "))) << r.out;
  EXPECT_NE(r.out.find("horovod rank 0 of 2: sum 3.0"), std::string::npos) << r.out;
}

// TonY's debug mode, configured as TonY's own test does: the user's driver runs Horovod's
// rendezvous, and the workers get the port it published, not the driver's reserved one.
TEST_P(HorovodE2eTest, DebugDriverOfTheUsersServesTheRendezvous) {
  TonyResult r = Run(HorovodJob({"tony.horovod.driver.mode.debug=true", "tony.driver.instances=1",
                                 "tony.driver.vcores=1", "tony.driver.memory=512m",
                                 "tony.application.untracked.jobtypes=driver",
                                 "tony.driver.command=/usr/bin/python3 horovod_debug_driver.py"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ExpectTwoRanksTrainedTogether();
  std::smatch published;
  const std::string out = TaskStdout(r);
  ASSERT_TRUE(std::regex_search(out, published, std::regex(R"(rendezvous on port (\d+))"))) << out;
  EXPECT_EQ(Rank(0)["env"].value("HOROVOD_GLOO_RENDEZVOUS_PORT", ""), published[1].str());
  EXPECT_EQ(Rank(1)["env"].value("HOROVOD_GLOO_RENDEZVOUS_PORT", ""), published[1].str());
  // The driver is not a rank: it serves until the workers are done, then it is stopped.
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\ndriver:0 +STOPPED "))) << r.out;
}

// TonY's testTonyHorovodDriverCrashShouldFailAndStopAM: a driver that ends without a rendezvous
// fails the job with its reason, and no worker ever starts Horovod.
TEST_P(HorovodE2eTest, DriverThatFailsFailsTheJobWithItsReason) {
  TonyResult r = Run(HorovodJob({"tony.horovod.driver.mode.debug=true", "tony.driver.memory=256m",
                                 "tony.driver.command=echo cannot bind >&2; exit 3"}));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
  EXPECT_NE(r.out.find("task driver:0 failed (exit code 3): the Horovod driver ended before it "
                       "published its rendezvous port"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cannot bind"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the workers' rendezvous runs in the Horovod driver"), std::string::npos)
      << r.out;
  EXPECT_TRUE(fs::is_empty(out_)) << "a worker ran without its rendezvous";
}

// A TonY configuration that TonY refuses too: tony.driver.* outside debug mode. One line, exit 2,
// nothing submitted.
TEST_P(HorovodE2eTest, DriverWithoutDebugModeIsRefusedAtSubmit) {
  TonyResult r = Run(HorovodJob({"tony.driver.instances=1"}));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_EQ(r.err,
            "tony: error: tony.driver.instances = \"1\" (--conf): tony serves Horovod's rendezvous "
            "itself; a driver task of your own needs tony.horovod.driver.mode.debug = true\n");
  EXPECT_EQ(r.out.find("submitted"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Backends, HorovodE2eTest, ::testing::Values("local", "yarn"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tony::testing
