// Every job's history (history/history_format.h), and `tony logs`, on the local backend and on
// YARN: the events of succeeded, restarted, failed and killed jobs in order, the metric samples,
// the configuration with sources, and the tasks' output during and after the job (on YARN also
// once the AM is gone).

#include "e2e/backend_fixture.h"

namespace tony::testing {
namespace {

using Json = nlohmann::json;

class HistoryE2eTest : public BackendE2eTest {
 protected:
  // A file of the job's finished history: $TONY_HOME/history locally, the user's HDFS directory
  // on YARN.
  std::string HistoryFile(const std::string& app_id, const std::string& name) const {
    if (!yarn()) return ReadAll(fs::path(runner_.home()) / "history/finished" / app_id / name);
    absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster_->Hdfs();
    if (!hdfs.ok()) return "";
    absl::StatusOr<std::string> data =
        hdfs->Open("/user/" + cluster_->user() + "/.tony/history/finished/" + app_id + "/" + name);
    return data.ok() ? *data : "";
  }
  static std::vector<Json> Lines(const std::string& text) {
    std::vector<Json> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      lines.push_back(Json::parse(line, nullptr, /*allow_exceptions=*/false));
    }
    return lines;
  }
  // "KIND[ STATE][ exit N]" of `task`'s events, in order.
  static std::vector<std::string> TaskEvents(const std::vector<Json>& events,
                                             const std::string& task) {
    std::vector<std::string> seen;
    for (const Json& e : events) {
      if (e.value("task", "") != task) continue;
      std::string text = e.value("kind", "?") + "#" + std::to_string(e.value("attempt", -1));
      if (e.contains("state")) text += " " + e.value("state", "");
      if (e.contains("exit_code")) text += " exit " + std::to_string(e.value("exit_code", -1));
      seen.push_back(text);
    }
    return seen;
  }
  // `tony logs ARGS...` from another terminal of the same user.
  TonyResult Logs(std::vector<std::string> args) {
    args.insert(args.begin(), "logs");
    std::map<std::string, std::string> env = Env();
    env["TONY_HOME"] = runner_.home();
    return other_.Run(args, 60000, env);
  }

  TonyRunner other_;
};

TEST_P(HistoryE2eTest, ARestartedJobsHistoryHasEveryEventInOrder) {
  const std::string once = runner_.work_dir() + "/failed-once";
  TonyResult r = Run(
      Submit({"tony.worker.instances=2", "tony.worker.memory=256m", "tony.worker.max-restarts=1",
              "tony.worker.restart-policy=task", "tony.worker.restart-backoff-ms=0",
              "tony.task.heartbeat-interval-ms=100", "tony.task.metrics-interval-ms=100"},
             "if [ $TASK_INDEX = 1 ] && [ ! -e " + once + " ]; then touch " + once +
                 "; echo first attempt failing >&2; exit 3; fi; "
                 "/usr/bin/python3 -c 'import time; b = bytearray(32 << 20); time.sleep(1.5)'; "
                 "echo worker $TASK_INDEX done"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ASSERT_FALSE(r.app_id.empty());

  const std::vector<Json> events = Lines(HistoryFile(r.app_id, "events.jsonl"));
  ASSERT_GE(events.size(), 4u) << HistoryFile(r.app_id, "events.jsonl");
  EXPECT_EQ(events.front().value("kind", ""), "APPLICATION_SUBMITTED");
  EXPECT_EQ(events[1].value("kind", ""), "AM_STARTED");
  EXPECT_EQ(events.back().value("kind", ""), "APPLICATION_FINISHED");
  EXPECT_EQ(events.back().value("state", ""), "SUCCEEDED");
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_LE(events[i - 1].value("time_ms", int64_t{0}), events[i].value("time_ms", int64_t{0}))
        << "event " << i << " goes back in time";
  }
  EXPECT_EQ(TaskEvents(events, "worker:0"),
            (std::vector<std::string>{"TASK_REQUESTED#0", "TASK_ALLOCATED#0", "TASK_REGISTERED#0",
                                      "TASK_STARTED#0", "TASK_FINISHED#0 SUCCEEDED exit 0"}));
  EXPECT_EQ(TaskEvents(events, "worker:1"),
            (std::vector<std::string>{"TASK_REQUESTED#0", "TASK_ALLOCATED#0", "TASK_REGISTERED#0",
                                      "TASK_STARTED#0", "TASK_FINISHED#0 FAILED exit 3",
                                      "TASK_RESTARTED#1", "TASK_REQUESTED#1", "TASK_ALLOCATED#1",
                                      "TASK_REGISTERED#1", "TASK_STARTED#1",
                                      "TASK_FINISHED#1 SUCCEEDED exit 0"}));

  // Samples of both tasks' memory, from heartbeats: the 32 MiB the task holds show.
  std::map<std::string, int64_t> peak;
  for (const Json& sample : Lines(HistoryFile(r.app_id, "metrics.jsonl"))) {
    int64_t& p = peak[sample.value("task", "")];
    p = std::max(p, sample.value("rss_bytes", int64_t{0}));
  }
  EXPECT_GT(peak["worker:0"], int64_t{32} << 20);
  EXPECT_GT(peak["worker:1"], int64_t{32} << 20);

  // The configuration with where each value came from.
  const Json conf = Json::parse(HistoryFile(r.app_id, "config.json"), nullptr, false);
  bool found = false;
  for (const Json& row : conf.is_array() ? conf : Json::array()) {
    if (row.value("key", "") != "tony.worker.instances") continue;
    found = true;
    EXPECT_EQ(row.value("value", ""), "2");
    EXPECT_EQ(row.value("source", ""), "--conf");
  }
  EXPECT_TRUE(found) << HistoryFile(r.app_id, "config.json");

  const Json job = Json::parse(HistoryFile(r.app_id, "job.json"), nullptr, false);
  ASSERT_TRUE(job.is_object()) << HistoryFile(r.app_id, "job.json");
  EXPECT_EQ(job.value("app_id", ""), r.app_id);
  EXPECT_EQ(job.value("backend", ""), GetParam());
  EXPECT_EQ(job["status"].value("state", ""), "JOB_SUCCEEDED");
  EXPECT_TRUE(job["status"].value("complete", false));
  ASSERT_EQ(job["status"]["tasks"].size(), 2u);

  // Both attempts' output, after the job (on YARN its AM is gone by now).
  TonyResult logs = Logs({r.app_id, "--task", "worker:1", "--all"});
  ASSERT_EQ(logs.exit_code, 0) << logs.Describe();
  EXPECT_NE(logs.out.find("==> worker:1 attempt 0 stderr <==\nfirst attempt failing\n"),
            std::string::npos)
      << logs.out;
  EXPECT_NE(logs.out.find("==> worker:1 attempt 1 stdout <==\nworker 1 done\n"), std::string::npos)
      << logs.out;
  EXPECT_EQ(logs.out.find("worker 0 done"), std::string::npos) << "only worker:1\n" << logs.out;
}

TEST_P(HistoryE2eTest, FailedAndKilledJobsEndTheirHistoryWithTheirState) {
  TonyResult failed = Run(Submit({"tony.worker.instances=1", "tony.worker.memory=256m"},
                                 "echo broken input >&2; exit 1"));
  ASSERT_EQ(failed.exit_code, 1) << Describe(failed);
  std::vector<Json> events = Lines(HistoryFile(failed.app_id, "events.jsonl"));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().value("kind", ""), "APPLICATION_FINISHED");
  EXPECT_EQ(events.back().value("state", ""), "FAILED");
  EXPECT_NE(events.back().value("diagnostics", "").find("worker:0 failed (exit code 1)"),
            std::string::npos)
      << events.back().dump();
  std::vector<std::string> worker = TaskEvents(events, "worker:0");
  ASSERT_FALSE(worker.empty());
  EXPECT_EQ(worker.back(), "TASK_FINISHED#0 FAILED exit 1");
  TonyResult stderr_logs = Logs({failed.app_id, "--stderr"});
  EXPECT_EQ(stderr_logs.exit_code, 0) << stderr_logs.Describe();
  EXPECT_NE(stderr_logs.out.find("broken input"), std::string::npos) << stderr_logs.out;

  const pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                                  "exec /usr/bin/python3 sleep_forever.py"));
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(runner_.WaitForOutput("2 running", 120000)) << runner_.CurrentOutput();
  std::map<std::string, std::string> env = Env();
  env["TONY_HOME"] = runner_.home();
  TonyResult kill = other_.Run({"kill", runner_.SubmittedAppId()}, 60000, env);
  ASSERT_EQ(kill.exit_code, 0) << kill.Describe();
  TonyResult killed = Wait(tony);
  ASSERT_EQ(killed.exit_code, 1) << Describe(killed);
  events = Lines(HistoryFile(killed.app_id, "events.jsonl"));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().value("kind", ""), "APPLICATION_FINISHED");
  EXPECT_EQ(events.back().value("state", ""), "KILLED");
  for (const char* task : {"worker:0", "worker:1"}) {
    worker = TaskEvents(events, task);
    ASSERT_FALSE(worker.empty()) << task;
    EXPECT_TRUE(worker.back().starts_with("TASK_FINISHED#0 STOPPED")) << worker.back();
  }
}

TEST_P(HistoryE2eTest, LogsShowTheOutputDuringAndAfterTheJob) {
  const std::string release = runner_.work_dir() + "/release";
  const pid_t tony = Start(Submit(
      {"tony.worker.instances=1", "tony.worker.memory=256m", "tony.task.heartbeat-interval-ms=200"},
      "echo epoch 1 loss 0.9; for i in $(seq 600); do [ -e " + release +
          " ] && break; sleep 0.1; done; echo epoch 2 loss 0.4"));
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(runner_.WaitForOutput("1 running", 120000)) << runner_.CurrentOutput();
  const std::string app_id = runner_.SubmittedAppId();

  // While the job runs: the output printed so far, as soon as the history has it.
  TonyResult during;
  for (int i = 0; i < 300; ++i) {
    during = Logs({app_id, "--task", "worker:0"});
    if (during.out.find("epoch 1 loss 0.9") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(during.exit_code, 0) << during.Describe();
  EXPECT_NE(during.out.find("epoch 1 loss 0.9"), std::string::npos) << during.Describe();
  EXPECT_EQ(during.out.find("epoch 2"), std::string::npos) << during.out;

  // --follow prints each new line with its task, and ends with the job.
  TonyRunner follower;
  std::map<std::string, std::string> env = Env();
  env["TONY_HOME"] = runner_.home();
  const pid_t follow = follower.Start({"logs", app_id, "--follow"}, env);
  ASSERT_TRUE(follower.WaitForOutput("[worker:0] epoch 1 loss 0.9\n", 60000))
      << follower.CurrentOutput();
  std::ofstream(release).put('\n');
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  TonyResult followed = follower.Wait(follow, 60000);
  EXPECT_FALSE(followed.timed_out) << "--follow did not end with the job";
  EXPECT_EQ(followed.exit_code, 0) << followed.Describe();
  EXPECT_NE(followed.out.find("[worker:0] epoch 2 loss 0.4\n"), std::string::npos) << followed.out;

  // After the job (on YARN, after its AM has gone).
  TonyResult after = Logs({app_id});
  ASSERT_EQ(after.exit_code, 0) << after.Describe();
  EXPECT_NE(
      after.out.find("==> worker:0 attempt 0 stdout <==\nepoch 1 loss 0.9\nepoch 2 loss 0.4\n"),
      std::string::npos)
      << after.out;
  // A task or an application that is not there: one line, exit 2.
  TonyResult no_task = Logs({app_id, "--task", "worker:7"});
  EXPECT_EQ(no_task.exit_code, 2) << no_task.Describe();
  EXPECT_NE(no_task.err.find("no stdout output of worker:7"), std::string::npos) << no_task.err;
}

// tony submit --tee: every task's lines as they come, each with its task, as torchrun --tee;
// bytes that would upset a terminal are escaped and a very long line is cut.
TEST_P(HistoryE2eTest, TeeStreamsEveryTasksLinesWithTheirTask) {
  std::vector<std::string> args = Submit(
      {"tony.worker.instances=2", "tony.worker.memory=256m", "tony.task.heartbeat-interval-ms=200"},
      "echo step 1 of $TASK_INDEX; sleep 0.5; echo step 2 of $TASK_INDEX; "
      "printf '\\377 not utf-8 \\033[31m escape\\n' >&2; head -c 20000 /dev/zero | tr '\\0' x");
  args.push_back("--tee");
  TonyResult r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* line :
       {"[worker:0] step 1 of 0\n", "[worker:0] step 2 of 0\n", "[worker:1] step 1 of 1\n",
        "[worker:1] step 2 of 1\n", "[worker:1 stderr] ? not utf-8 ?[31m escape\n"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  EXPECT_LT(r.out.find("[worker:0] step 1 of 0"), r.out.find("[worker:0] step 2 of 0"));
  EXPECT_EQ(r.out.find('\033'), std::string::npos) << "no raw escape reaches the terminal";
  const size_t long_line = r.out.find("[worker:0] xxxx");
  ASSERT_NE(long_line, std::string::npos) << r.out;
  const size_t end = r.out.find('\n', long_line);
  EXPECT_LT(end - long_line, 5000u) << "a 20,000-byte line is cut";
  EXPECT_EQ(r.out.substr(end - 3, 3), "...");
}

// tony.history.url (TonY's tony.portal.url): the client names the job's page on the history
// server, and on YARN the ended application's tracking URL is that page, as MapReduce's and
// Spark's point at their history servers.
TEST_P(HistoryE2eTest, TheTrackingUrlOfAnEndedJobIsItsHistoryPage) {
  TonyResult bad =
      Run(Submit({"tony.worker.instances=1", "tony.history.url=history:18080"}, "echo never"));
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("tony.history.url"), std::string::npos) << bad.err;

  TonyResult r = Run(Submit({"tony.worker.instances=1", "tony.worker.memory=256m",
                             "tony.portal.url=http://history.example:18080/"},
                            "echo done"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string page = "http://history.example:18080/jobs/" + r.app_id;
  EXPECT_NE(r.out.find("history: " + page + "\n"), std::string::npos) << r.out;
  if (yarn()) {
    absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> client = cluster_->Yarn();
    ASSERT_TRUE(client.ok()) << client.status();
    absl::StatusOr<hadoop::ApplicationReport> report =
        (*client)->GetApplicationReport(*hadoop::ApplicationId::Parse(r.app_id));
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->original_tracking_url, page);
  }
}

// GPU use in the history, from nvidia-smi's query interface (tony.gpu-exec-path): a stand-in
// program reports two GPUs where the machine has none; the samples are those of the task's own
// GPU (CUDA_VISIBLE_DEVICES), or of every GPU listed where the container names none (YARN without
// GPU isolation), and the history's job page plots them.
TEST_P(HistoryE2eTest, GpuUseOfTheTasksGpusIsSampled) {
  TonyResult r = Run(Submit(
      {"tony.worker.instances=1", "tony.worker.memory=256m", "tony.worker.gpus=1",
       "tony.local.gpus=2", "tony.task.heartbeat-interval-ms=100",
       "tony.task.metrics-interval-ms=100",
       "tony.gpu-exec-path=" + TonyRunner::SourcePath("tests/e2e/scripts/fake_nvidia_smi.sh")},
      "echo \"visible [${CUDA_VISIBLE_DEVICES:-$NVIDIA_VISIBLE_DEVICES}]\"; sleep 1"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::smatch visible;
  const std::string out = TaskStdout(r);
  ASSERT_TRUE(std::regex_search(out, visible, std::regex(R"(visible \[([^\]]*)\])"))) << out;
  const std::map<std::string, std::pair<double, int64_t>> expected = {
      {"0", {37, int64_t{1500} << 20}},
      {"1", {91, int64_t{2500} << 20}},
      {"", {64, int64_t{4000} << 20}}};
  ASSERT_TRUE(expected.contains(visible[1].str())) << visible[1].str();
  const auto [utilization, memory] = expected.at(visible[1].str());
  int gpu_samples = 0;
  for (const Json& sample : Lines(HistoryFile(r.app_id, "metrics.jsonl"))) {
    if (!sample.contains("gpu_utilization")) continue;
    ++gpu_samples;
    EXPECT_DOUBLE_EQ(sample.value("gpu_utilization", -1.0), utilization) << sample.dump();
    EXPECT_EQ(sample.value("gpu_memory_bytes", int64_t{-1}), memory) << sample.dump();
  }
  EXPECT_GE(gpu_samples, 2);
}

// The client ends with what the chief printed last (TonY's jobs print their accuracy there), not
// with a log path to open.
TEST_P(HistoryE2eTest, TheSummaryEndsWithTheChiefsLastLines) {
  TonyResult r =
      Run(Submit({"tony.chief.instances=1", "tony.worker.instances=1", "tony.chief.memory=256m",
                  "tony.worker.memory=256m"},
                 "if [ $JOB_NAME = chief ]; then echo epoch 9; echo test accuracy: 0.97; "
                 "else echo a worker line; fi"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("last lines of chief:0's output:\n  epoch 9\n  test accuracy: 0.97\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("a worker line"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Backends, HistoryE2eTest, ::testing::Values("local", "yarn"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tony::testing
