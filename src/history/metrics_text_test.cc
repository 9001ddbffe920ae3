#include "history/metrics_text.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "common/task_exit.h"

namespace tony::history {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.starts_with(line + "\n");
}

JobInfo Job() {
  JobInfo job;
  job.app_id = "application_1_0001";
  job.name = "digits";
  job.user = "alice";
  job.framework = "pytorch";
  job.backend = "yarn";
  job.queue = "default";
  job.state = "RUNNING";
  job.start_ms = 1700000000500;
  TaskRow w0;
  w0.type = "worker";
  w0.index = 0;
  w0.state = "RUNNING";
  w0.attempt = 2;
  w0.heartbeats = 42;
  w0.peak_rss_bytes = 3 << 20;
  w0.previous_exit_codes = {kExitPreempted, 1};
  TaskRow w1 = w0;
  w1.index = 1;
  w1.attempt = 0;
  w1.heartbeats = 7;
  w1.previous_exit_codes.clear();
  w1.step = 30;
  w1.total = 120;
  TaskRow ps;
  ps.type = "ps";
  ps.index = 0;
  ps.state = "FAILED";
  ps.exit_code = 137;
  job.tasks = {w0, w1, ps};
  return job;
}

TEST(MetricsTextTest, TheJobItsTasksByStateAndItsRestartsAndFailuresByCause) {
  const JobInfo job = Job();
  const std::string text = RenderMetricsText({{&job, nullptr}});
  EXPECT_TRUE(Has(text, R"(tony_job_info{app_id="application_1_0001",name="digits",user="alice",)"
                        R"(framework="pytorch",backend="yarn",queue="default"} 1)"))
      << text;
  EXPECT_TRUE(Has(text, R"(tony_job_state{app_id="application_1_0001",state="RUNNING"} 1)"));
  EXPECT_TRUE(Has(text, R"(tony_job_state{app_id="application_1_0001",state="FAILED"} 0)"));
  EXPECT_TRUE(Has(text, R"(tony_job_start_time_seconds{app_id="application_1_0001"} 1700000000.5)"))
      << text;
  EXPECT_EQ(text.find("tony_job_end_time_seconds{"), std::string::npos) << "it has not ended";
  EXPECT_TRUE(Has(text, R"(tony_job_tasks{app_id="application_1_0001",state="RUNNING"} 2)"));
  EXPECT_TRUE(Has(text, R"(tony_job_tasks{app_id="application_1_0001",state="FAILED"} 1)"));
  EXPECT_TRUE(Has(text, R"(tony_job_tasks{app_id="application_1_0001",state="NEW"} 0)"));
  EXPECT_TRUE(Has(
      text, R"(tony_job_task_restarts_total{app_id="application_1_0001",cause="preempted"} 1)"));
  EXPECT_TRUE(Has(
      text, R"(tony_job_task_restarts_total{app_id="application_1_0001",cause="exit_code"} 1)"));
  // Failures: the two restarted attempts and the ps that ended FAILED, killed by signal 9.
  EXPECT_TRUE(Has(
      text, R"(tony_job_task_failures_total{app_id="application_1_0001",cause="preempted"} 1)"));
  EXPECT_TRUE(Has(
      text, R"(tony_job_task_failures_total{app_id="application_1_0001",cause="exit_code"} 1)"));
  EXPECT_TRUE(
      Has(text, R"(tony_job_task_failures_total{app_id="application_1_0001",cause="signal"} 1)"));
  // Every cause's counter is there from the start.
  EXPECT_TRUE(
      Has(text, R"(tony_job_task_restarts_total{app_id="application_1_0001",cause="hung"} 0)"));
  EXPECT_TRUE(
      Has(text, R"(tony_job_task_failures_total{app_id="application_1_0001",cause="memory"} 0)"));
  const std::string w0 = R"({app_id="application_1_0001",task_type="worker",task_index="0"})";
  const std::string w1 = R"({app_id="application_1_0001",task_type="worker",task_index="1"})";
  EXPECT_TRUE(Has(text, "tony_task_attempt" + w0 + " 2"));
  EXPECT_TRUE(Has(text, "tony_task_heartbeats_total" + w0 + " 42"));
  EXPECT_TRUE(Has(text, "tony_task_heartbeats_total" + w1 + " 7"));
  EXPECT_TRUE(Has(text, "tony_task_peak_memory_bytes" + w0 + " 3145728"));
  // Progress from the task table when there are no samples.
  EXPECT_TRUE(Has(text, "tony_task_progress_step" + w1 + " 30"));
  EXPECT_TRUE(Has(text, "tony_task_progress_total_steps" + w1 + " 120"));
  EXPECT_TRUE(Has(text, "tony_task_progress_ratio" + w1 + " 0.25"));
  EXPECT_EQ(text.find("tony_task_progress_step" + w0), std::string::npos);
  EXPECT_EQ(text.find("tony_task_cpu_seconds_total"), std::string::npos) << "no samples";
}

TEST(MetricsTextTest, EachFamilyHasOneHelpAndTypeAndItsSamplesTogether) {
  JobInfo a = Job();
  JobInfo b = Job();
  b.app_id = "application_1_0002";
  b.state = "SUCCEEDED";
  b.end_ms = 1700000100000;
  const std::string text = RenderMetricsText({{&a, nullptr}, {&b, nullptr}});
  std::istringstream lines(text);
  std::set<std::string> typed, closed;
  std::string current;
  for (std::string line; std::getline(lines, line);) {
    ASSERT_FALSE(line.empty());
    if (line.starts_with("# HELP ")) continue;
    if (line.starts_with("# TYPE ")) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(typed.insert(name).second) << name << " typed twice";
      if (!current.empty()) closed.insert(current);
      current = name;
      const std::string type = line.substr(line.rfind(' ') + 1);
      EXPECT_TRUE(type == "gauge" || type == "counter") << line;
      EXPECT_EQ(type == "counter", name.ends_with("_total")) << line;
      continue;
    }
    const std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_EQ(name, current) << "a sample of " << name << " outside its family";
    EXPECT_FALSE(closed.count(name)) << name;
  }
  EXPECT_TRUE(Has(text, R"(tony_job_end_time_seconds{app_id="application_1_0002"} 1700000100)"));
  EXPECT_TRUE(Has(text, R"(tony_job_state{app_id="application_1_0002",state="SUCCEEDED"} 1)"));
}

TEST(MetricsTextTest, ATasksUsageIsItsNewestSampleOfItsCurrentAttempt) {
  const JobInfo job = Job();
  auto sample = [](int64_t time_ms, const char* task, int attempt, double cpu_seconds) {
    MetricSample sample;
    sample.time_ms = time_ms;
    sample.task = task;
    sample.attempt = attempt;
    sample.cpu_seconds = cpu_seconds;
    return sample;
  };
  std::vector<MetricSample> samples = {
      sample(3000, "worker:0", 2, 9.5), sample(2000, "worker:0", 2, 4),
      sample(9000, "worker:0", 1, 99), sample(1000, "worker:9", 0, 1)};
  samples[0].rss_bytes = 2048;
  samples[0].gpu_utilization = 50;
  samples[0].gpu_memory_bytes = int64_t{1} << 30;
  samples[0].step = 70;
  samples[0].total = 100;
  samples[0].values = {{"loss", 0.125}};
  const std::string text = RenderMetricsText({{&job, &samples}});
  const std::string w0 = R"({app_id="application_1_0001",task_type="worker",task_index="0"})";
  EXPECT_TRUE(Has(text, "tony_task_cpu_seconds_total" + w0 + " 9.5")) << text;
  EXPECT_TRUE(Has(text, "tony_task_memory_bytes" + w0 + " 2048"));
  EXPECT_TRUE(Has(text, "tony_task_gpu_utilization_ratio" + w0 + " 0.5"));
  EXPECT_TRUE(Has(text, "tony_task_gpu_memory_bytes" + w0 + " 1073741824"));
  EXPECT_TRUE(Has(text, "tony_task_progress_step" + w0 + " 70"));
  EXPECT_TRUE(Has(text, "tony_task_progress_ratio" + w0 + " 0.7"));
  EXPECT_TRUE(Has(text,
                  R"(tony_task_reported_value{app_id="application_1_0001",task_type="worker",)"
                  R"(task_index="0",name="loss"} 0.125)"));
  EXPECT_EQ(text.find("tony_task_cpu_seconds_total" + w0 + " 99"), std::string::npos)
      << "an earlier attempt's sample was used";
  EXPECT_EQ(text.find(R"(task_index="9")"), std::string::npos) << "a task the job does not have";
}

TEST(MetricsTextTest, LabelValuesAreEscapedAndMadeUtf8) {
  JobInfo job;
  job.app_id = "application_1_0001";
  job.name = std::string("a\"b\\c\nd\xff");
  job.state = "RUNNING";
  const std::string text = RenderMetricsText({{&job, nullptr}});
  EXPECT_NE(text.find(R"(name="a\"b\\c\nd)"
                      "\xEF\xBF\xBD"
                      R"(")"),
            std::string::npos)
      << text;
}

TEST(MetricsTextTest, EachExitCodeHasItsCause) {
  EXPECT_EQ(ExitCause(0), "");
  EXPECT_EQ(ExitCause(1), "exit_code");
  EXPECT_EQ(ExitCause(143), "signal");
  EXPECT_EQ(ExitCause(128 + 64), "signal");
  EXPECT_EQ(ExitCause(128 + 65), "exit_code");
  EXPECT_EQ(ExitCause(kExitPreempted), "preempted");
  EXPECT_EQ(ExitCause(kExitAborted), "node_lost");
  EXPECT_EQ(ExitCause(kExitDisksFailed), "disks_failed");
  EXPECT_EQ(ExitCause(kExitOverPhysicalMemory), "memory");
  EXPECT_EQ(ExitCause(kExitOverVirtualMemory), "memory");
  EXPECT_EQ(ExitCause(kExitLostHeartbeat), "lost_heartbeat");
  EXPECT_EQ(ExitCause(kExitHung), "hung");
  EXPECT_EQ(ExitCause(kExitGangRestart), "gang_restart");
}

}  // namespace
}  // namespace tony::history
