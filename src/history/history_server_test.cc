#include "history/history_server.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/clock.h"
#include "common/http_test_client.h"
#include "common/strings.h"

namespace tony::history {
namespace {

namespace fs = std::filesystem;

class HistoryServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tony_hserver_XXXXXX";
    root_ = mkdtemp(pattern);
    const HistoryDirs dirs = DirsAt(root_, "", "");
    store_ = {LocalHistoryFs({dirs.intermediate, dirs.finished}), dirs};
  }
  void TearDown() override { fs::remove_all(root_); }
  // A job's history with the given files, in the finished (or intermediate) directory.
  std::string AddJob(const std::string& app, const std::map<std::string, std::string>& files,
                     bool finished = true) {
    std::string dir = finished ? store_.dirs.finished : store_.dirs.intermediate;
    dir.append("/").append(app);
    EXPECT_TRUE(store_.fs->MakeDirs(dir + "/logs").ok());
    for (const auto& [name, text] : files)
      EXPECT_TRUE(store_.fs->Write(StrCat(dir, "/", name), text).ok());
    return dir;
  }
  HistoryServer& Server(int64_t retention_sec = 0) {
    server_.Stop();
    HistoryServerOptions options;
    options.store = store_;
    options.retention_sec = retention_sec;
    options.purge_interval_ms = int64_t{3600} * 1000;
    absl::StatusOr<int> port = server_.Start(options);
    EXPECT_TRUE(port.ok()) << port.status();
    port_ = port.value_or(0);
    return server_;
  }

  std::string root_;
  int port_ = 0;
  HistoryStore store_;
  HistoryServer server_;
};

constexpr char kJob[] =
    R"({"app_id":"application_1_0001","user":"alice","status":{"state":"JOB_SUCCEEDED",)"
    R"("complete":true,"start_ms":"1000","end_ms":"5000","tasks":[{"type":"worker","index":0,)"
    R"("state":"TASK_SUCCEEDED","has_exit_code":true,"exit_code":0}]}})";

TEST_F(HistoryServerTest, ServesTheListAJobItsLogsAndNothingElse) {
  AddJob(
      "application_1_0001",
      {{"job.json", kJob},
       {"events.jsonl", R"({"time_ms":1000,"kind":"TASK_REQUESTED","task":"worker:0","attempt":0})"
                        "\n"},
       {"logs/worker-0-0.stdout", "accuracy 0.97\n"}});
  HistoryServer& server = Server();
  auto [code, list] = server.Page("/", "", "");
  EXPECT_EQ(code, 200);
  EXPECT_NE(list.find("href=\"/jobs/application_1_0001\""), std::string::npos) << list;
  auto [job_code, job] = server.Page("/jobs/application_1_0001", "", "");
  EXPECT_EQ(job_code, 200);
  EXPECT_NE(job.find("data-task=\"worker:0\""), std::string::npos) << job;
  EXPECT_NE(job.find("/jobs/application_1_0001/logs/worker-0-0.stdout"), std::string::npos);
  auto [log_code, log] = server.Page("/jobs/application_1_0001/logs/worker-0-0.stdout", "", "");
  EXPECT_EQ(log_code, 200);
  EXPECT_NE(log.find("<pre id=\"log\">accuracy 0.97\n</pre>"), std::string::npos) << log;
  for (const char* bad : {"/jobs/application_1_0002", "/jobs/../../etc/passwd",
                          "/jobs/application_1_0001/logs/..%2F..%2Fjob.json",
                          "/jobs/application_1_0001/logs/../job.json",
                          "/jobs/application_1_0001/logs/worker-0-9.stdout", "/etc/passwd"}) {
    EXPECT_EQ(server.Page(bad, "", "").first, 404) << bad;
  }
}

TEST_F(HistoryServerTest, ServesEveryJobsMetricsAndOneJobsWithItsSamples) {
  AddJob("application_1_0001",
         {{"job.json", kJob},
          {"metrics.jsonl",
           R"({"time_ms":2000,"task":"worker:0","attempt":0,"cpu_seconds":3.5,"rss_bytes":4096})"
           "\n"}});
  AddJob("application_1_0002",
         {{"job.json", R"({"app_id":"application_1_0002","status":{"state":"JOB_RUNNING"}})"}},
         /*finished=*/false);
  HistoryServer& server = Server();
  std::optional<std::pair<int, std::string>> all = server.Metrics("/metrics");
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->first, 200);
  EXPECT_NE(all->second.find(R"(tony_job_state{app_id="application_1_0001",state="SUCCEEDED"} 1)"),
            std::string::npos)
      << all->second;
  EXPECT_NE(all->second.find(R"(tony_job_state{app_id="application_1_0002",state="RUNNING"} 1)"),
            std::string::npos);
  EXPECT_EQ(all->second.find("tony_task_cpu_seconds_total"), std::string::npos)
      << "the list reads no job's samples";
  std::optional<std::pair<int, std::string>> one =
      server.Metrics("/jobs/application_1_0001/metrics");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->first, 200);
  EXPECT_NE(one->second.find(R"(tony_task_cpu_seconds_total{app_id="application_1_0001",)"
                             R"(task_type="worker",task_index="0"} 3.5)"),
            std::string::npos)
      << one->second;
  EXPECT_EQ(one->second.find("application_1_0002"), std::string::npos);
  EXPECT_EQ(server.Metrics("/jobs/application_1_0009/metrics")->first, 404);
  for (const char* other : {"/", "/jobs/application_1_0001", "/metrics/x", "/jobs/x/metrics"}) {
    EXPECT_FALSE(server.Metrics(other).has_value()) << other;
  }
  // A request line without a path ("GET ?x") reaches the server as an empty path: the list.
  EXPECT_FALSE(server.Metrics("").has_value());
  const std::string pathless = http_test::Request(port_, "GET", "?x");
  EXPECT_FALSE(pathless.empty()) << "the server died";
  // Over HTTP, as Prometheus's text format.
  const std::string answer = http_test::Request(port_, "GET", "/metrics");
  EXPECT_TRUE(http_test::IsStatus(answer, 200)) << answer.substr(0, 200);
  EXPECT_NE(answer.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << answer;
  EXPECT_NE(http_test::BodyOf(answer).find("# TYPE tony_job_state gauge"), std::string::npos);
}

TEST_F(HistoryServerTest, ServesNoLinkAndNoFifoInTheStore) {
  // What the store's owner could plant for whoever serves it: a log that is a link to a file of
  // the server's user, a job directory that is a link to elsewhere, and a log that is a FIFO.
  const std::string outside = root_ + "/outside";
  fs::create_directories(outside + "/logs");
  {
    std::ofstream(outside + "/secret") << "OUTSIDE-SECRET";
    std::ofstream(outside + "/job.json") << kJob;
    std::ofstream(outside + "/logs/worker-0-0.stdout") << "OUTSIDE-SECRET";
  }
  const std::string linked_log =
      AddJob("application_1_0001", {{"job.json", kJob}, {"logs/worker-0-0.stdout", "ok\n"}});
  fs::remove(linked_log + "/logs/worker-0-0.stdout");
  fs::create_symlink(outside + "/secret", linked_log + "/logs/worker-0-0.stdout");
  fs::create_directories(store_.dirs.finished);
  fs::create_symlink(outside, store_.dirs.finished + "/application_1_0002");
  const std::string fifo_job =
      AddJob("application_1_0003", {{"job.json", kJob}, {"logs/worker-0-0.stdout", "ok\n"}});
  fs::remove(fifo_job + "/logs/worker-0-0.stdout");
  ASSERT_EQ(mkfifo((fifo_job + "/logs/worker-0-0.stdout").c_str(), 0600), 0);

  HistoryServer& server = Server();
  for (const char* page :
       {"/jobs/application_1_0001/logs/worker-0-0.stdout", "/jobs/application_1_0002",
        "/jobs/application_1_0002/logs/worker-0-0.stdout", "/"}) {
    EXPECT_EQ(server.Page(page, "", "").second.find("OUTSIDE-SECRET"), std::string::npos) << page;
  }
  // Each request for the FIFO ends at once, so more of them than the server has threads do not
  // stop it.
  for (int i = 0; i < 100; ++i) {
    EXPECT_NE(server.Page("/jobs/application_1_0003/logs/worker-0-0.stdout", "", "").first, 200);
  }
  EXPECT_EQ(server.Page("/jobs/application_1_0003", "", "").first, 200);
}

TEST_F(HistoryServerTest, TwoHundredSlowClientsDoNotStopIt) {
  AddJob("application_1_0001", {{"job.json", kJob}});
  Server();
  // Each sends half a request and holds on, as slowloris does.
  std::vector<int> held;
  for (int i = 0; i < 200; ++i) {
    const int fd = http_test::Connect(port_);
    ASSERT_GE(fd, 0) << "connection " << i;
    const std::string half = "GET / HTTP/1.1\r\nHost: x\r\n";
    ASSERT_EQ(write(fd, half.data(), half.size()), static_cast<ssize_t>(half.size()));
    held.push_back(fd);
  }
  const std::string answer = http_test::Request(port_, "GET", "/jobs/application_1_0001");
  EXPECT_TRUE(http_test::IsStatus(answer, 200)) << answer.substr(0, 200);
  EXPECT_TRUE(http_test::IsStatus(
      http_test::Request(port_, "GET", "/jobs/application_1_0001%00/logs/x"), 404));
  for (int fd : held) close(fd);
}

TEST_F(HistoryServerTest, PartialAndDamagedHistoriesShowAsSuchAndNeverFail) {
  // A job killed while it wrote: job.json cut short, a partial last event, no config.
  AddJob("application_1_0002",
         {{"job.json", std::string(kJob).substr(0, 60)},
          {"events.jsonl", R"({"time_ms":1,"kind":"AM_STARTED"})"
                           "\n"
                           R"({"time_ms":2,"ki)"},
          {"metrics.jsonl", "\x01\x02garbage\n"}},
         /*finished=*/false);
  AddJob("application_1_0003", {});  // no files at all
  HistoryServer& server = Server();
  auto [code, list] = server.Page("/", "", "");
  EXPECT_EQ(code, 200);
  EXPECT_NE(list.find("application_1_0002"), std::string::npos);
  auto [job_code, job] = server.Page("/jobs/application_1_0002", "", "");
  EXPECT_EQ(job_code, 200);
  EXPECT_NE(job.find("job.json is not a JSON object"), std::string::npos) << job;
  EXPECT_NE(job.find("1 line(s) of events.jsonl could not be read"), std::string::npos);
  EXPECT_NE(job.find("1 line(s) of metrics.jsonl could not be read"), std::string::npos);
  EXPECT_NE(job.find("config.json is missing or empty"), std::string::npos);
  EXPECT_EQ(server.Page("/jobs/application_1_0003", "", "").first, 200);
}

TEST_F(HistoryServerTest, RetentionRemovesOldJobsWhileTheServerServes) {
  const std::string old_dir = AddJob("application_1_0001", {{"job.json", kJob}});
  AddJob("application_1_0002", {{"job.json", kJob}});
  AddJob("application_1_0003", {{"job.json", kJob}}, /*finished=*/false);
  // application_1_0001 was last written two days ago.
  const timeval two_days_ago[2] = {{time(nullptr) - time_t{2} * 86400, 0},
                                   {time(nullptr) - time_t{2} * 86400, 0}};
  ASSERT_EQ(utimes((old_dir + "/job.json").c_str(), two_days_ago), 0);
  HistoryServer& server = Server(/*retention_sec=*/86400);
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::thread reader([&] {
    while (!done) {
      const int code = server.Page("/jobs/application_1_0001", "", "").first;
      if (code != 200 && code != 404) ++failures;
    }
  });
  const std::vector<std::string> removed = server.Purge(SystemClock::Get()->WallMs());
  done = true;
  reader.join();
  EXPECT_EQ(removed, std::vector<std::string>{"application_1_0001"});
  EXPECT_EQ(failures, 0);
  EXPECT_FALSE(fs::exists(old_dir));
  EXPECT_EQ(server.Page("/jobs/application_1_0001", "", "").first, 404);
  EXPECT_EQ(server.Page("/jobs/application_1_0002", "", "").first, 200);
  EXPECT_EQ(server.Page("/jobs/application_1_0003", "", "").first, 200) << "running: kept";
}

}  // namespace
}  // namespace tony::history
