// JobControlSpec (what status, kill, list, gc and cluster read) and the local backend's keys.

#include <gtest/gtest.h>

#include "config/job_spec.h"
#include "config/job_spec_fixture.h"
#include "config/key_catalog.h"

namespace tony::config {
namespace {

TEST_F(JobSpecTest, ControlAndLocalBackendDefaultsComeFromTheCatalogue) {
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->backend, "local");
  EXPECT_EQ(spec->stop_grace_ms, 5000);
  EXPECT_EQ(spec->wait_client_ms, 15000);
  EXPECT_FALSE(spec->keep_staging);
  EXPECT_EQ(spec->history_retention_sec, 2592000);
  EXPECT_EQ(spec->python_venv, "");
  EXPECT_EQ(spec->src_dir, "");
  EXPECT_EQ(spec->python_exec_path, "");
  EXPECT_EQ(spec->executes, "");
  EXPECT_FALSE(spec->local.memory_mb.has_value());
  EXPECT_FALSE(spec->local.vcores.has_value());
  EXPECT_FALSE(spec->local.gpus.has_value());
  EXPECT_EQ(spec->local.memory_check_interval_ms, 500);
  EXPECT_TRUE(spec->local.enforce_memory);
  EXPECT_FALSE(spec->local.keep_work_dirs_on_failure);
}

TEST_F(JobSpecTest, ReadsControlAndLocalBackendKeys) {
  Set("tony.task.stop-grace-ms", "250");
  Set("tony.application.keep-staging", "TRUE");
  Set("tony.history.retention-sec", "-1");
  Set("tony.application.python-venv", "hdfs:///venv.zip");
  Set("tony.application.src-dir", "src");
  Set("tony.python-exec-path", "python3");
  Set("tony.application.executes", "train.py --epochs 2");
  Set("tony.local.memory", "16g");
  Set("tony.local.vcores", "8");
  Set("tony.local.gpus", "0");
  Set("tony.local.memory-check-interval-ms", "100");
  Set("tony.local.enforce-memory", "false");
  Set("tony.local.keep-work-dirs-on-failure", "true");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->stop_grace_ms, 250);
  EXPECT_TRUE(spec->keep_staging);
  EXPECT_EQ(spec->history_retention_sec, -1);
  EXPECT_EQ(spec->python_venv, "hdfs:///venv.zip");
  EXPECT_EQ(spec->src_dir, "src");
  EXPECT_EQ(spec->python_exec_path, "python3");
  EXPECT_EQ(spec->executes, "train.py --epochs 2");
  EXPECT_EQ(spec->local.memory_mb, 16384);
  EXPECT_EQ(spec->local.vcores, 8);
  EXPECT_EQ(spec->local.gpus, 0);
  EXPECT_EQ(spec->local.memory_check_interval_ms, 100);
  EXPECT_FALSE(spec->local.enforce_memory);
  EXPECT_TRUE(spec->local.keep_work_dirs_on_failure);
}

TEST_F(JobSpecTest, BadControlAndLocalBackendValuesAreErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tony.task.stop-grace-ms", "-5"},
      {"tony.task.stop-grace-ms", "soon"},
      {"tony.application.keep-staging", "yes"},
      {"tony.history.retention-sec", "a month"},
      {"tony.am.wait-client-signal-stop-timeout-sec", "-1"},
      {"tony.local.memory", "lots"},
      {"tony.local.vcores", "0"},
      {"tony.local.gpus", "-1"},
      {"tony.local.memory-check-interval-ms", "0"},
      {"tony.local.enforce-memory", "maybe"},
      {"tony.local.keep-work-dirs-on-failure", "1"},
  };
  for (const auto& [key, value] : cases) {
    Configuration saved = conf_;
    Set(key, value);
    const std::string message = Error();
    EXPECT_EQ(message.rfind(key + " = \"" + value + "\" (--conf): ", 0), 0u) << message;
    conf_ = saved;
  }
  EXPECT_EQ(BuildJobControlSpec(conf_).status(), absl::OkStatus());
}

TEST_F(JobSpecTest, StopGraceFallsBackToTheCatalogueNotZero) {
  Configuration bare;  // no defaults at all: every key reads as tony-default.xml says
  bare.Set("tony.containers.command", "python3 train.py", ValueSource::ConfFlag());
  absl::StatusOr<JobSpec> spec = BuildJobSpec(bare);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->stop_grace_ms, 5000);
  EXPECT_TRUE(spec->local.enforce_memory);
  EXPECT_EQ(spec->backend, "local");
}

TEST_F(JobSpecTest, ControlSpecNeedsNoCommand) {
  Configuration conf = KeyCatalog::BuiltIn().Defaults();
  conf.Set("tony.application.backend", "YARN", ValueSource::ConfFlag());
  conf.Set("tony.history.retention-sec", "0", ValueSource::ConfFlag());
  absl::StatusOr<JobControlSpec> control = BuildJobControlSpec(conf);
  ASSERT_TRUE(control.ok()) << control.status();
  EXPECT_EQ(control->backend, "yarn");
  EXPECT_EQ(control->application_type, "TONY");
  EXPECT_EQ(control->stop_grace_ms, 5000);
  EXPECT_EQ(control->history_retention_sec, 0);
  EXPECT_TRUE(control->hadoop_conf_dirs.empty());
  conf.Set("tony.application.yarn-conf-path", "/etc/yarn", ValueSource::ConfFlag());
  conf.Set("tony.application.hdfs-conf-path", "/etc/hdfs", ValueSource::ConfFlag());
  EXPECT_EQ(BuildJobControlSpec(conf)->hadoop_conf_dirs,
            (std::vector<std::string>{"/etc/hdfs", "/etc/yarn"}));
  conf.Set("tony.application.backend", "kubernetes", ValueSource::ConfFlag());
  EXPECT_EQ(BuildJobControlSpec(conf).status().message(),
            "tony.application.backend = \"kubernetes\" (--conf): expected local or yarn");
}

TEST_F(JobSpecTest, HistoryKeysAreReadAndValidated) {
  // The history samples a task's metrics this often; a value that is not a number is bad input.
  Set("tony.task.metrics-interval-ms", "250");
  Set("tony.history.location", " /data/history ");
  Set("tony.history.max-log-bytes", "1024");
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->metrics_interval_ms, 250);
  EXPECT_EQ(spec->history_location, "/data/history");
  EXPECT_EQ(spec->history_intermediate, "");
  EXPECT_EQ(spec->history_max_log_bytes, 1024);
  Set("tony.task.metrics-interval-ms", "whenever");
  EXPECT_NE(Build().status().message().find("tony.task.metrics-interval-ms"), std::string::npos);
  Set("tony.task.metrics-interval-ms", "5000");
  Set("tony.history.max-log-bytes", "-1");
  EXPECT_NE(Build().status().message().find("tony.history.max-log-bytes"), std::string::npos);
}

}  // namespace
}  // namespace tony::config
