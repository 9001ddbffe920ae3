#include "history/history_reader.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace tony::history {
namespace {

TEST(HistoryReaderTest, LogNamesParseBackIntoTheirTask) {
  std::optional<LogFile> file = ParseLogName(LogFileName("data-loader", 12, 3, "stderr"));
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->type, "data-loader");
  EXPECT_EQ(file->index, 12);
  EXPECT_EQ(file->attempt, 3);
  EXPECT_EQ(file->stream, "stderr");
  EXPECT_EQ(file->Task(), "data-loader:12");
  for (const char* bad :
       {"", "worker-0-0", "worker-0-0.log", "worker-0.stdout", "-0-0.stdout", "worker-x-0.stdout",
        "worker-0--1.stdout", "worker-0-99999999999.stdout", "worker--0.stdout", ".stdout"}) {
    EXPECT_FALSE(ParseLogName(bad).has_value()) << bad;
  }
}

TEST(HistoryReaderTest, FindsAJobAndListsItsLogsInOrder) {
  char pattern[] = "/tmp/tony_reader_XXXXXX";
  const std::string root = mkdtemp(pattern);
  std::shared_ptr<HistoryFs> fs = LocalHistoryFs();
  const HistoryDirs dirs = DirsAt(root, "", "");
  EXPECT_EQ(FindJob(*fs, dirs, "app_1").status().code(), absl::StatusCode::kNotFound);
  const std::string dir = dirs.intermediate + "/app_1";
  ASSERT_TRUE(fs->MakeDirs(dir + "/logs").ok());
  for (const char* name : {"worker-1-0.stdout", "worker-0-1.stdout", "worker-0-0.stderr",
                           "worker-0-0.stdout", "ps-0-0.stdout", "junk.txt"}) {
    ASSERT_TRUE(fs->Append(dir + "/logs/" + name, "x").ok());
  }
  absl::StatusOr<JobLocation> found = FindJob(*fs, dirs, "app_1");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_FALSE(found->finished);
  absl::StatusOr<std::vector<LogFile>> logs = ListLogs(*fs, found->dir);
  ASSERT_TRUE(logs.ok()) << logs.status();
  std::vector<std::string> names;
  for (const LogFile& log : *logs) names.push_back(log.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"ps-0-0.stdout", "worker-0-0.stdout", "worker-0-0.stderr",
                                      "worker-0-1.stdout", "worker-1-0.stdout"}));
  ASSERT_TRUE(fs->MakeDirs(dirs.finished).ok());
  ASSERT_TRUE(fs->Rename(dir, dirs.finished + "/app_1").ok());
  found = FindJob(*fs, dirs, "app_1");
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found->finished);
  std::filesystem::remove_all(root);
}

TEST(HistorySchemaTest, EveryEventFieldSurvivesItsLine) {
  HistoryEvent finished;
  finished.time_ms = 1796396226723;
  finished.kind = kEventTaskFinished;
  finished.task = "worker:3";
  finished.attempt = 2;
  finished.state = "FAILED";
  finished.container = "container_1_0001_01_000004";
  finished.exit_code = 137;
  finished.diagnostics = "killed \"hard\"\nby the kernel";
  HistoryEvent started;
  started.time_ms = 5;
  started.kind = kEventAmStarted;
  started.attempt = 2;  // the AM's
  started.host = "am-host";
  started.tracking_url = "http://am-host:1/";
  HistoryEvent submitted;
  submitted.kind = kEventSubmitted;
  submitted.user = "alice";
  submitted.name = "resnet";
  const std::string text =
      EventLine(finished) + "\n" + EventLine(started) + "\n" + EventLine(submitted) + "\n";
  int bad = -1;
  const std::vector<HistoryEvent> read = ParseEvents(text, &bad);
  EXPECT_EQ(bad, 0);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].time_ms, finished.time_ms);
  EXPECT_EQ(read[0].kind, finished.kind);
  EXPECT_EQ(read[0].task, "worker:3");
  EXPECT_EQ(read[0].attempt, 2);
  EXPECT_EQ(read[0].state, "FAILED");
  EXPECT_EQ(read[0].container, finished.container);
  EXPECT_EQ(read[0].exit_code, 137);
  EXPECT_EQ(read[0].diagnostics, finished.diagnostics);
  EXPECT_EQ(read[1].attempt, 2);
  EXPECT_EQ(read[1].host, "am-host");
  EXPECT_EQ(read[1].address, "am-host");  // a reader's address falls back on the host
  EXPECT_EQ(read[1].tracking_url, "http://am-host:1/");
  EXPECT_EQ(read[2].user, "alice");
  EXPECT_EQ(read[2].name, "resnet");
  EXPECT_FALSE(read[2].exit_code.has_value());
  // A job's own event carries no task, and no attempt unless it has one.
  EXPECT_EQ(EventLine(submitted).find("\"task\""), std::string::npos);
  EXPECT_EQ(EventLine(submitted).find("\"attempt\""), std::string::npos);
}

TEST(HistorySchemaTest, InvalidUtf8IsReplacedNotFatal) {
  HistoryEvent event;
  event.kind = kEventTaskFinished;
  event.task = "worker:0";
  event.diagnostics = "bad \xff byte";
  int bad = -1;
  const std::vector<HistoryEvent> read = ParseEvents(EventLine(event), &bad);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_NE(read[0].diagnostics.find("bad "), std::string::npos);
}

TEST(HistorySchemaTest, EverySampleFieldSurvivesItsLine) {
  MetricSample sample;
  sample.time_ms = 10;
  sample.task = "worker:1";
  sample.attempt = 1;
  sample.cpu_seconds = 2.5;
  sample.rss_bytes = 1 << 20;
  sample.gpu_utilization = 75;
  sample.gpu_memory_bytes = int64_t{3} << 30;
  MetricSample cpu_only = sample;
  cpu_only.gpu_utilization.reset();
  cpu_only.gpu_memory_bytes.reset();
  int bad = -1;
  const std::vector<MetricSample> read =
      ParseMetrics(MetricLine(sample) + "\n" + MetricLine(cpu_only), &bad);
  EXPECT_EQ(bad, 0);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].time_ms, 10);
  EXPECT_EQ(read[0].task, "worker:1");
  EXPECT_EQ(read[0].attempt, 1);
  EXPECT_EQ(read[0].cpu_seconds, 2.5);
  EXPECT_EQ(read[0].rss_bytes, 1 << 20);
  EXPECT_EQ(read[0].gpu_utilization, 75);
  EXPECT_EQ(read[0].gpu_memory_bytes, int64_t{3} << 30);
  EXPECT_FALSE(read[1].gpu_utilization.has_value());
  EXPECT_FALSE(read[1].gpu_memory_bytes.has_value());
  EXPECT_FALSE(read[1].step.has_value());
}

TEST(HistorySchemaTest, AReportedStepAndItsMetricsSurviveTheirLine) {
  MetricSample sample;
  sample.time_ms = 10;
  sample.task = "worker:0";
  sample.step = 700;
  sample.total = 1000;
  sample.values = {{"loss", 0.25}, {"acc", 0.9}};
  int bad = -1;
  const std::vector<MetricSample> read = ParseMetrics(MetricLine(sample), &bad);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].step, 700);
  EXPECT_EQ(read[0].total, 1000);
  EXPECT_EQ(read[0].values, (std::map<std::string, double>{{"acc", 0.9}, {"loss", 0.25}}));
}

TEST(HistorySchemaTest, ATasksProgressIsReadFromJobJson) {
  const JobInfo job = ParseJob(
      R"({"app_id":"application_1_0001","status":{"state":"JOB_RUNNING","tasks":[)"
      R"({"type":"worker","index":0,"progress":{"has_step":true,"step":"70","total":"100"}},)"
      R"({"type":"worker","index":1}]}})");
  ASSERT_EQ(job.tasks.size(), 2u);
  EXPECT_EQ(job.tasks[0].step, 70);
  EXPECT_EQ(job.tasks[0].total, 100);
  EXPECT_FALSE(job.tasks[1].step.has_value());
}

TEST(HistorySchemaTest, AJobOfANewerFormatIsReadWithAProblemNamed) {
  const JobInfo current =
      ParseJob(R"({"format":1,"app_id":"a","status":{"state":"JOB_SUCCEEDED"}})");
  EXPECT_TRUE(current.problems.empty());
  const JobInfo newer = ParseJob(R"({"format":2,"app_id":"a","status":{"state":"JOB_SUCCEEDED"}})");
  EXPECT_EQ(newer.app_id, "a");
  ASSERT_EQ(newer.problems.size(), 1u);
  EXPECT_NE(newer.problems[0].find("history format 2"), std::string::npos) << newer.problems[0];
}

}  // namespace
}  // namespace tony::history
