// What the executor hands the framework runtimes and the user process, from its options, the
// job and the AM's cluster spec.

#include "executor/task_context.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "config/key_catalog.h"
#include "gtest/gtest.h"
#include "rpc/launch_contract.h"

namespace tony::executor {
namespace {

config::JobSpec Spec(const std::vector<std::pair<std::string, std::string>>& conf) {
  config::Configuration configuration = config::KeyCatalog::BuiltIn().Defaults();
  configuration.Set("tony.containers.command", "true", config::ValueSource::ConfFlag());
  for (const auto& [key, value] : conf) {
    configuration.Set(key, value, config::ValueSource::ConfFlag());
  }
  absl::StatusOr<config::JobSpec> spec = config::BuildJobSpec(configuration);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

ExecutorOptions Options() {
  ExecutorOptions options;
  options.app_id = "application_1_0001";
  options.am_address = "am-host:4242";
  options.task = {"worker", 1};
  options.attempt = 1;  // as launched; the cluster spec's attempt is the one that runs
  options.host = "worker-host";
  options.log_dir = "/logs/container_1";
  return options;
}

rpc::WaitClusterSpecResponse Cluster() {
  rpc::WaitClusterSpecResponse cluster;
  (*cluster.mutable_cluster())["worker"].add_addresses("a:1");
  (*cluster.mutable_cluster())["worker"].add_addresses("b:2");
  (*cluster.mutable_cluster())["ps"].add_addresses("c:3");
  cluster.set_num_tracked_tasks(2);
  cluster.set_is_chief(false);
  cluster.set_session_id("0");
  cluster.set_attempt(2);
  cluster.set_restart_count(3);
  cluster.set_rendezvous_address("am-host:5000");
  return cluster;
}

TEST(TaskContextTest, TheContextCarriesTheClusterSpecTheTaskAndTheAm) {
  const config::JobSpec spec = Spec({{"tony.application.framework", "pytorch"},
                                     {"tony.worker.instances", "2"},
                                     {"tony.ps.instances", "1"},
                                     {"tony.application.sidecar.jobtypes", "ps"},
                                     {"tony.execution.envs", "A=1"}});
  const runtime::TaskContext context = TaskContextFor(Options(), spec, Cluster());
  EXPECT_EQ(context.framework, "pytorch");
  EXPECT_EQ(context.job_type, "worker");
  EXPECT_EQ(context.task_index, 1);
  EXPECT_EQ(context.cluster.at("worker"), (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_EQ(context.cluster.at("ps"), std::vector<std::string>{"c:3"});
  EXPECT_EQ(context.num_tracked_tasks, 2);
  EXPECT_EQ(context.am_host, "am-host");
  EXPECT_EQ(context.am_port, 4242);
  EXPECT_EQ(context.attempt_number, 2);
  EXPECT_EQ(context.restart_count, 3);
  EXPECT_EQ(context.rendezvous_address, "am-host:5000");
  EXPECT_EQ(context.tensorboard_host, "worker-host");
  EXPECT_EQ(context.execution_envs.at("A"), "1");
  EXPECT_TRUE(context.sidecar_types.count("ps"));
  EXPECT_TRUE(context.sidecar_types.count("tensorboard"));
  EXPECT_FALSE(context.tensorboard_port.has_value()) << "the caller reserves it";
}

TEST(TaskContextTest, AnElasticWorkerGetsTorchrunsNodeRangeAndRestarts) {
  config::JobSpec spec = Spec({{"tony.application.framework", "pytorch"},
                               {"tony.worker.instances", "3"},
                               {"tony.worker.min-instances", "2"}});
  runtime::TaskContext context = TaskContextFor(Options(), spec, Cluster());
  EXPECT_EQ(context.elastic_nnodes, "2:3");
  EXPECT_EQ(context.elastic_max_restarts, kElasticDefaultMaxRestarts);
  spec = Spec({{"tony.application.framework", "pytorch"},
               {"tony.worker.instances", "3"},
               {"tony.worker.min-instances", "1"},
               {"tony.application.max-gang-restarts", "4"}});
  context = TaskContextFor(Options(), spec, Cluster());
  EXPECT_EQ(context.elastic_nnodes, "1:3");
  EXPECT_EQ(context.elastic_max_restarts, 4);
  // Not elastic: nothing of torchrun's.
  spec = Spec({{"tony.application.framework", "pytorch"}, {"tony.worker.instances", "3"}});
  EXPECT_EQ(TaskContextFor(Options(), spec, Cluster()).elastic_nnodes, "");
}

TEST(TaskContextTest, TheTaskGetsItsShareOfMathThreadsUnlessTheHostOrTorchrunDecides) {
  const char* inherited = std::getenv("OMP_NUM_THREADS");
  const std::optional<std::string> saved =
      inherited == nullptr ? std::nullopt : std::optional<std::string>(inherited);
  unsetenv("OMP_NUM_THREADS");
  ExecutorOptions yarn = Options();
  yarn.on_yarn = true;
  config::JobSpec spec = Spec({{"tony.application.framework", "pytorch"},
                               {"tony.worker.instances", "2"},
                               {"tony.worker.vcores", "3"}});
  // On YARN the cores the task asked for, whatever the host has.
  EXPECT_EQ(MathThreads(yarn, spec, 64), 3);
  // Locally, unaccounted cores: the machine's, shared by the job's two tasks.
  EXPECT_EQ(MathThreads(Options(), spec, 16), 8);
  EXPECT_EQ(MathThreads(Options(), spec, 1), 1);
  EXPECT_EQ(TaskContextFor(Options(), spec, Cluster()).cpu_threads,
            std::max(1, AvailableCpus() / 2));
  // Locally with tony.local.vcores, the task's own.
  spec = Spec({{"tony.application.framework", "pytorch"},
               {"tony.worker.instances", "2"},
               {"tony.worker.vcores", "3"},
               {"tony.local.vcores", "6"}});
  EXPECT_EQ(MathThreads(Options(), spec, 16), 3);
  // torchrun gives each process it starts its own (1 where it starts several).
  spec = Spec({{"tony.application.framework", "pytorch"},
               {"tony.worker.instances", "2"},
               {"tony.worker.command", "torchrun --nproc_per_node=4 train.py"}});
  EXPECT_EQ(MathThreads(yarn, spec, 64), 0);
  // The host's own setting (a local job's shell, the NodeManager's admin-env) stands.
  spec = Spec({{"tony.application.framework", "pytorch"}, {"tony.worker.instances", "2"}});
  setenv("OMP_NUM_THREADS", "6", 1);
  EXPECT_EQ(MathThreads(yarn, spec, 64), 0);
  EXPECT_EQ(TaskContextFor(Options(), spec, Cluster()).cpu_threads, 0);
  if (saved.has_value()) {
    setenv("OMP_NUM_THREADS", saved->c_str(), 1);
  } else {
    unsetenv("OMP_NUM_THREADS");
  }
}

TEST(TaskContextTest, ASingleNodeJobRunsAsStandaloneWhateverItsFramework) {
  // No instances of any type: single-node mode.
  const config::JobSpec spec = Spec({{"tony.application.framework", "tensorflow"}});
  ASSERT_TRUE(spec.single_node);
  EXPECT_EQ(TaskContextFor(Options(), spec, Cluster()).framework, "standalone");
}

TEST(TaskContextTest, TheUserProcessSeesNoneOfTheLaunchContract) {
  const SpawnOptions spawn = UserProcessSpawn(Options(), "python train.py", {{"RANK", "1"}});
  EXPECT_EQ(spawn.argv, (std::vector<std::string>{"/bin/sh", "-c", "python train.py"}));
  EXPECT_EQ(spawn.set_env.at("RANK"), "1");
  for (std::string_view name : rpc::kInternalVariables) {
    EXPECT_NE(std::find(spawn.unset_env.begin(), spawn.unset_env.end(), name),
              spawn.unset_env.end())
        << name;
  }
  EXPECT_EQ(spawn.stdout_path, "/logs/container_1/stdout");
  EXPECT_EQ(spawn.stderr_path, "/logs/container_1/stderr");
  EXPECT_EQ(spawn.parent_death_signal, SIGKILL);
}

TEST(TaskContextTest, TheTaskWritesItsOutputsLocallyAndOnHdfsThroughACopy) {
  const std::string cwd = "/nm/appcache/app/container";
  EXPECT_EQ(LocalOutputDir("", cwd), "");
  EXPECT_EQ(LocalOutputDir("/home/alice/.tony/jobs/app/outputs", cwd),
            "/home/alice/.tony/jobs/app/outputs");
  EXPECT_EQ(LocalOutputDir("file:///shared/run1", cwd), "/shared/run1");
  EXPECT_EQ(LocalOutputDir("hdfs://nn:8020/user/alice/.tony/app/outputs", cwd),
            cwd + "/tony-outputs");
  EXPECT_FALSE(OutputsUploaded("/shared/run1"));
  EXPECT_FALSE(OutputsUploaded("file:///shared/run1"));
  EXPECT_TRUE(OutputsUploaded("hdfs://nn:8020/user/alice/run1"));

  // Both variables reach the task's environment.
  runtime::TaskContext context;
  context.framework = "standalone";
  context.job_type = "worker";
  context.output_dir = cwd + "/tony-outputs";
  context.output_uri = "hdfs://nn:8020/user/alice/run1";
  absl::StatusOr<runtime::Environment> env = runtime::BuildTaskEnvironment(context);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("TONY_OUTPUT_DIR"), cwd + "/tony-outputs");
  EXPECT_EQ(env->at("TONY_OUTPUT_URI"), "hdfs://nn:8020/user/alice/run1");
}

TEST(TaskContextTest, ThePreprocessingJobRunsAloneAndTheOthersGetItsParameters) {
  const config::JobSpec spec = Spec({{"tony.application.framework", "tensorflow"},
                                     {"tony.worker.instances", "2"},
                                     {"tony.application.enable-preprocess", "true"}});
  ExecutorOptions options = Options();
  options.task = {config::kPreprocessType, 0};
  rpc::WaitClusterSpecResponse cluster = Cluster();
  runtime::TaskContext context = TaskContextFor(options, spec, cluster);
  EXPECT_TRUE(context.preprocessing);
  EXPECT_EQ(context.framework, "standalone") << "no TF_CONFIG for the preprocessing job";
  absl::StatusOr<runtime::Environment> env = runtime::BuildTaskEnvironment(context);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("PREPROCESSING_JOB"), "true");
  EXPECT_EQ(env->count("MODEL_PARAMS"), 0u);
  EXPECT_EQ(env->count("TF_CONFIG"), 0u);

  cluster.set_model_params("--lr 0.1");
  context = TaskContextFor(Options(), spec, cluster);
  EXPECT_FALSE(context.preprocessing);
  EXPECT_EQ(context.framework, "tensorflow");
  env = runtime::BuildTaskEnvironment(context);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->count("PREPROCESSING_JOB"), 0u);
  EXPECT_EQ(env->at("MODEL_PARAMS"), "--lr 0.1");
  EXPECT_EQ(env->at("TASK_PARAMS"), "--lr 0.1");
}

}  // namespace
}  // namespace tony::executor
