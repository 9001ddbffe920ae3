#include "runtime/runtime.h"

#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/horovod_plan.h"

namespace tony::runtime {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;
using json = nlohmann::json;

TaskContext BaseContext(std::string framework, std::string type, int index, ClusterSpec cluster) {
  TaskContext ctx;
  ctx.framework = std::move(framework);
  ctx.job_type = std::move(type);
  ctx.task_index = index;
  ctx.cluster = std::move(cluster);
  ctx.num_tracked_tasks = 3;
  ctx.app_id = "application_1700000000000_0042";
  ctx.distributed_mode = "GANG";
  ctx.session_id = "0";
  ctx.am_host = "am.example.com";
  ctx.am_port = 40123;
  ctx.attempt_number = 1;
  return ctx;
}

Environment Build(const TaskContext& ctx) {
  absl::StatusOr<Environment> env = BuildTaskEnvironment(ctx);
  EXPECT_TRUE(env.ok()) << env.status();
  return env.ok() ? *env : Environment{};
}

std::string BuildError(const TaskContext& ctx) {
  absl::StatusOr<Environment> env = BuildTaskEnvironment(ctx);
  EXPECT_FALSE(env.ok());
  if (env.ok()) return "";
  EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(env.status().message());
}

bool HasVariableWithPrefix(const Environment& env, absl::string_view prefix) {
  for (const auto& [name, value] : env) {
    if (absl::StartsWith(name, prefix)) return true;
  }
  return false;
}

// ---- Common variables and the framework table.

TEST(CommonEnvTest, WorkerGetsEveryCommonVariable) {
  Environment env = Build(BaseContext("standalone", "worker", 0, {{"worker", {"h0:1000"}}}));
  EXPECT_EQ(env, (Environment{{"JOB_NAME", "worker"},
                              {"TASK_INDEX", "0"},
                              {"TASK_NUM", "3"},
                              {"JOB_ID", "application_1700000000000_0042"},
                              {"DISTRIBUTED_MODE", "GANG"},
                              {"SESSION_ID", "0"},
                              {"AM_HOST", "am.example.com"},
                              {"AM_PORT", "40123"},
                              {"ATTEMPT_NUMBER", "1"}}));
}

TEST(CommonEnvTest, IsChiefOnlyOnTheChief) {
  TaskContext ctx = BaseContext("standalone", "chief", 0, {{"chief", {"h0:1000"}}});
  ctx.is_chief = true;
  EXPECT_EQ(Build(ctx).at("IS_CHIEF"), "true");
  ctx.is_chief = false;
  EXPECT_THAT(Build(ctx), Not(Contains(Key("IS_CHIEF"))));
}

TEST(CommonEnvTest, TensorBoardPortOnlyWhenReserved) {
  TaskContext ctx = BaseContext("standalone", "worker", 0, {{"worker", {"h0:1000"}}});
  EXPECT_THAT(Build(ctx), Not(Contains(Key("TB_PORT"))));
  ctx.tensorboard_port = 6006;
  EXPECT_EQ(Build(ctx).at("TB_PORT"), "6006");
  EXPECT_THAT(Build(ctx), Not(Contains(Key("TB_HOST"))));
  ctx.tensorboard_host = "node7";
  EXPECT_EQ(Build(ctx).at("TB_HOST"), "node7");
}

TEST(CommonEnvTest, MalformedContextIsRejected) {
  TaskContext ctx = BaseContext("standalone", "", 0, {});
  EXPECT_THAT(BuildError(ctx), HasSubstr("job type"));
  ctx = BaseContext("standalone", "worker", -1, {});
  EXPECT_THAT(BuildError(ctx), HasSubstr("worker:-1"));
}

TEST(RuntimeTest, UnknownFrameworkIsNamedWithTheValidOnes) {
  std::string message = BuildError(BaseContext("caffe", "worker", 0, {}));
  EXPECT_THAT(message, HasSubstr("'caffe'"));
  for (const std::string& name : SupportedFrameworks()) EXPECT_THAT(message, HasSubstr(name));
}

TEST(RuntimeTest, SupportedFrameworks) {
  EXPECT_THAT(SupportedFrameworks(),
              ElementsAre("tensorflow", "pytorch", "mxnet", "horovod", "jax", "standalone"));
}

TEST(RuntimeTest, FrameworkNameIgnoresCase) {
  Environment env = Build(BaseContext("PyTorch", "worker", 0, {{"worker", {"h0:1000"}}}));
  EXPECT_EQ(env.at("RANK"), "0");
}

TEST(RuntimeTest, ScrubsMallocArenaMax) {
  EXPECT_THAT(ScrubbedVariables(), ElementsAre("MALLOC_ARENA_MAX"));
  TaskContext ctx = BaseContext("standalone", "worker", 0, {{"worker", {"h0:1000"}}});
  EXPECT_THAT(Build(ctx), Not(Contains(Key("MALLOC_ARENA_MAX"))));
  ctx.execution_envs["MALLOC_ARENA_MAX"] = "4";  // the user asked for it explicitly
  EXPECT_EQ(Build(ctx).at("MALLOC_ARENA_MAX"), "4");
}

TEST(RuntimeTest, TheMathLibrariesGetAThreadForEachCoreTheTaskAskedFor) {
  TaskContext ctx = BaseContext("pytorch", "worker", 0, {{"worker", {"h0:1000", "h1:1000"}}});
  EXPECT_THAT(Build(ctx), Not(Contains(Key("OMP_NUM_THREADS"))));  // 0: the host's choice stands
  ctx.cpu_threads = 3;
  EXPECT_EQ(Build(ctx).at("OMP_NUM_THREADS"), "3");
  ctx.execution_envs["OMP_NUM_THREADS"] = "8";  // the job's own choice wins
  EXPECT_EQ(Build(ctx).at("OMP_NUM_THREADS"), "8");
}

TEST(RuntimeTest, UserVariablesWinOverTonys) {
  TaskContext ctx =
      BaseContext("pytorch", "worker", 1, {{"worker", {"h0:1000", "h1:1000", "h2:1000"}}});
  ctx.container_envs = {{"RANK", "7"}, {"JOB_NAME", "from-container"}, {"LD_LIBRARY_PATH", "/x"}};
  ctx.execution_envs = {{"JOB_NAME", "from-execution"}, {"NCCL_DEBUG", "INFO"}};
  Environment env = Build(ctx);
  EXPECT_EQ(env.at("RANK"), "7");                   // container env over framework
  EXPECT_EQ(env.at("JOB_NAME"), "from-execution");  // execution env over container env
  EXPECT_EQ(env.at("LD_LIBRARY_PATH"), "/x");
  EXPECT_EQ(env.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(env.at("WORLD_SIZE"), "3");  // untouched values stay tony's
}

// Every framework, given a cluster that has what each needs, sets the common variables.
class EveryFrameworkTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryFrameworkTest, SetsCommonVariables) {
  ClusterSpec cluster = {{"worker", {"h0:1000", "h1:1000"}}, {"scheduler", {"h2:1000"}}};
  TaskContext ctx = BaseContext(GetParam(), "worker", 1, cluster);
  ctx.rendezvous_address = "h3:1000";  // horovod's, from the AM
  Environment env = Build(ctx);
  EXPECT_EQ(env.at("JOB_NAME"), "worker");
  EXPECT_EQ(env.at("TASK_INDEX"), "1");
  EXPECT_EQ(env.at("AM_PORT"), "40123");
}

INSTANTIATE_TEST_SUITE_P(AllFrameworks, EveryFrameworkTest,
                         ::testing::ValuesIn(SupportedFrameworks()));

// ---- TensorFlow.

ClusterSpec TfCluster() {
  return {{"chief", {"c0:2222"}},
          {"worker", {"w0:2222", "w1:2222"}},
          {"ps", {"p0:2222"}},
          {"evaluator", {"e0:2222"}},
          {"tensorboard", {"t0:6006"}}};
}

TEST(TensorFlowTest, ClusterSpecHoldsEveryType) {
  Environment env = Build(BaseContext("tensorflow", "worker", 1, TfCluster()));
  EXPECT_EQ(json::parse(env.at("CLUSTER_SPEC")), json(TfCluster()));
  EXPECT_THAT(env.at("CLUSTER_SPEC"), Not(HasSubstr(" ")));  // compact
}

TEST(TensorFlowTest, WorkerConfigLeavesOutEvaluatorAndSidecars) {
  Environment env = Build(BaseContext("tensorflow", "worker", 1, TfCluster()));
  json expected = {
      {"cluster",
       {{"chief", {"c0:2222"}}, {"worker", {"w0:2222", "w1:2222"}}, {"ps", {"p0:2222"}}}},
      {"task", {{"type", "worker"}, {"index", 1}}}};
  EXPECT_EQ(json::parse(env.at("TF_CONFIG")), expected);
}

TEST(TensorFlowTest, ChiefAndPsConfigsAlsoLeaveOutEvaluator) {
  for (const std::string type : {"chief", "ps"}) {
    json config =
        json::parse(Build(BaseContext("tensorflow", type, 0, TfCluster())).at("TF_CONFIG"));
    EXPECT_FALSE(config["cluster"].contains("evaluator")) << type;
    EXPECT_EQ(config["task"], json({{"type", type}, {"index", 0}}));
  }
}

TEST(TensorFlowTest, EvaluatorSeesItselfButNotSidecars) {
  json config =
      json::parse(Build(BaseContext("tensorflow", "evaluator", 0, TfCluster())).at("TF_CONFIG"));
  EXPECT_EQ(config["cluster"]["evaluator"], json({"e0:2222"}));
  EXPECT_FALSE(config["cluster"].contains("tensorboard"));
  EXPECT_EQ(config["cluster"].size(), 4u);
  EXPECT_EQ(config["task"], json({{"type", "evaluator"}, {"index", 0}}));
}

TEST(TensorFlowTest, ConfiguredSidecarTypesAreLeftOut) {
  ClusterSpec cluster = TfCluster();
  cluster["profiler"] = {"x0:1"};
  TaskContext ctx = BaseContext("tensorflow", "worker", 0, cluster);
  ctx.sidecar_types = {"tensorboard", "profiler"};
  json config = json::parse(Build(ctx).at("TF_CONFIG"));
  EXPECT_FALSE(config["cluster"].contains("profiler"));
  EXPECT_TRUE(config["cluster"].contains("ps"));

  ctx.sidecar_types = {};  // nothing is a sidecar: TensorBoard stays in the cluster
  config = json::parse(Build(ctx).at("TF_CONFIG"));
  EXPECT_TRUE(config["cluster"].contains("tensorboard"));
}

TEST(TensorFlowTest, FcfsModeGetsNoClusterVariables) {
  TaskContext ctx = BaseContext("tensorflow", "worker", 0, TfCluster());
  ctx.distributed_mode = "FCFS";
  Environment env = Build(ctx);
  EXPECT_THAT(env, Not(Contains(Key("TF_CONFIG"))));
  EXPECT_THAT(env, Not(Contains(Key("CLUSTER_SPEC"))));
  EXPECT_EQ(env.at("DISTRIBUTED_MODE"), "FCFS");
}

TEST(TensorFlowTest, AddressThatIsNotUtf8IsAnErrorNotACrash) {
  TaskContext ctx = BaseContext("tensorflow", "worker", 0, {{"worker", {"\xff\xfe:1"}}});
  EXPECT_THAT(BuildError(ctx), HasSubstr("JSON"));
}

// ---- PyTorch.

TEST(PyTorchTest, WorkersOnDifferentHosts) {
  ClusterSpec cluster = {{"worker", {"h0:29500", "h1:29501"}}, {"tensorboard", {"t0:6006"}}};
  Environment env = Build(BaseContext("pytorch", "worker", 1, cluster));
  EXPECT_EQ(env.at("INIT_METHOD"), "tcp://h0:29500");
  EXPECT_EQ(env.at("RANK"), "1");
  EXPECT_EQ(env.at("WORLD"), "2");
  EXPECT_EQ(env.at("MASTER_ADDR"), "h0");
  EXPECT_EQ(env.at("MASTER_PORT"), "29500");
  EXPECT_EQ(env.at("WORLD_SIZE"), "2");
  EXPECT_EQ(env.at("LOCAL_RANK"), "0");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "1");
  EXPECT_EQ(env.at("TORCHELASTIC_RESTART_COUNT"), "0");
}

TEST(PyTorchTest, AnElasticWorkerGetsTorchrunsSettingsAndNoFixedWorld) {
  TaskContext ctx = BaseContext("pytorch", "worker", 1, {{"worker", {"h0:1000", "h1:1001"}}});
  ctx.elastic_nnodes = "1:2";
  ctx.elastic_max_restarts = 7;
  ctx.rendezvous_address = "am.example.com:29400";
  Environment env = Build(ctx);
  EXPECT_EQ(env.at("PET_NNODES"), "1:2");
  EXPECT_EQ(env.at("PET_RDZV_BACKEND"), "c10d");
  EXPECT_EQ(env.at("PET_RDZV_ENDPOINT"), "am.example.com:29400");
  EXPECT_EQ(env.at("PET_RDZV_ID"), "application_1700000000000_0042");
  EXPECT_EQ(env.at("PET_RDZV_CONF"), "is_host=false");
  EXPECT_EQ(env.at("PET_MAX_RESTARTS"), "7");
  // torchrun gives its processes their world at each rendezvous.
  for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "INIT_METHOD"}) {
    EXPECT_EQ(env.count(name), 0u) << name;
  }
  ctx.rendezvous_address.clear();
  EXPECT_EQ(BuildError(ctx), "elastic task worker:1 has no c10d rendezvous: the AM named none");
}

TEST(PyTorchTest, ARestartedGangSaysHowOftenItRestarted) {
  ClusterSpec cluster = {{"worker", {"h0:29500", "h1:29501"}}};
  TaskContext ctx = BaseContext("pytorch", "worker", 0, cluster);
  ctx.restart_count = 2;
  EXPECT_EQ(Build(ctx).at("TORCHELASTIC_RESTART_COUNT"), "2");
}

TEST(PyTorchTest, LocalRanksCountWorkersOnTheSameHost) {
  ClusterSpec cluster = {{"worker", {"a:1000", "b:1000", "a:1001", "a:1002"}}};
  Environment w2 = Build(BaseContext("pytorch", "worker", 2, cluster));
  EXPECT_EQ(w2.at("RANK"), "2");
  EXPECT_EQ(w2.at("LOCAL_RANK"), "1");
  EXPECT_EQ(w2.at("LOCAL_WORLD_SIZE"), "3");
  Environment w3 = Build(BaseContext("pytorch", "worker", 3, cluster));
  EXPECT_EQ(w3.at("LOCAL_RANK"), "2");
  Environment w1 = Build(BaseContext("pytorch", "worker", 1, cluster));
  EXPECT_EQ(w1.at("LOCAL_RANK"), "0");
  EXPECT_EQ(w1.at("LOCAL_WORLD_SIZE"), "1");
}

TEST(PyTorchTest, ChiefIsRankZeroAndMaster) {
  ClusterSpec cluster = {{"chief", {"c:29500"}}, {"worker", {"c:29501", "w:29500"}}};
  Environment chief = Build(BaseContext("pytorch", "chief", 0, cluster));
  EXPECT_EQ(chief.at("RANK"), "0");
  EXPECT_EQ(chief.at("WORLD_SIZE"), "3");
  EXPECT_EQ(chief.at("MASTER_ADDR"), "c");
  EXPECT_EQ(chief.at("MASTER_PORT"), "29500");
  EXPECT_EQ(chief.at("INIT_METHOD"), "tcp://c:29500");
  Environment w0 = Build(BaseContext("pytorch", "worker", 0, cluster));
  EXPECT_EQ(w0.at("RANK"), "1");
  EXPECT_EQ(w0.at("LOCAL_RANK"), "1");  // shares host c with the chief
  EXPECT_EQ(w0.at("LOCAL_WORLD_SIZE"), "2");
  EXPECT_EQ(w0.at("INIT_METHOD"), "tcp://c:29500");
  EXPECT_EQ(Build(BaseContext("pytorch", "worker", 1, cluster)).at("RANK"), "2");
}

TEST(PyTorchTest, TasksOutsideTheWorldGetNoRank) {
  ClusterSpec cluster = {{"worker", {"h0:1"}}, {"tensorboard", {"t0:6006"}}};
  Environment env = Build(BaseContext("pytorch", "tensorboard", 0, cluster));
  EXPECT_THAT(env, Not(Contains(Key("RANK"))));
  EXPECT_THAT(env, Not(Contains(Key("MASTER_ADDR"))));
  EXPECT_EQ(env.at("JOB_NAME"), "tensorboard");
}

TEST(PyTorchTest, Ipv6MasterAddress) {
  Environment env = Build(BaseContext("pytorch", "worker", 0, {{"worker", {"[fd00::1]:29500"}}}));
  EXPECT_EQ(env.at("MASTER_ADDR"), "fd00::1");
  EXPECT_EQ(env.at("MASTER_PORT"), "29500");
  EXPECT_EQ(env.at("INIT_METHOD"), "tcp://[fd00::1]:29500");
}

TEST(PyTorchTest, MissingMasterIsAnError) {
  EXPECT_EQ(BuildError(BaseContext("pytorch", "worker", 0, {{"ps", {"p:1"}}})),
            "pytorch needs task worker:0 in the cluster spec");
}

TEST(PyTorchTest, OwnTaskMissingIsAnError) {
  EXPECT_EQ(BuildError(BaseContext("pytorch", "worker", 5, {{"worker", {"h:1", "h:2"}}})),
            "pytorch needs task worker:5 in the cluster spec");
}

TEST(PyTorchTest, MalformedAddressNamesTheTask) {
  for (const std::string bad : {"nohost", "h:0", "h:70000", "h:port", ":1"}) {
    std::string message =
        BuildError(BaseContext("pytorch", "worker", 0, {{"worker", {"h:1", bad}}}));
    EXPECT_THAT(message, HasSubstr("worker:1"));
    EXPECT_THAT(message, HasSubstr("'" + bad + "'"));
  }
}

// ---- MXNet.

ClusterSpec MxCluster() {
  return {{"scheduler", {"s0:9091"}},
          {"server", {"p0:9000", "p1:9000"}},
          {"worker", {"w0:9000", "w1:9000", "w2:9000"}}};
}

TEST(MXNetTest, EveryRoleGetsTheSchedulerAndCounts) {
  for (const std::string role : {"scheduler", "server", "worker"}) {
    Environment env = Build(BaseContext("mxnet", role, 0, MxCluster()));
    EXPECT_EQ(env.at("DMLC_ROLE"), role);
    EXPECT_EQ(env.at("DMLC_PS_ROOT_URI"), "s0");
    EXPECT_EQ(env.at("DMLC_PS_ROOT_PORT"), "9091");
    EXPECT_EQ(env.at("DMLC_NUM_SERVER"), "2");
    EXPECT_EQ(env.at("DMLC_NUM_WORKER"), "3");
    EXPECT_EQ(env.at("DMLC_LOCAL"), "0");
  }
}

TEST(MXNetTest, OtherTypesHaveNoRole) {
  ClusterSpec cluster = MxCluster();
  cluster["tensorboard"] = {"t:6006"};
  EXPECT_FALSE(
      HasVariableWithPrefix(Build(BaseContext("mxnet", "tensorboard", 0, cluster)), "DMLC_"));
}

TEST(MXNetTest, MissingSchedulerIsAnError) {
  ClusterSpec cluster = MxCluster();
  cluster.erase("scheduler");
  EXPECT_EQ(BuildError(BaseContext("mxnet", "worker", 0, cluster)),
            "mxnet needs task scheduler:0 in the cluster spec");
}

// ---- Horovod.

TaskContext HorovodContext(std::string type, int index, ClusterSpec cluster) {
  TaskContext ctx = BaseContext("horovod", std::move(type), index, std::move(cluster));
  ctx.rendezvous_address = "am:7000";
  return ctx;
}

TEST(HorovodTest, TwoHostsTwoWorkersEach) {
  ClusterSpec cluster = {{"worker", {"a:1", "a:2", "b:1", "b:2"}}};
  Environment env = Build(HorovodContext("worker", 3, cluster));
  EXPECT_EQ(env.at("HOROVOD_CONTROLLER"), "gloo");
  EXPECT_EQ(env.at("HOROVOD_CPU_OPERATIONS"), "gloo");
  EXPECT_EQ(env.at("HOROVOD_GLOO_RENDEZVOUS_ADDR"), "am");
  EXPECT_EQ(env.at("HOROVOD_GLOO_RENDEZVOUS_PORT"), "7000");
  EXPECT_EQ(env.at("HOROVOD_GLOO_TIMEOUT_SECONDS"), "2000");
  EXPECT_EQ(env.at("HOROVOD_RANK"), "3");
  EXPECT_EQ(env.at("HOROVOD_SIZE"), "4");
  EXPECT_EQ(env.at("HOROVOD_LOCAL_RANK"), "1");
  EXPECT_EQ(env.at("HOROVOD_LOCAL_SIZE"), "2");
  EXPECT_EQ(env.at("HOROVOD_CROSS_RANK"), "1");
  EXPECT_EQ(env.at("HOROVOD_CROSS_SIZE"), "2");
  EXPECT_EQ(env.at("HOROVOD_HOSTNAME"), "b");
}

TEST(HorovodTest, WorkersOnOneHost) {
  ClusterSpec cluster = {{"worker", {"a:1", "a:2"}}};
  Environment env = Build(HorovodContext("worker", 1, cluster));
  EXPECT_EQ(env.at("HOROVOD_RANK"), "1");
  EXPECT_EQ(env.at("HOROVOD_LOCAL_RANK"), "1");
  EXPECT_EQ(env.at("HOROVOD_LOCAL_SIZE"), "2");
  EXPECT_EQ(env.at("HOROVOD_CROSS_RANK"), "0");
  EXPECT_EQ(env.at("HOROVOD_CROSS_SIZE"), "1");
}

// worker:0 on a, worker:1 on b, worker:2 on a: Horovod numbers host a's slots first.
TEST(HorovodTest, InterleavedPlacementIsNumberedHostByHost) {
  ClusterSpec cluster = {{"worker", {"a:1", "b:1", "a:2"}}};
  Environment w0 = Build(HorovodContext("worker", 0, cluster));
  EXPECT_EQ(w0.at("HOROVOD_RANK"), "0");
  EXPECT_EQ(w0.at("HOROVOD_CROSS_RANK"), "0");
  EXPECT_EQ(w0.at("HOROVOD_CROSS_SIZE"), "2");
  Environment w2 = Build(HorovodContext("worker", 2, cluster));
  EXPECT_EQ(w2.at("HOROVOD_RANK"), "1");
  EXPECT_EQ(w2.at("HOROVOD_LOCAL_RANK"), "1");
  EXPECT_EQ(w2.at("HOROVOD_LOCAL_SIZE"), "2");
  EXPECT_EQ(w2.at("HOROVOD_CROSS_RANK"), "0");
  EXPECT_EQ(w2.at("HOROVOD_CROSS_SIZE"), "1");  // only host a has a second slot
  Environment w1 = Build(HorovodContext("worker", 1, cluster));
  EXPECT_EQ(w1.at("HOROVOD_RANK"), "2");
  EXPECT_EQ(w1.at("HOROVOD_LOCAL_RANK"), "0");
  EXPECT_EQ(w1.at("HOROVOD_LOCAL_SIZE"), "1");
  EXPECT_EQ(w1.at("HOROVOD_CROSS_RANK"), "1");
  EXPECT_EQ(w1.at("HOROVOD_CROSS_SIZE"), "2");
  EXPECT_EQ(w1.at("HOROVOD_HOSTNAME"), "b");
}

// Horovod's own get_host_assignments for "a:2,b:1" gives the same slots, and its rendezvous server
// sizes its scopes from them.
TEST(HorovodTest, PlanHostListAndScopeSizes) {
  absl::StatusOr<std::vector<HorovodSlot>> plan =
      HorovodPlan({{"worker", {"a:1", "b:1", "a:2"}}, {"driver", {"d:1"}}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->size(), 3u);
  EXPECT_EQ((*plan)[0].task_index, 0);
  EXPECT_EQ((*plan)[1].task_index, 2);
  EXPECT_EQ((*plan)[2].task_index, 1);
  EXPECT_EQ(HorovodHostList(*plan), "a:2,b:1");
  EXPECT_THAT(HorovodScopeSizes(*plan),
              ElementsAre(Pair("cross_0", 2), Pair("cross_1", 1), Pair("global", 3),
                          Pair("local_a", 2), Pair("local_b", 1)));
}

// TonY's debug driver protocol: the host list of the workers and the directory for its port file;
// no HOROVOD_* variables, since the driver is not a rank.
TEST(HorovodTest, DebugDriverGetsTheWorkerListAndItsOutputPath) {
  TaskContext ctx = BaseContext("horovod", "driver", 0,
                                {{"driver", {"d:7000"}}, {"worker", {"a:1", "b:1", "a:2"}}});
  ctx.driver_output_path = "/c/horovod_driver";
  Environment env = Build(ctx);
  EXPECT_FALSE(HasVariableWithPrefix(env, "HOROVOD_"));
  EXPECT_EQ(env.at("CLUSTER_WORKER_LIST"), "a:2,b:1");
  EXPECT_EQ(env.at("DRIVER_OUTPUT_PATH"), "/c/horovod_driver");
  EXPECT_EQ(env.at("JOB_NAME"), "driver");
}

TEST(HorovodTest, OtherTypesGetNoHorovodVariables) {
  Environment env =
      Build(HorovodContext("tensorboard", 0, {{"worker", {"a:1"}}, {"tensorboard", {"a:2"}}}));
  EXPECT_FALSE(HasVariableWithPrefix(env, "HOROVOD_"));
  EXPECT_FALSE(env.count("CLUSTER_WORKER_LIST"));
}

TEST(HorovodTest, WorkerWithoutARendezvousIsAnError) {
  EXPECT_EQ(BuildError(BaseContext("horovod", "worker", 0, {{"worker", {"a:1"}}})),
            "horovod needs the address of its rendezvous from the AM, which gave none");
  TaskContext bad = HorovodContext("worker", 0, {{"worker", {"a:1"}}});
  bad.rendezvous_address = "am";
  EXPECT_NE(BuildError(bad).find("the rendezvous"), std::string::npos) << BuildError(bad);
}

// ---- JAX.

TEST(JaxTest, WorkersOnly) {
  ClusterSpec cluster = {{"worker", {"h0:1234", "h1:1234", "h2:1234"}}};
  Environment env = Build(BaseContext("jax", "worker", 2, cluster));
  EXPECT_EQ(env.at("JAX_COORDINATOR_ADDRESS"), "h0:1234");
  EXPECT_EQ(env.at("JAX_NUM_PROCESSES"), "3");
  EXPECT_EQ(env.at("JAX_PROCESS_ID"), "2");
}

TEST(JaxTest, ChiefIsTheCoordinator) {
  ClusterSpec cluster = {{"chief", {"c:1234"}}, {"worker", {"h0:1234", "h1:1234"}}};
  Environment env = Build(BaseContext("jax", "worker", 0, cluster));
  EXPECT_EQ(env.at("JAX_COORDINATOR_ADDRESS"), "c:1234");
  EXPECT_EQ(env.at("JAX_NUM_PROCESSES"), "3");
  EXPECT_EQ(env.at("JAX_PROCESS_ID"), "1");
  EXPECT_EQ(Build(BaseContext("jax", "chief", 0, cluster)).at("JAX_PROCESS_ID"), "0");
}

TEST(JaxTest, MissingCoordinatorIsAnError) {
  EXPECT_EQ(BuildError(BaseContext("jax", "worker", 0, {})),
            "jax needs task worker:0 in the cluster spec");
}

// ---- Standalone.

TEST(StandaloneTest, AddsNothingToTheCommonVariables) {
  TaskContext ctx = BaseContext("standalone", "worker", 0, {{"worker", {"h0:1000"}}});
  ctx.is_chief = true;
  Environment env = Build(ctx);
  EXPECT_EQ(env.size(), 10u);  // the nine common variables and IS_CHIEF
  EXPECT_THAT(env, Not(Contains(Key("TF_CONFIG"))));
  EXPECT_THAT(env, Not(Contains(Key("RANK"))));
}

}  // namespace
}  // namespace tony::runtime
