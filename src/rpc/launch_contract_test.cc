#include "rpc/launch_contract.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace tony::rpc {
namespace {

// A lookup over a map, as the AM's environment would answer.
EnvLookup Lookup(const std::map<std::string, std::string>& env) {
  return [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it != env.end() ? it->second.c_str() : nullptr;
  };
}

AmLaunch FullYarnLaunch() {
  AmLaunch launch;
  launch.app_id = "application_1_0007";
  launch.on_yarn = true;
  launch.am_attempt = 2;
  launch.submitted_ms = 1796396226723;
  launch.staging_dir = "hdfs://nn:8020/user/alice/.tony/application_1_0007";
  launch.binary_path = "/user/alice/.tony/bin/0123abcd/tony";
  launch.yarn_scheduler = "rm:8030";
  launch.default_fs = "hdfs://nn:8020";
  launch.webhdfs = "https://nn:9871";
  launch.webhdfs_ca = "webhdfs-ca.pem";
  launch.webhdfs_token = "ha-hdfs:ns1";
  launch.web_proxy = "rm:8089";
  launch.keytab = "user.keytab";
  launch.node_hints = "n1@/rack1,n2@/rack2";
  launch.has_src = true;
  launch.has_venv = true;
  launch.hadoop_conf_path = "/user/alice/.tony/cache/hadoop-conf-0123abcd.zip";
  return launch;
}

TEST(AmLaunchTest, WhatABackendWritesTheAmReadsBack) {
  const AmLaunch written = FullYarnLaunch();
  const std::map<std::string, std::string> env = written.ToEnv();
  absl::StatusOr<AmLaunch> read = ReadAmLaunch(Lookup(env));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->app_id, written.app_id);
  EXPECT_TRUE(read->on_yarn);
  EXPECT_EQ(read->am_attempt, 2);
  EXPECT_EQ(read->submitted_ms, written.submitted_ms);
  EXPECT_EQ(read->staging_dir, written.staging_dir);
  EXPECT_EQ(read->binary_path, written.binary_path);
  EXPECT_EQ(read->yarn_scheduler, written.yarn_scheduler);
  EXPECT_EQ(read->default_fs, written.default_fs);
  EXPECT_EQ(read->webhdfs, written.webhdfs);
  EXPECT_EQ(read->webhdfs_ca, written.webhdfs_ca);
  EXPECT_EQ(read->webhdfs_token, written.webhdfs_token);
  EXPECT_EQ(read->web_proxy, written.web_proxy);
  EXPECT_EQ(read->keytab, written.keytab);
  EXPECT_EQ(read->node_hints, written.node_hints);
  EXPECT_TRUE(read->has_src);
  EXPECT_TRUE(read->has_venv);
  EXPECT_EQ(read->hadoop_conf_path, written.hadoop_conf_path);
}

TEST(AmLaunchTest, EveryVariableItWritesIsOneTheExecutorRemoves) {
  for (const auto& [name, value] : FullYarnLaunch().ToEnv()) {
    EXPECT_NE(std::find(kInternalVariables.begin(), kInternalVariables.end(), name),
              kInternalVariables.end())
        << name << " is written for the AM but is not in kInternalVariables";
  }
}

TEST(AmLaunchTest, ALocalLaunchCarriesNothingOfYarns) {
  AmLaunch local;
  local.app_id = "application_1_0001";
  local.am_attempt = 1;
  const std::map<std::string, std::string> env = local.ToEnv();
  EXPECT_EQ(env, (std::map<std::string, std::string>{{kEnvAppId, "application_1_0001"},
                                                     {kEnvAmAttempt, "1"}}));
  absl::StatusOr<AmLaunch> read = ReadAmLaunch(Lookup(env));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->on_yarn);
  EXPECT_EQ(read->submitted_ms, 0);
  EXPECT_FALSE(read->has_src || read->has_venv);
  EXPECT_EQ(read->hadoop_conf_path, "");
}

TEST(AmLaunchTest, ErrorsNameTheVariable) {
  struct Case {
    std::map<std::string, std::string> env;
    std::string names;
  };
  const std::vector<Case> cases = {
      {{}, kEnvAppId},
      {{{kEnvAppId, ""}}, kEnvAppId},
      {{{kEnvAppId, "application_1_0001"}, {kEnvBackend, "mesos"}}, kEnvBackend},
      {{{kEnvAppId, "application_1_0001"}, {kEnvAmAttempt, "0"}}, kEnvAmAttempt},
      {{{kEnvAppId, "application_1_0001"}, {kEnvAmAttempt, "two"}}, kEnvAmAttempt},
      {{{kEnvAppId, "application_1_0001"}, {kEnvSubmittedMs, "-5"}}, kEnvSubmittedMs},
      {{{kEnvAppId, "application_1_0001"}, {kEnvSubmittedMs, "12:00"}}, kEnvSubmittedMs},
  };
  for (const Case& c : cases) {
    absl::StatusOr<AmLaunch> read = ReadAmLaunch(Lookup(c.env));
    ASSERT_FALSE(read.ok()) << c.names;
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(read.status().message()).find(c.names), std::string::npos)
        << read.status().message();
  }
}

ExecutorLaunch LocalExecutorLaunch() {
  ExecutorLaunch launch;
  launch.app_id = "local_1796396226723_0001";
  launch.am_address = "127.0.0.1:40123";
  launch.conf_file = "/jobs/x/tony-final.xml";
  launch.task_type = "worker";
  launch.task_index = 3;
  launch.attempt = 2;
  launch.container_id = "container_0001_01_000004";
  launch.log_dir = "/jobs/x/logs/container_0001_01_000004";
  launch.host = "10.0.0.7";
  launch.am_address_file = "/jobs/x/am.address";
  launch.am_address_webhdfs = "https://nn1=a:9871,nn2=b:9871";
  launch.am_address_webhdfs_token = "ha-hdfs:ns1";
  return launch;
}

TEST(ExecutorLaunchTest, EveryFieldSurvivesTheEnvironment) {
  const ExecutorLaunch written = LocalExecutorLaunch();
  const std::map<std::string, std::string> env = written.ToEnv();
  absl::StatusOr<ExecutorLaunch> read = ReadExecutorLaunch(Lookup(env));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->app_id, written.app_id);
  EXPECT_EQ(read->am_address, written.am_address);
  EXPECT_EQ(read->conf_file, written.conf_file);
  EXPECT_EQ(read->task_type, written.task_type);
  EXPECT_EQ(read->task_index, 3);
  EXPECT_EQ(read->attempt, 2);
  EXPECT_EQ(read->container_id, written.container_id);
  EXPECT_FALSE(read->on_yarn);
  EXPECT_EQ(read->log_dir, written.log_dir);
  EXPECT_EQ(read->host, written.host);
  EXPECT_EQ(read->am_address_file, written.am_address_file);
  EXPECT_EQ(read->am_address_webhdfs, written.am_address_webhdfs);
  EXPECT_EQ(read->am_address_webhdfs_token, written.am_address_webhdfs_token);
  // The user's process never sees any of it: every name is one the executor removes.
  for (const auto& [name, value] : env) {
    EXPECT_NE(std::find(kInternalVariables.begin(), kInternalVariables.end(), name),
              kInternalVariables.end())
        << name;
  }
}

TEST(ExecutorLaunchTest, AnAmAddressFileThatIsNotAnAbsolutePathIsRefused) {
  std::map<std::string, std::string> env = LocalExecutorLaunch().ToEnv();
  env[kEnvAmAddressFile] = "am.address";
  absl::StatusOr<ExecutorLaunch> read = ReadExecutorLaunch(Lookup(env));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(), "TONY_AM_ADDRESS_FILE='am.address': not an absolute path");
}

TEST(ExecutorLaunchTest, KVariablesNamesEveryVariableToEnvWrites) {
  ExecutorLaunch yarn = LocalExecutorLaunch();
  yarn.on_yarn = true;
  for (const ExecutorLaunch& launch : {LocalExecutorLaunch(), yarn}) {
    for (const auto& [name, value] : launch.ToEnv()) {
      EXPECT_NE(
          std::find(ExecutorLaunch::kVariables.begin(), ExecutorLaunch::kVariables.end(), name),
          ExecutorLaunch::kVariables.end())
          << name;
    }
  }
}

TEST(ExecutorLaunchTest, OnYarnTheNodeManagerNamesTheLogDirectory) {
  ExecutorLaunch written = LocalExecutorLaunch();
  written.on_yarn = true;
  written.log_dir.clear();
  std::map<std::string, std::string> env = written.ToEnv();
  EXPECT_EQ(env.count(kEnvLogDir), 0u);
  env["LOG_DIRS"] = "/yarn/logs/app/container_4,/yarn2/logs/app/container_4";
  absl::StatusOr<ExecutorLaunch> read = ReadExecutorLaunch(Lookup(env));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->on_yarn);
  EXPECT_EQ(read->log_dir, "/yarn/logs/app/container_4");
}

TEST(ExecutorLaunchTest, ErrorsNameTheVariable) {
  const std::map<std::string, std::string> good = LocalExecutorLaunch().ToEnv();
  struct Case {
    std::string name;   // the variable changed
    const char* value;  // nullptr: unset
    std::string names;  // what the error must name
  };
  const std::vector<Case> cases = {
      {kEnvAppId, nullptr, kEnvAppId},
      {kEnvAmAddress, "", kEnvAmAddress},
      {kEnvConfFile, nullptr, kEnvConfFile},
      {kEnvTaskType, nullptr, kEnvTaskType},
      {kEnvContainerId, nullptr, kEnvContainerId},
      {kEnvTaskIndex, nullptr, kEnvTaskIndex},
      {kEnvTaskIndex, "one", kEnvTaskIndex},
      {kEnvTaskIndex, "-1", kEnvTaskIndex},
      {kEnvTaskIndex, "2x", kEnvTaskIndex},
      {kEnvTaskAttempt, "-3", kEnvTaskAttempt},
      {kEnvTaskAttempt, "first", kEnvTaskAttempt},
      {kEnvLogDir, nullptr, kEnvLogDir},
      {kEnvLogDir, "logs/relative", kEnvLogDir},
      {kEnvBackend, "mesos", kEnvBackend},
      {kEnvBackend, "yarn", "LOG_DIRS"},  // YARN without the NodeManager's log directories
  };
  for (const Case& c : cases) {
    std::map<std::string, std::string> env = good;
    if (c.value == nullptr) {
      env.erase(c.name);
    } else {
      env[c.name] = c.value;
    }
    absl::StatusOr<ExecutorLaunch> read = ReadExecutorLaunch(Lookup(env));
    ASSERT_FALSE(read.ok()) << c.name << "=" << (c.value ? c.value : "(unset)");
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(read.status().message()).find(c.names), std::string::npos)
        << read.status().message();
  }
}

}  // namespace
}  // namespace tony::rpc
