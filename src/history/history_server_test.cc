#include "history/history_server.h"

#include <gtest/gtest.h>
#include <sys/time.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "common/clock.h"

namespace tony::history {
namespace {

namespace fs = std::filesystem;

class HistoryServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tony_hserver_XXXXXX";
    root_ = mkdtemp(pattern);
    store_ = {LocalHistoryFs(), DirsAt(root_, "", "")};
  }
  void TearDown() override { fs::remove_all(root_); }
  // A job's history with the given files, in the finished (or intermediate) directory.
  std::string AddJob(const std::string& app, const std::map<std::string, std::string>& files,
                     bool finished = true) {
    const std::string dir =
        (finished ? store_.dirs.finished : store_.dirs.intermediate) + "/" + app;
    EXPECT_TRUE(store_.fs->MakeDirs(dir + "/logs").ok());
    for (const auto& [name, text] : files)
      EXPECT_TRUE(store_.fs->Write(dir + "/" + name, text).ok());
    return dir;
  }
  HistoryServer& Server(int64_t retention_sec = 0) {
    server_.Stop();
    HistoryServerOptions options;
    options.store = store_;
    options.retention_sec = retention_sec;
    options.purge_interval_ms = 3600 * 1000;
    EXPECT_TRUE(server_.Start(options).ok());
    return server_;
  }

  std::string root_;
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
  const timeval two_days_ago[2] = {{time(nullptr) - 2 * 86400, 0}, {time(nullptr) - 2 * 86400, 0}};
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
