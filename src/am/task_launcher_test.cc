#include "am/task_launcher.h"

#include <gtest/gtest.h>

#include "am/job_state_fixture.h"
#include "rpc/launch_contract.h"

namespace tony::am {
namespace {

constexpr char kSecret[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TaskLauncherOptions Options(bool tls) {
  TaskLauncherOptions options;
  options.app_id = "application_1_0001";
  options.executable = "/opt/tony/bin/tony";
  options.conf_file = "tony-final.xml";
  options.credentials.secret = kSecret;
  if (tls) {
    options.credentials.am_cert_pem = "-----BEGIN CERTIFICATE-----";
    options.credentials.am_key_pem = "-----BEGIN PRIVATE KEY-----";
  }
  options.on_yarn = true;
  options.staging_dir = "hdfs://nn/user/alice/.tony/application_1_0001";
  options.task_resources = {{"hdfs://nn/conf.zip", "hadoop-conf", true, false}};
  options.task_env = {{"SHARED", "task_env"}, {"HADOOP_USER_NAME", "alice"}};
  return options;
}

cluster::Container Worker1() {
  cluster::Container container;
  container.id = "container_1_0001_01_000003";
  container.job_type = "worker";
  container.host = "node7";
  container.log_dir = "http://node7:8042/node/containerlogs/container_1_0001_01_000003/alice";
  container.env = {{"SHARED", "container"}, {"CUDA_VISIBLE_DEVICES", "1"}};
  return container;
}

class TaskLauncherTest : public ::testing::Test {
 protected:
  config::JobSpec spec_ = MakeSpec({{"tony.worker.instances", "2"},
                                    {"tony.application.backend", "yarn"},
                                    {"tony.docker.enabled", "true"},
                                    {"tony.docker.containers.image", "tony/base:1"},
                                    {"tony.containers.envs", "SHARED=containers_envs,MODE=fast"}});
};

TEST_F(TaskLauncherTest, TheContractWinsOverEveryVariableOfTheJob) {
  TaskLauncher launcher(Options(/*tls=*/false), &spec_);
  launcher.SetAmAddress("am-host:4242");
  cluster::Container container = Worker1();
  container.env[rpc::kEnvTaskIndex] = "99";  // not the backend's to say
  const cluster::LaunchSpec launch = launcher.Build({"worker", 1}, 2, container);
  EXPECT_EQ(launch.argv, (std::vector<std::string>{"/opt/tony/bin/tony", "executor"}));
  EXPECT_EQ(launch.env.at("HADOOP_USER_NAME"), "alice");
  EXPECT_EQ(launch.env.at("MODE"), "fast");
  EXPECT_EQ(launch.env.at("SHARED"), "container");  // the container's over the job's settings
  EXPECT_EQ(launch.env.at("CUDA_VISIBLE_DEVICES"), "1");
  EXPECT_EQ(launch.env.at("YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"), "tony/base:1");

  absl::StatusOr<rpc::ExecutorLaunch> contract =
      rpc::ReadExecutorLaunch([&](const char* name) -> const char* {
        if (std::string(name) == "LOG_DIRS") return "/yarn/logs/container_3";
        auto it = launch.env.find(name);
        return it != launch.env.end() ? it->second.c_str() : nullptr;
      });
  ASSERT_TRUE(contract.ok()) << contract.status();
  EXPECT_EQ(contract->app_id, "application_1_0001");
  EXPECT_EQ(contract->am_address, "am-host:4242");
  EXPECT_EQ(contract->task_type, "worker");
  EXPECT_EQ(contract->task_index, 1);
  EXPECT_EQ(contract->attempt, 2);
  EXPECT_EQ(contract->container_id, container.id);
  EXPECT_TRUE(contract->on_yarn);
  EXPECT_EQ(contract->log_dir, "/yarn/logs/container_3");  // not the NodeManager's page
  EXPECT_EQ(contract->host, "node7");
}

TEST_F(TaskLauncherTest, TheTaskCredentialIsASecretAndInNoVariable) {
  TaskLauncher launcher(Options(/*tls=*/false), &spec_);
  const cluster::Container container = Worker1();
  const cluster::LaunchSpec launch = launcher.Build({"worker", 1}, 0, container);
  const std::string credential = rpc::TaskCredential(kSecret, "worker", 1, container.id);
  EXPECT_EQ(launch.secrets.at(rpc::kTaskCredentialAlias), credential);
  EXPECT_EQ(launch.secrets.count(rpc::kAmCertAlias), 0u);  // TLS off: no certificate to pin
  for (const auto& [name, value] : launch.env) {
    EXPECT_EQ(value.find(kSecret), std::string::npos) << name;
    EXPECT_EQ(value.find(credential), std::string::npos) << name;
  }
  for (const std::string& arg : launch.argv) EXPECT_EQ(arg.find(kSecret), std::string::npos);
}

TEST_F(TaskLauncherTest, WithTlsTheAmsCertificateGoesAlong) {
  TaskLauncher launcher(Options(/*tls=*/true), &spec_);
  const cluster::LaunchSpec launch = launcher.Build({"worker", 0}, 0, Worker1());
  EXPECT_EQ(launch.secrets.at(rpc::kAmCertAlias), "-----BEGIN CERTIFICATE-----");
  for (const auto& [alias, value] : launch.secrets) {
    EXPECT_EQ(value.find("PRIVATE KEY"), std::string::npos) << alias;  // never the AM's key
  }
}

TEST_F(TaskLauncherTest, TheJobsFilesAndTheTaskResourcesGoAlong) {
  TaskLauncher launcher(Options(/*tls=*/false), &spec_);
  const cluster::LaunchSpec launch = launcher.Build({"worker", 0}, 0, Worker1());
  ASSERT_FALSE(launch.resources.empty());
  EXPECT_EQ(launch.resources.back().source, "hdfs://nn/conf.zip");
}

TEST_F(TaskLauncherTest, KeepsGrantedContainersUntilForgotten) {
  TaskLauncher launcher(Options(/*tls=*/false), &spec_);
  EXPECT_EQ(launcher.Find("container_1_0001_01_000003"), nullptr);
  launcher.Add(Worker1());
  ASSERT_NE(launcher.Find("container_1_0001_01_000003"), nullptr);
  EXPECT_EQ(launcher.Find("container_1_0001_01_000003")->host, "node7");
  launcher.Forget("container_1_0001_01_000003");
  EXPECT_EQ(launcher.Find("container_1_0001_01_000003"), nullptr);
}

TEST_F(TaskLauncherTest, LocallyTheContainersLogDirectoryIsTheExecutors) {
  TaskLauncherOptions options = Options(/*tls=*/false);
  options.on_yarn = false;
  const config::JobSpec local = MakeSpec({{"tony.worker.instances", "1"}});
  TaskLauncher launcher(options, &local);
  cluster::Container container = Worker1();
  container.log_dir = "/jobs/app/logs/container_3";
  const cluster::LaunchSpec launch = launcher.Build({"worker", 0}, 0, container);
  EXPECT_EQ(launch.env.at(rpc::kEnvLogDir), "/jobs/app/logs/container_3");
  EXPECT_EQ(launch.env.count(rpc::kEnvBackend), 0u);
}

TEST_F(TaskLauncherTest, TheJobCannotStandInForWhatTheContractLeavesOut) {
  TaskLauncherOptions options = Options(/*tls=*/false);
  options.on_yarn = false;
  options.task_env[rpc::kEnvBackend] = "yarn";  // the job's own variables, whatever they say
  const config::JobSpec local =
      MakeSpec({{"tony.worker.instances", "1"}, {"tony.containers.envs", "TONY_HOST=elsewhere"}});
  TaskLauncher launcher(options, &local);
  cluster::Container container = Worker1();
  container.host.clear();  // the executor finds its own address
  container.log_dir = "/jobs/app/logs/container_3";
  const cluster::LaunchSpec launch = launcher.Build({"worker", 0}, 0, container);
  EXPECT_EQ(launch.env.count(rpc::kEnvBackend), 0u);
  EXPECT_EQ(launch.env.count(rpc::kEnvHost), 0u);
}

}  // namespace
}  // namespace tony::am
