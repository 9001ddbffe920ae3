// Real TensorFlow and JAX (PyPI, in the virtualenv of scripts/install-frameworks), run as their
// users run them, on the local backend and on the YARN mini cluster: the recipes of
// docs/running-jobs.md. Each checks the framework's own evidence, not tony's variables.

#include <regex>

#include "e2e/backend_fixture.h"

namespace tony::testing {
namespace {

class FrameworksE2eTest : public BackendE2eTest {
 protected:
  void SetUp() override {
    BackendE2eTest::SetUp();
    if (IsSkipped()) return;
    RequireInstalled(FrameworksVenv() + "/bin/python", "TONY_REQUIRE_FRAMEWORKS",
                     "scripts/install-frameworks");
    if (IsSkipped() || HasFatalFailure()) return;
    out_ = runner_.work_dir() + "/results";
    fs::create_directories(out_);
  }

  // `script` with the frameworks' Python, writing its results into out_.
  std::string Python(const std::string& script) const {
    return FrameworksVenv() + "/bin/python " + script + " " + out_;
  }
  nlohmann::json Result(const std::string& name) const {
    return nlohmann::json::parse(ReadAll(fs::path(out_) / (name + ".json")), nullptr, false);
  }

  std::string out_;
};

// MultiWorkerMirroredStrategy with Keras (tf_keras, TF_USE_LEGACY_KERAS=1), as
// examples/tensorflow-digits runs it: both workers train one model in sync; worker 1 fails at the
// start of epoch 3, the gang restarts in its containers, and both resume from Keras'
// BackupAndRestore in TONY_CHECKPOINT_DIR (a local directory; on YARN the default, on HDFS).
TEST_P(FrameworksE2eTest, TensorFlowDigitsExampleTrainsInSyncAndResumesAfterAGangRestart) {
  std::vector<std::string> conf = {"tony.application.framework=tensorflow",
                                   "tony.worker.instances=2",
                                   "tony.worker.memory=2g",
                                   "tony.worker.restart-policy=gang",
                                   "tony.worker.max-restarts=1",
                                   "tony.worker.restart-backoff-ms=0"};
  if (!yarn()) conf.push_back("tony.application.checkpoint-dir=" + runner_.work_dir() + "/ck");
  std::vector<std::string> args = Submit(
      conf, FrameworksVenv() + "/bin/python train.py --fail_at_epoch 3 --result_dir " + out_);
  ASSERT_EQ(args[1], "--src_dir");
  args[2] = TonyRunner::SourcePath("examples/tensorflow-digits");
  TonyResult r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(worker:1 +SUCCEEDED +\S+ +0 +2 )"))) << r.out;
  const std::string out = TaskStdout(r);
  EXPECT_NE(out.find("worker 1 fails at the start of epoch 3"), std::string::npos) << out;
  const nlohmann::json w0 = Result("worker-0"), w1 = Result("worker-1");
  ASSERT_TRUE(w0.is_object() && w1.is_object()) << "a worker wrote no result";
  for (const nlohmann::json& w : {w0, w1}) {
    EXPECT_EQ(w["replicas"], 2);
    EXPECT_EQ(w["attempt"], 1) << w;
    EXPECT_EQ(w["started_at_epoch"], 3) << "resumed after the last finished epoch: " << w;
    ASSERT_EQ(w["loss"].size(), 5u) << w;
    EXPECT_LT(w["loss"].back().get<double>(), w["loss"].front().get<double>());
    EXPECT_GT(w["test_accuracy"].get<double>(), 0.9) << w;
  }
  EXPECT_EQ(w0["loss"], w1["loss"]) << "the workers saw different global losses";
  EXPECT_EQ(w0["weights"], w1["weights"]) << "the workers' models differ";
}

// ParameterServerStrategy as TonY's users run it: the chief coordinates, workers and the ps are
// servers marked untracked (they never exit), and an evaluator scores the chief's checkpoint.
// The job ends when the chief and the evaluator have, with the servers stopped. Locally it runs
// with the backend's default capacity: five tasks on a machine of two cores (CI's).
TEST_P(FrameworksE2eTest, TensorFlowParameterServerTrainsOnThePsAndEnds) {
  default_local_capacity_ = true;
  TonyResult r =
      Run(Submit({"tony.application.framework=tensorflow", "tony.chief.instances=1",
                  "tony.worker.instances=2", "tony.ps.instances=1", "tony.evaluator.instances=1",
                  "tony.application.untracked.jobtypes=ps,worker", "tony.chief.memory=1536m",
                  "tony.worker.memory=1536m", "tony.ps.memory=1536m", "tony.evaluator.memory=1536m",
                  "tony.chief.command=" + Python("tf_ps_chief.py"),
                  "tony.evaluator.command=" + Python("tf_evaluator.py"),
                  "tony.worker.command=" + FrameworksVenv() + "/bin/python tf_server.py",
                  "tony.ps.command=" + FrameworksVenv() + "/bin/python tf_server.py"},
                 "unused"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json chief = Result("chief");
  ASSERT_TRUE(chief.is_object()) << "the chief wrote no result";
  for (const nlohmann::json& device : chief["devices"]) {
    EXPECT_TRUE(device.get<std::string>().starts_with("/job:ps/replica:0/task:0/")) << device;
  }
  EXPECT_EQ(chief["workers"], 2);
  EXPECT_LT(chief["last_loss"].get<double>(), chief["first_loss"].get<double>() / 1000);
  // The workers apply their steps to the ps asynchronously (stale gradients), so where training
  // ends varies from run to run; it ends near y = 3x - 1.
  EXPECT_NEAR(chief["w"].get<double>(), 3.0, 0.1);
  EXPECT_NEAR(chief["b"].get<double>(), -1.0, 0.1);
  const nlohmann::json evaluator = Result("evaluator");
  ASSERT_TRUE(evaluator.is_object()) << "the evaluator wrote no result";
  EXPECT_LT(evaluator["loss"].get<double>(), chief["first_loss"].get<double>() / 100);
  for (const char* server : {"ps:0", "worker:0", "worker:1"}) {
    EXPECT_TRUE(TaskRow(r.out, server, "STOPPED")) << server << "\n" << r.out;
  }
  EXPECT_TRUE(TaskRow(r.out, "evaluator:0", "SUCCEEDED")) << r.out;
}

// JAX across two processes with the documented jax.distributed.initialize call: a psum and an
// allgather over Gloo agree on both.
TEST_P(FrameworksE2eTest, JaxCollectivesAcrossTwoProcesses) {
  TonyResult r = Run(
      Submit({"tony.application.framework=jax", "tony.worker.instances=2", "tony.worker.memory=1g"},
             Python("jax_collectives.py")));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (int process : {0, 1}) {
    const nlohmann::json p = Result("process-" + std::to_string(process));
    ASSERT_TRUE(p.is_object()) << "process " << process << " wrote no result";
    EXPECT_EQ(p["process"], process);
    EXPECT_EQ(p["processes"], 2);
    EXPECT_EQ(p["devices"], 2);
    EXPECT_EQ(p["psum"], 3.0);  // 1 + 2
    EXPECT_EQ(p["gathered"], nlohmann::json({0, 10}));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, FrameworksE2eTest, ::testing::Values("local", "yarn"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tony::testing
