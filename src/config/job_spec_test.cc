#include "config/job_spec.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "config/job_spec_fixture.h"
#include "config/key_catalog.h"
#include "config/key_names.h"

namespace tony::config {
namespace {

TEST_F(JobSpecTest, ReadsEveryJobTypeKey) {
  Set("tony.worker.instances", "2");
  Set("tony.worker.memory", "4g");
  Set("tony.worker.vcores", "2");
  Set("tony.worker.gpus", "1");
  Set("tony.worker.resources", "data.zip#archive,model.bin");
  Set("tony.worker.node-label", "gpu");
  Set("tony.worker.max-restarts", "2");
  Set("tony.worker.restart-backoff-ms", "250");
  Set("tony.ps.instances", "1");
  Set("tony.ps.memory", "1536");
  Set("tony.ps.command", "python3 ps.py");
  Set("tony.containers.resources", "common.txt");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->job_types.size(), 2u);
  const JobTypeSpec& worker = spec->job_types.at("worker");
  EXPECT_EQ(worker.instances, 2);
  EXPECT_EQ(worker.resources.memory_mb, 4096);
  EXPECT_EQ(worker.resources.vcores, 2);
  EXPECT_EQ(worker.resources.gpus, 1);
  EXPECT_EQ(worker.command, "python3 train.py");
  EXPECT_EQ(worker.localized_resources,
            (std::vector<std::string>{"data.zip#archive", "model.bin", "common.txt"}));
  EXPECT_EQ(worker.node_label, "gpu");
  EXPECT_EQ(worker.max_restarts, 2);
  EXPECT_EQ(worker.restart_backoff_ms, 250);
  EXPECT_EQ(worker.role, JobTypeRole::kTracked);
  EXPECT_FALSE(worker.stop_on_failure);
  const JobTypeSpec& ps = spec->job_types.at("ps");
  EXPECT_EQ(ps.resources.memory_mb, 1536);
  EXPECT_EQ(ps.resources.vcores, 1);
  EXPECT_EQ(ps.command, "python3 ps.py");
  EXPECT_EQ(ps.role, JobTypeRole::kUntracked);
  EXPECT_TRUE(ps.stop_on_failure);
  EXPECT_EQ(spec->TotalTasks(), 3);
  EXPECT_EQ(spec->TrackedTasks(), 2);
  EXPECT_FALSE(spec->single_node);
}

TEST_F(JobSpecTest, ProgressPatternsAndTheHangTimeout) {
  Set("tony.worker.instances", "1");
  Set("tony.worker.progress-pattern", R"(step (?P<step>\d+)/(?P<total>\d+) loss=(?P<loss>\S+))");
  Set("tony.task.hang-timeout-ms", "15000");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.at("worker").progress_pattern,
            R"(step (?P<step>\d+)/(?P<total>\d+) loss=(?P<loss>\S+))");
  EXPECT_EQ(spec->hang_timeout_ms, 15000);
}

TEST_F(JobSpecTest, APatternThatCannotReportProgressIsRefusedByKey) {
  Set("tony.worker.instances", "1");
  Set("tony.worker.progress-pattern", "step (\\d+");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(absl::StartsWith(spec.status().message(), "tony.worker.progress-pattern = "))
      << spec.status();
  EXPECT_NE(spec.status().message().find("not a regular expression"), std::string_view::npos);
  Set("tony.worker.progress-pattern", "step (\\d+)");
  spec = Build();
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("no named group 'step'"), std::string_view::npos)
      << spec.status();
  Set("tony.worker.progress-pattern", "");
  Set("tony.task.hang-timeout-ms", "-1");
  spec = Build();
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(absl::StartsWith(spec.status().message(), "tony.task.hang-timeout-ms"))
      << spec.status();
}

TEST_F(JobSpecTest, RestartPolicies) {
  Set("tony.application.framework", "pytorch");
  Set("tony.worker.instances", "2");
  Set("tony.evaluator.instances", "1");
  Set("tony.evaluator.restart-policy", "task");
  Set("tony.application.max-gang-restarts", "3");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.at("worker").restart_policy, RestartPolicy::kGang);
  EXPECT_EQ(spec->job_types.at("evaluator").restart_policy, RestartPolicy::kTask);
  EXPECT_EQ(spec->max_gang_restarts, 3);
  Set("tony.worker.restart-policy", "sometimes");
  spec = Build();
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(
      absl::StartsWith(spec.status().message(), "tony.worker.restart-policy = \"sometimes\""))
      << spec.status();
  EXPECT_NE(spec.status().message().find("expected task or gang"), std::string_view::npos);
  // Under FCFS no gang meets again together: pytorch defaults to task, and gang is refused.
  Set("tony.worker.restart-policy", "");
  Set("tony.application.distributed-mode", "FCFS");
  spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.at("worker").restart_policy, RestartPolicy::kTask);
  Set("tony.worker.restart-policy", "gang");
  spec = Build();
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("only with tony.application.distributed-mode GANG"),
            std::string_view::npos)
      << spec.status();
  Set("tony.application.distributed-mode", "GANG");
  Set("tony.application.sidecar.jobtypes", "evaluator");
  Set("tony.evaluator.restart-policy", "gang");
  spec = Build();
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(absl::StartsWith(spec.status().message(), "tony.evaluator.restart-policy"))
      << spec.status();
}

TEST_F(JobSpecTest, MemoryGrowth) {
  Set("tony.worker.instances", "1");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.at("worker").memory_growth, 1.0);
  Set("tony.worker.memory-growth", "1.5");
  spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.at("worker").memory_growth, 1.5);
  for (const char* bad : {"0.5", "x", "1.5x", "17", "nan"}) {
    Set("tony.worker.memory-growth", bad);
    spec = Build();
    ASSERT_FALSE(spec.ok()) << bad;
    EXPECT_TRUE(absl::StartsWith(spec.status().message(), "tony.worker.memory-growth"))
        << spec.status();
  }
}

TEST_F(JobSpecTest, TransientExitCodes) {
  Set("tony.worker.instances", "1");
  Set("tony.worker.transient-exit-codes", "75,99");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.at("worker").transient_exit_codes, (std::set<int>{75, 99}));
  for (const char* bad : {"0", "256", "-1", "x"}) {
    Set("tony.worker.transient-exit-codes", bad);
    spec = Build();
    ASSERT_FALSE(spec.ok()) << bad;
    EXPECT_TRUE(absl::StartsWith(spec.status().message(), "tony.worker.transient-exit-codes"))
        << spec.status();
    EXPECT_NE(spec.status().message().find("not an exit code from 1 to 255"),
              std::string_view::npos)
        << spec.status();
  }
}

TEST_F(JobSpecTest, ApplicationSettings) {
  Set("tony.worker.instances", "1");
  Set("tony.application.framework", "PyTorch");
  Set("tony.application.distributed-mode", "fcfs");
  Set("tony.application.fail-on-worker-failure-enabled", "true");
  Set("tony.application.timeout", "60000");
  Set("tony.container.allocation.timeout", "30000");
  Set("tony.task.heartbeat-interval-ms", "200");
  Set("tony.task.max-missed-heartbeats", "5");
  Set("tony.containers.envs", "A=1,B=2");
  Set("tony.execution.envs", "C=3");
  Set("tony.application.tags", "a,b");
  Set("tony.am.memory", "1g");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->framework, "pytorch");
  EXPECT_EQ(spec->mode, DistributedMode::kFcfs);
  EXPECT_TRUE(spec->fail_on_worker_failure);
  EXPECT_EQ(spec->application_timeout_ms, 60000);
  EXPECT_EQ(spec->allocation_timeout_ms, 30000);
  EXPECT_EQ(spec->heartbeat_interval_ms, 200);
  EXPECT_EQ(spec->max_missed_heartbeats, 5);
  EXPECT_EQ(spec->container_envs.at("B"), "2");
  EXPECT_EQ(spec->execution_envs.at("C"), "3");
  EXPECT_EQ(spec->tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(spec->am.memory_mb, 1024);
  EXPECT_EQ(spec->backend, "local");
  EXPECT_FALSE(spec->priority.has_value());  // the queue's default
}

TEST_F(JobSpecTest, AmRetryCount) {
  Set("tony.worker.instances", "1");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->am_retry_count, 0);
  Set("tony.am.retry-count", "2");
  spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->am_retry_count, 2);
  Set("tony.am.retry-count", "-1");
  EXPECT_EQ(Error(), "tony.am.retry-count = \"-1\" (--conf): expected a non-negative integer");
}

TEST_F(JobSpecTest, YarnPriority) {
  Set("tony.worker.instances", "1");
  Set("tony.yarn.priority", "7");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->priority, 7);
  Set("tony.yarn.priority", "-1");
  EXPECT_EQ(Error(), "tony.yarn.priority = \"-1\" (--conf): expected a non-negative integer");
  Set("tony.yarn.priority", "high");
  EXPECT_NE(Error().find("tony.yarn.priority = \"high\" (--conf): "), std::string::npos);
}

TEST_F(JobSpecTest, ChiefRule) {
  Set("tony.worker.instances", "2");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok());
  ASSERT_TRUE(spec->chief.has_value());
  EXPECT_EQ(spec->chief->ToString(), "worker:0");

  Set("tony.chief.instances", "1");
  spec = Build();
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->chief->ToString(), "chief:0");

  Configuration mxnet = KeyCatalog::BuiltIn().Defaults();
  mxnet.Set("tony.containers.command", "x", ValueSource::ConfFlag());
  mxnet.Set("tony.scheduler.instances", "1", ValueSource::ConfFlag());
  mxnet.Set("tony.server.instances", "1", ValueSource::ConfFlag());
  spec = BuildJobSpec(mxnet);
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->chief.has_value());
}

TEST_F(JobSpecTest, SingleNodeModeWhenAllInstancesAreZero) {
  Set("tony.worker.instances", "0");
  Set("tony.ps.instances", "0");
  Set("tony.worker.memory", "3g");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->single_node);
  ASSERT_EQ(spec->TotalTasks(), 1);
  EXPECT_EQ(spec->job_types.at("worker").resources.memory_mb, 3072);
  EXPECT_EQ(spec->chief->ToString(), "worker:0");
}

TEST_F(JobSpecTest, ZeroInstanceTypesAreDropped) {
  Set("tony.worker.instances", "2");
  Set("tony.evaluator.instances", "0");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->Find("evaluator"), nullptr);
}

TEST_F(JobSpecTest, TensorBoardLogDirAddsTonysSidecar) {
  Set("tony.worker.instances", "2");
  Set("tony.application.tensorboard-log-dir", "/logs/run7");
  Set("tony.tensorboard.memory", "512m");
  Set("tony.python-exec-path", "/usr/bin/python3");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  const JobTypeSpec& tb = spec->job_types.at("tensorboard");
  EXPECT_EQ(tb.instances, 1);
  EXPECT_EQ(tb.role, JobTypeRole::kSidecar);
  EXPECT_EQ(tb.resources.memory_mb, 512);
  EXPECT_EQ(tb.command,
            "/usr/bin/python3 -m tensorboard.main --logdir \"$TB_LOG_DIR\" --host \"$TB_HOST\" "
            "--port \"$TB_PORT\"");
  EXPECT_EQ(spec->execution_envs.at("TB_LOG_DIR"), "/logs/run7");
  EXPECT_EQ(spec->TrackedTasks(), 2);  // the sidecar is not waited for

  // A command of the job's own wins, and a job without job types keeps its single task.
  Set("tony.worker.instances", "0");
  Set("tony.tensorboard.command", "my-tensorboard");
  spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->single_node);
  EXPECT_EQ(spec->job_types.at("tensorboard").command, "my-tensorboard");
  EXPECT_EQ(spec->job_types.at("worker").instances, 1);
  EXPECT_EQ(spec->TrackedTasks(), 1);
}

TEST_F(JobSpecTest, SidecarAndCustomRoles) {
  Set("tony.worker.instances", "1");
  Set("tony.tensorboard.instances", "1");
  Set("tony.evaluator.instances", "1");
  Set("tony.application.untracked.jobtypes", "ps,evaluator");
  Set("tony.application.stop-on-failure-jobtypes", "worker");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->job_types.at("tensorboard").role, JobTypeRole::kSidecar);
  EXPECT_EQ(spec->job_types.at("evaluator").role, JobTypeRole::kUntracked);
  EXPECT_TRUE(spec->job_types.at("worker").stop_on_failure);
  EXPECT_EQ(spec->TrackedTasks(), 1);
}

TEST_F(JobSpecTest, NegativeInstances) {
  Set("tony.worker.instances", "-1");
  EXPECT_EQ(Error(), "tony.worker.instances = \"-1\" (--conf): expected a non-negative integer");
}

TEST_F(JobSpecTest, NonIntegerInstances) {
  Set("tony.worker.instances", "two");
  EXPECT_EQ(Error(), "tony.worker.instances = \"two\" (--conf): expected an integer, got \"two\"");
}

TEST_F(JobSpecTest, UnparsableMemory) {
  Set("tony.worker.instances", "1");
  Set("tony.worker.memory", "2gb");
  EXPECT_EQ(Error(),
            "tony.worker.memory = \"2gb\" (--conf): expected a memory size such as 2g, 2048m or "
            "2048 (MiB), got \"2gb\"");
}

TEST_F(JobSpecTest, UnknownFrameworkListsTheValidOnes) {
  Set("tony.application.framework", "caffe");
  EXPECT_EQ(Error(),
            "tony.application.framework = \"caffe\" (--conf): unknown framework; expected one of "
            "tensorflow, pytorch, mxnet, horovod, jax, standalone");
}

TEST_F(JobSpecTest, StandaloneNeedsExactlyOneTask) {
  Set("tony.application.framework", "standalone");
  Set("tony.worker.instances", "2");
  EXPECT_EQ(Error(),
            "tony.application.framework = standalone runs exactly one task, but the job has 2 "
            "(tony.worker.instances = 2)");
  Set("tony.worker.instances", "1");
  EXPECT_TRUE(Build().ok());
}

TEST_F(JobSpecTest, OtherBadValues) {
  Set("tony.worker.instances", "1");
  Set("tony.application.distributed-mode", "EAGER");
  EXPECT_EQ(Error(),
            "tony.application.distributed-mode = \"EAGER\" (--conf): expected GANG or FCFS");
  Set("tony.application.distributed-mode", "GANG");
  Set("tony.application.fail-on-worker-failure-enabled", "maybe");
  EXPECT_EQ(Error(),
            "tony.application.fail-on-worker-failure-enabled = \"maybe\" (--conf): expected true "
            "or false, got \"maybe\"");
  Set("tony.application.fail-on-worker-failure-enabled", "false");
  Set("tony.worker.vcores", "0");
  EXPECT_EQ(Error(), "tony.worker.vcores = \"0\" (--conf): expected a positive integer");
  Set("tony.worker.vcores", "1");
  Set("tony.application.backend", "k8s");
  EXPECT_EQ(Error(), "tony.application.backend = \"k8s\" (--conf): expected local or yarn");
  Set("tony.application.backend", "local");
  Set("tony.containers.envs", "NOVALUE");
  EXPECT_EQ(Error(),
            "tony.containers.envs = \"NOVALUE\" (--conf): expected NAME=VALUE with a valid "
            "variable name, got \"NOVALUE\"");
}

TEST_F(JobSpecTest, LimitsOnTotals) {
  Set("tony.worker.instances", "3");
  Set("tony.worker.max-instances", "2");
  EXPECT_EQ(Error(),
            "tony.worker.instances = \"3\" (--conf): more than tony.worker.max-instances = 2");
  Set("tony.worker.max-instances", "-1");
  Set("tony.task.max-total-instances", "2");
  EXPECT_EQ(Error(), "tony.task.max-total-instances = \"2\" (--conf): the job asks for 3 tasks");
  Set("tony.task.max-total-instances", "-1");
  Set("tony.worker.gpus", "2");
  Set("tony.task.max-total-gpus", "4");
  EXPECT_EQ(Error(), "tony.task.max-total-gpus = \"4\" (--conf): the job asks for 6 GPUs");
}

TEST_F(JobSpecTest, MissingCommand) {
  conf_.Replace("tony.containers.command", "", ValueSource::Default());
  Set("tony.worker.instances", "1");
  EXPECT_EQ(Error(),
            "job type worker has no command: give --executes, or set tony.containers.command or "
            "tony.worker.command");
}

TEST_F(JobSpecTest, GroupsDependenciesAndStages) {
  Set("tony.chief.instances", "1");
  Set("tony.worker.instances", "2");
  Set("tony.evaluator.instances", "1");
  Set("tony.prep.instances", "1");
  Set("tony.application.group.training", "chief,worker");
  Set("tony.application.dependency.evaluator.timeout.after.training", "30");
  Set("tony.application.dependency.evaluator.timeout.after.training.ignored", "true");
  Set("tony.application.prepare-stage", "prep");
  Set("tony.application.training-stage", "chief,worker,evaluator");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->groups.at("training"), (std::vector<std::string>{"chief", "worker"}));
  ASSERT_EQ(spec->dependencies.size(), 1u);
  EXPECT_EQ(spec->dependencies[0].type, "evaluator");
  EXPECT_EQ(spec->dependencies[0].group, "training");
  EXPECT_EQ(spec->dependencies[0].timeout_ms, 30000);
  EXPECT_TRUE(spec->dependencies[0].ignored);
  EXPECT_EQ(spec->prepare_stage, (std::vector<std::string>{"prep"}));
}

TEST_F(JobSpecTest, GroupsMustNameExistingTypes) {
  Set("tony.worker.instances", "1");
  Set("tony.application.group.A", "worker,evaluatr");
  EXPECT_EQ(Error(),
            "tony.application.group.A = \"worker,evaluatr\" (--conf): names job type evaluatr, "
            "which the job does not have");
}

TEST_F(JobSpecTest, DependenciesMustNameExistingGroups) {
  Set("tony.worker.instances", "1");
  Set("tony.application.group.A", "worker");
  Set("tony.application.dependency.worker.timeout.after.B", "5");
  EXPECT_EQ(Error(),
            "tony.application.dependency.worker.timeout.after.B = \"5\" (--conf): names group B, "
            "but tony.application.group.B is not set");
}

TEST_F(JobSpecTest, StagesComeInPairs) {
  Set("tony.worker.instances", "1");
  Set("tony.application.prepare-stage", "worker");
  EXPECT_NE(Error().find("set both tony.application.prepare-stage and"), std::string::npos);
}

TEST_F(JobSpecTest, DockerBecomesYarnsContainerRuntimeVariables) {
  Set("tony.worker.instances", "1");
  Set("tony.ps.instances", "1");
  Set("tony.application.backend", "yarn");
  Set("tony.docker.enabled", "true");
  Set("tony.docker.containers.image", "tony/base:1");
  Set("tony.docker.worker.image", "tony/gpu:2");
  Set("tony.docker.containers.mount", "/data:/data:ro");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& worker = spec->job_types.at("worker").docker_env;
  EXPECT_EQ(worker.at("YARN_CONTAINER_RUNTIME_TYPE"), "docker");
  EXPECT_EQ(worker.at("YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"), "tony/gpu:2");
  EXPECT_EQ(worker.at("YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"), "/data:/data:ro");
  EXPECT_EQ(spec->job_types.at("ps").docker_env.at("YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"),
            "tony/base:1");
}

TEST_F(JobSpecTest, DockerNeedsYarnAndAnImage) {
  Set("tony.worker.instances", "1");
  Set("tony.docker.enabled", "true");
  EXPECT_EQ(Error(),
            "tony.docker.enabled = \"true\" (--conf): Docker containers need the YARN backend "
            "(--backend yarn)");
  Set("tony.application.backend", "yarn");
  EXPECT_EQ(Error(),
            "tony.docker.enabled = \"true\" (--conf): no image for job type worker: set "
            "tony.docker.worker.image or tony.docker.containers.image");
}

TEST_F(JobSpecTest, LongJobTypeNameIsAnErrorNotACrash) {
  // A 50 KB name used to overflow the stack in std::regex.
  const std::string name(60000, 'a');
  conf_.Set("tony." + name + ".instances", "1",
            ValueSource::File(SourceKind::kConfFile, "long.xml", 3));
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(spec.status().message());
  EXPECT_TRUE(message.starts_with("tony.aaaa")) << message.substr(0, 300);
  EXPECT_NE(message.find("... (60015 bytes) = \"1\" (long.xml:3): the job type name is 60000 "
                         "characters long; at most 128 are allowed"),
            std::string::npos)
      << message;
  EXPECT_LT(message.size(), 400u);
}

TEST_F(JobSpecTest, JobTypeNamesUpToTheLimitAreAccepted) {
  const std::string longest(kMaxJobTypeNameLength, 'w');
  Set("tony." + longest + ".instances", "1");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_NE(spec->Find(longest), nullptr);
  Set("tony." + longest + "x.instances", "0");  // even with no instances
  EXPECT_NE(Error().find("the job type name is 129 characters long"), std::string::npos);
}

TEST_F(JobSpecTest, JobTypeNamesNoJobTypeMayHaveAreRefusedNotIgnored) {
  auto reset = [this] {
    conf_ = KeyCatalog::BuiltIn().Defaults();
    Set("tony.containers.command", "python3 train.py");
  };
  for (const char* name : {"a/b", "my worker", "a;b", "-worker", "work\ner", "Worker", "9lives"}) {
    reset();
    Set("tony.worker.instances", "1");
    Set(std::string("tony.") + name + ".instances", "2");
    EXPECT_NE(Error().find("the job type in this key is not a valid name"), std::string::npos)
        << name;
  }
  // Keys with more dots are other keys (unknown ones warn), not job types.
  reset();
  Set("tony.worker.instances", "1");
  Set("tony.docker.worker.instances", "2");
  EXPECT_TRUE(Build().ok());
}

TEST_F(JobSpecTest, LongGroupAndDependencyNamesDoNotCrash) {
  const std::string name(60000, 'g');
  Set("tony.worker.instances", "1");
  Set("tony.application.group." + name, "worker");
  Set("tony.application.dependency.worker.timeout.after." + name, "10");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status().message().substr(0, 300);
  EXPECT_EQ(spec->groups.count(name), 1u);
  ASSERT_EQ(spec->dependencies.size(), 1u);
  EXPECT_EQ(spec->dependencies[0].timeout_ms, 10000);

  Set("tony.application.group." + name, "worker," + std::string(60000, 'x'));
  const std::string message = Error();
  EXPECT_NE(message.find("which the job does not have"), std::string::npos);
  EXPECT_LT(message.size(), 800u);
}

TEST_F(JobSpecTest, ErrorMessagesStayOneLine) {
  Set("tony.worker.instances", "1");
  Set("tony.worker.memory", "4\nlots\n" + std::string(1 << 20, 'x'));
  const std::string message = Error();
  EXPECT_EQ(message.find('\n'), std::string::npos) << message.substr(0, 300);
  EXPECT_NE(message.find("tony.worker.memory = \"4\\nlots\\nxxx"), std::string::npos);
  EXPECT_LT(message.size(), 800u);
}

TEST_F(JobSpecTest, SecondsThatOverflowMillisecondsAreAnError) {
  Set("tony.task.executor.registry-timeout-sec", "9223372036854775807");
  EXPECT_NE(Error().find("tony.task.executor.registry-timeout-sec = \"9223372036854775807\" "
                         "(--conf): too large"),
            std::string::npos);
}

TEST_F(JobSpecTest, ManyJobTypesWithLongRoleLists) {
  std::string names;
  for (int i = 0; i < 3000; ++i) {
    const std::string type = "t" + std::to_string(i);
    Set("tony." + type + ".instances", "1");
    names += type + ",";
  }
  Set("tony.application.untracked.jobtypes", names);
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.size(), 3000u);
  EXPECT_EQ(spec->Find("t2999")->role, JobTypeRole::kUntracked);
}

}  // namespace
}  // namespace tony::config
