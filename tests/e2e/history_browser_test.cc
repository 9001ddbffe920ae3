// The history UI in a real browser: headless Chromium (Debian's `chromium`, driven by its own
// --dump-dom and --screenshot) opens `tony history` after real jobs ran, on the local backend and
// on YARN (history on HDFS): the job list, a job page with its task rows, its timeline (a bar per
// attempt, a restart included) and metric plots, and a log. It opens the AM's live page of a
// running job the same way. Screenshots are kept in TONY_TEST_ARTIFACTS (the build's
// test-artifacts/history_browser by default).

#include <signal.h>

#include "common/process.h"
#include "e2e/backend_fixture.h"

namespace tony::testing {
namespace {

class HistoryBrowserTest : public BackendE2eTest {
 protected:
  void SetUp() override {
    BackendE2eTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(fs::exists("/usr/bin/chromium")) << "Debian's chromium (scripts/install-deps)";
    const char* root = std::getenv("TONY_TEST_ARTIFACTS");
    artifacts_ = fs::path(root != nullptr ? root : TONY_TEST_ARTIFACTS_DIR) / "history_browser";
    fs::create_directories(artifacts_);
    profile_ = runner_.work_dir() + "/chromium-profile";
    // The cluster's HDFS keeps every test's history: this one gets a directory of its own.
    history_ = "tony.history.location=/tmp/tony-history-browser-" + std::to_string(getpid()) + "-" +
               std::to_string(time(nullptr));
  }

  // The page's DOM once Chromium loaded it, and a screenshot of it as `shot`.png.
  std::string Browse(const std::string& url, const std::string& shot) {
    const std::vector<std::string> common = {"/usr/bin/chromium",
                                             "--headless",
                                             "--no-sandbox",
                                             "--disable-gpu",
                                             "--disable-dev-shm-usage",
                                             "--no-first-run",
                                             "--user-data-dir=" + profile_};
    const std::string dom_path = runner_.work_dir() + "/dom.html";
    std::vector<std::string> dump = common;
    dump.insert(dump.end(), {"--dump-dom", url});
    RunChromium(dump, dom_path);
    std::vector<std::string> screenshot = common;
    const std::string png = (artifacts_ / (GetParam() + "-" + shot + ".png")).string();
    fs::remove(png);
    screenshot.insert(screenshot.end(), {"--window-size=1200,1800", "--screenshot=" + png, url});
    RunChromium(screenshot, "/dev/null");
    EXPECT_TRUE(fs::exists(png) && fs::file_size(png) > 1000) << "no screenshot " << png;
    return ReadAll(dom_path);
  }

  void RunChromium(const std::vector<std::string>& argv, const std::string& out) {
    SpawnOptions spawn;
    spawn.argv = argv;
    spawn.stdout_path = out;
    spawn.stderr_path = runner_.work_dir() + "/chromium.err";
    if (out != "/dev/null") fs::remove(out);
    absl::StatusOr<pid_t> pid = Spawn(spawn);
    ASSERT_TRUE(pid.ok()) << pid.status();
    absl::StatusOr<std::optional<ExitStatus>> exit = WaitForExitFor(*pid, 60000);
    if (!exit.ok() || !exit->has_value()) {
      kill(*pid, SIGKILL);
      (void)WaitForExit(*pid);
      FAIL() << "chromium did not finish within 60 s";
    }
    EXPECT_EQ((*exit)->ShellCode(), 0) << ReadAll(runner_.work_dir() + "/chromium.err");
  }

  static int Count(const std::string& text, const std::string& needle) {
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++n;
    }
    return n;
  }

  fs::path artifacts_;
  std::string profile_;
  std::string history_;
};

TEST_P(HistoryBrowserTest, TheHistoryAndTheLivePageShowJobsTasksTimelinePlotsAndLogs) {
  // A job with a restart: worker:1 fails once, then both hold memory for a while and print.
  const std::string once = runner_.work_dir() + "/failed-once";
  TonyResult restarted = Run(
      Submit({"tony.worker.instances=2", "tony.worker.memory=256m", "tony.worker.max-restarts=1",
              "tony.worker.restart-policy=task", "tony.worker.restart-backoff-ms=0",
              "tony.task.heartbeat-interval-ms=100", "tony.task.metrics-interval-ms=100", history_},
             "if [ $TASK_INDEX = 1 ] && [ ! -e " + once + " ]; then touch " + once +
                 "; exit 3; fi; /usr/bin/python3 -c 'import time; b = bytearray(48 << 20); "
                 "time.sleep(2)'; echo \"worker $TASK_INDEX <b>accuracy</b> 0.97\""));
  ASSERT_EQ(restarted.exit_code, 0) << Describe(restarted);
  const std::string app = restarted.app_id;

  // The AM's live page of a running job: the same job page.
  const std::string release = runner_.work_dir() + "/release";
  const pid_t running = Start(
      Submit({"tony.worker.instances=1", "tony.worker.memory=256m",
              "tony.task.heartbeat-interval-ms=100", "tony.task.metrics-interval-ms=100", history_},
             "for i in $(seq 600); do [ -e " + release + " ] && break; sleep 0.1; done"));
  ASSERT_GT(running, 0);
  ASSERT_TRUE(runner_.WaitForOutput("1 running", 120000)) << runner_.CurrentOutput();
  std::smatch url;
  const std::string out = runner_.CurrentOutput();
  ASSERT_TRUE(std::regex_search(out, url, std::regex(R"(tracking URL (http://\S+))"))) << out;
  std::string live;
  for (int i = 0; i < 50; ++i) {  // until a sample has come and the page was rendered again
    live = Browse(url[1].str(), "live");
    if (live.find("data-measure=\"memory\"") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_NE(live.find("<tr class=\"task\" data-task=\"worker:0\">"), std::string::npos) << live;
  EXPECT_NE(live.find("class=\"RUNNING\">RUNNING"), std::string::npos) << live;
  EXPECT_NE(live.find("data-task=\"worker:0\" data-attempt=\"0\" data-state=\"RUNNING\""),
            std::string::npos)
      << live;
  EXPECT_NE(live.find("data-measure=\"memory\""), std::string::npos) << live;
  std::ofstream(release).put('\n');
  TonyResult second = Wait(running);
  ASSERT_EQ(second.exit_code, 0) << Describe(second);

  // `tony history` on the ended jobs.
  TonyRunner server;
  std::map<std::string, std::string> env = Env();
  env["TONY_HOME"] = runner_.home();
  std::vector<std::string> args = {"history", "--port", "0", "--conf", history_};
  if (yarn()) {
    args.insert(args.end(), {"--backend", "yarn"});
    for (const std::string& c : cluster_->SubmitConf()) args.insert(args.end(), {"--conf", c});
  }
  const pid_t history = server.Start(args, env);
  ASSERT_TRUE(server.WaitForOutput("/ (Ctrl-C", 60000)) << server.CurrentOutput();
  std::smatch base;
  const std::string announced = server.CurrentOutput();
  ASSERT_TRUE(std::regex_search(announced, base, std::regex(R"(at (http://[0-9.:]+)/)")))
      << announced;

  const std::string list = Browse(base[1].str() + "/", "list");
  EXPECT_NE(list.find("href=\"/jobs/" + app + "\""), std::string::npos) << list;
  EXPECT_NE(list.find("href=\"/jobs/" + second.app_id + "\""), std::string::npos) << list;
  EXPECT_LT(list.find(second.app_id), list.find(app)) << "newest first";
  const std::string killed_only = Browse(base[1].str() + "/?state=KILLED", "list-killed");
  EXPECT_EQ(Count(killed_only, "<tr class=\"job\">"), 0) << killed_only;

  const std::string job = Browse(base[1].str() + "/jobs/" + app, "job");
  EXPECT_NE(job.find("<tr class=\"task\" data-task=\"worker:0\">"), std::string::npos) << job;
  EXPECT_NE(job.find("<tr class=\"task\" data-task=\"worker:1\">"), std::string::npos) << job;
  EXPECT_EQ(Count(job, "<g class=\"attempt\""), 3) << "worker:0, and worker:1 twice\n" << job;
  EXPECT_NE(job.find("data-task=\"worker:1\" data-attempt=\"0\" data-state=\"FAILED\""),
            std::string::npos)
      << job;
  EXPECT_NE(job.find("data-measure=\"cpu\""), std::string::npos) << job;
  EXPECT_NE(job.find("data-measure=\"memory\""), std::string::npos) << job;
  EXPECT_GE(Count(job, "<polyline class=\"series\""), 4) << job;
  EXPECT_NE(job.find("<td>tony.worker.max-restarts</td><td>1</td><td>--conf</td>"),
            std::string::npos)
      << job;

  const std::string log = Browse(base[1].str() + "/jobs/" + app + "/logs/worker-1-1.stdout", "log");
  EXPECT_NE(log.find("worker 1 &lt;b&gt;accuracy&lt;/b&gt; 0.97"), std::string::npos) << log;

  // The same history as Prometheus metrics, read by prometheus_client's own parser: every job's
  // series at /metrics, and one job's with its tasks' newest samples at /jobs/<id>/metrics.
  const std::string job_label = R"(app_id=")" + app + R"(")";
  const ParsedMetrics all = ParseMetricsText(HttpGet(base[1].str() + "/metrics"));
  ASSERT_TRUE(all.ok) << all.samples;
  EXPECT_NE(all.samples.find("tony_job_state{" + job_label + R"(,state="SUCCEEDED"} 1.0)"),
            std::string::npos)
      << all.samples;
  EXPECT_NE(all.samples.find(R"(tony_job_state{app_id=")" + second.app_id +
                             R"(",state="SUCCEEDED"} 1.0)"),
            std::string::npos)
      << all.samples;
  // worker:1's first attempt failed with its own exit code and ran again.
  EXPECT_NE(
      all.samples.find("tony_job_task_restarts_total{" + job_label + R"(,cause="exit_code"} 1.0)"),
      std::string::npos)
      << all.samples;
  const ParsedMetrics one = ParseMetricsText(HttpGet(base[1].str() + "/jobs/" + app + "/metrics"));
  ASSERT_TRUE(one.ok) << one.samples;
  for (const char* index : {"0", "1"}) {
    const std::string task = job_label + R"(,task_index=")" + index + R"(",task_type="worker"})";
    EXPECT_NE(one.samples.find("tony_task_cpu_seconds_total{" + task), std::string::npos)
        << one.samples;
    EXPECT_NE(one.samples.find("tony_task_memory_bytes{" + task), std::string::npos) << one.samples;
  }
  EXPECT_EQ(one.samples.find(second.app_id), std::string::npos) << one.samples;

  kill(history, SIGINT);
  TonyResult stopped = server.Wait(history, 30000);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.Describe();
}

INSTANTIATE_TEST_SUITE_P(Backends, HistoryBrowserTest, ::testing::Values("local", "yarn"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tony::testing
