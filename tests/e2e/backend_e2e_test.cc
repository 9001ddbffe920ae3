// Jobs that differ only in the backend, one body each, run on the local backend and on the real
// YARN mini cluster (backend_fixture.h): training, cluster specs, failure policy, restarts,
// interrupts. Real processes, real PyTorch. The fault cases are in backend_fault_e2e_test.cc.

#include "common/strings.h"
#include "e2e/backend_fixture.h"
#include "e2e/job_outputs.h"

namespace tony::testing {
namespace {

TEST_P(BackendE2eTest, PyTorchDigitsTrainsWithTwoWorkers) {
  std::vector<std::string> args = {"submit",
                                   "--src_dir",
                                   TonyRunner::SourcePath("examples/pytorch-digits"),
                                   "--executes",
                                   "train.py",
                                   "--python_binary_path",
                                   "/usr/bin/python3",
                                   "--conf_file",
                                   TonyRunner::SourcePath("examples/pytorch-digits/tony.xml")};
  if (yarn()) {
    args.insert(args.end(), {"--backend", "yarn", "--conf", "tony.am.memory=256m"});
  } else {
    args.insert(args.end(), {"--conf", "tony.local.vcores=4"});
  }
  TonyResult r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
  const std::string out = TaskStdout(r);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(out, match, std::regex(R"(test accuracy: ([0-9.]+))"))) << out;
  EXPECT_GT(std::stod(match[1].str()), 0.9);
  EXPECT_NE(out.find("rank 1 of world size 2"), std::string::npos) << out;
  // The client ends with what the leading task printed last: the accuracy, no log to open.
  const size_t tail = r.out.find("last lines of worker:0's output:");
  ASSERT_NE(tail, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  test accuracy: ", tail), std::string::npos) << r.out;

  // The model outlives the job, in the job's output directory (on YARN, the job's HDFS directory,
  // where the executor copied it when the task ended), private to the user.
  const std::string outputs = SummaryOutputs(r.out);
  if (yarn()) {
    EXPECT_TRUE(outputs.starts_with("hdfs://")) << r.out;
    EXPECT_TRUE(outputs.ends_with("/.tony/" + r.app_id + "/outputs")) << r.out;
  } else {
    EXPECT_EQ(outputs, r.job_dir + "/outputs") << r.out;
  }
  std::optional<OutputEntry> dir = StatOutput(outputs, cluster_ ? &*cluster_ : nullptr);
  ASSERT_TRUE(dir.has_value() && dir->is_directory) << outputs;
  EXPECT_EQ(dir->mode, 0700) << outputs;
  std::optional<OutputEntry> model =
      StatOutput(outputs + "/model.pt", cluster_ ? &*cluster_ : nullptr);
  ASSERT_TRUE(model.has_value()) << outputs << "/model.pt is missing\n" << r.out;
  EXPECT_GT(model->size, 0);
  EXPECT_NE(r.out.find("saved model to " + outputs + "/model.pt"), std::string::npos) << r.out;

  // The second example evaluates that model, shipped to its task as a resource: the same
  // accuracy on the same held-out digits.
  std::vector<std::string> evaluate = {
      "submit",           "--src_dir",   TonyRunner::SourcePath("examples/pytorch-digits"),
      "--executes",       "evaluate.py", "--python_binary_path",
      "/usr/bin/python3", "--conf",      "tony.containers.resources=" + outputs + "/model.pt"};
  if (yarn())
    evaluate.insert(evaluate.end(), {"--backend", "yarn", "--conf", "tony.am.memory=256m"});
  TonyResult e = Run(evaluate);
  ASSERT_EQ(e.exit_code, 0) << Describe(e);
  EXPECT_NE(e.out.find("evaluated model.pt: test accuracy " + match[1].str()), std::string::npos)
      << "trained to " << match[1].str() << "\n"
      << e.out;
}

// An output directory of the user's: every task writes there (locally as it is; on YARN a local
// one the executor copies to HDFS), and it stays after the job.
TEST_P(BackendE2eTest, EveryTaskWritesToTheOutputDirectoryItNames) {
  const std::string name = std::to_string(getpid()) + "-" + std::to_string(time(nullptr));
  const std::string outputs = yarn() ? "hdfs:///user/" + cluster_->user() + "/outputs-" + name
                                     : runner_.work_dir() + "/outputs-" + name;
  std::vector<std::string> args =
      Submit({"tony.worker.instances=2"},
             "mkdir -p \"$TONY_OUTPUT_DIR/$JOB_NAME\" && echo \"$TASK_INDEX $TONY_OUTPUT_URI\" > "
             "\"$TONY_OUTPUT_DIR/$JOB_NAME/$TASK_INDEX.txt\"");
  args.insert(args.end(), {"--output_dir", outputs});
  TonyResult r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string where = SummaryOutputs(r.out);
  if (yarn()) {
    EXPECT_TRUE(where.starts_with("hdfs://") && where.ends_with("/outputs-" + name)) << r.out;
  } else {
    EXPECT_EQ(where, outputs) << r.out;
  }
  const TestCluster* cluster = cluster_ ? &*cluster_ : nullptr;
  std::optional<OutputEntry> dir = StatOutput(where, cluster);
  ASSERT_TRUE(dir.has_value() && dir->is_directory) << where;
  EXPECT_EQ(dir->mode, 0700) << where;
  for (const char* file : {"/worker/0.txt", "/worker/1.txt"}) {
    std::optional<OutputEntry> written = StatOutput(where + file, cluster);
    ASSERT_TRUE(written.has_value()) << where << file << " is missing\n" << r.out;
    // "<index> <TONY_OUTPUT_URI>\n"
    EXPECT_EQ(written->size, static_cast<int64_t>(2 + where.size() + 1)) << where << file;
  }
}

TEST_P(BackendE2eTest, TensorFlowClusterSpecAndTfConfigAgree) {
  // ps is tracked here so that its own check always completes (an untracked ps may be stopped
  // before it ran; PsRunningForeverIsStoppedWhenWorkersFinish covers stopping it).
  TonyResult r =
      Run(Submit({"tony.application.framework=tensorflow", "tony.chief.instances=1",
                  "tony.worker.instances=2", "tony.ps.instances=1", "tony.evaluator.instances=1",
                  "tony.application.untracked.jobtypes=", "tony.chief.memory=256m",
                  "tony.worker.memory=256m", "tony.ps.memory=256m", "tony.evaluator.memory=256m"},
                 "/usr/bin/python3 check_tf_env.py --untracked="));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string out = TaskStdout(r);
  for (const char* task : {"chief:0", "worker:0", "worker:1", "ps:0", "evaluator:0"}) {
    EXPECT_NE(out.find(std::string("ok ") + task), std::string::npos) << task << out;
  }
}

TEST_P(BackendE2eTest, FailedWorkerWithFailOnWorkerFailureFailsTheJob) {
  TonyResult r = Run(Submit({"tony.worker.instances=3", "tony.worker.memory=256m",
                             "tony.application.fail-on-worker-failure-enabled=true"},
                            "/usr/bin/python3 exit_with.py 3 --only worker:1"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("task worker:1 failed (exit code 3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failing on purpose with exit code 3"), std::string::npos) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

TEST_P(BackendE2eTest, FailingChiefFailsTheJobAtOnce) {
  // The workers would run forever; the chief's failure must end the job regardless.
  TonyResult r = Run(Submit({"tony.chief.instances=1", "tony.worker.instances=2",
                             "tony.chief.memory=256m", "tony.worker.memory=256m"},
                            "if [ $JOB_NAME = chief ]; then exit 7; fi; "
                            "exec /usr/bin/python3 sleep_forever.py"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("chief chief:0 failed (exit code 7)"), std::string::npos) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "STOPPED")) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

TEST_P(BackendE2eTest, PsRunningForeverIsStoppedWhenWorkersFinish) {
  TonyResult r = Run(Submit({"tony.worker.instances=2", "tony.ps.instances=1",
                             "tony.worker.memory=256m", "tony.ps.memory=256m"},
                            "if [ $JOB_NAME = ps ]; then exec /usr/bin/python3 sleep_forever.py; "
                            "fi; echo done"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(TaskRow(r.out, "ps:0", "STOPPED")) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "worker:1", "SUCCEEDED")) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
}

TEST_P(BackendE2eTest, InterruptKillsTheJob) {
  pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                            "/usr/bin/python3 sleep_forever.py"));
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(runner_.WaitForOutput("2 running", 120000));
  kill(tony, SIGINT);
  TonyResult r = Wait(tony);
  EXPECT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 130) << Describe(r);
  EXPECT_NE(r.out.find("KILLED"), std::string::npos) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "KILLED");
}

TEST_P(BackendE2eTest, WorkerThatFailsOnceIsRestartedAndTheJobSucceeds) {
  TonyResult r = Run(
      Submit({"tony.worker.instances=2", "tony.worker.memory=256m", "tony.worker.max-restarts=1",
              "tony.worker.restart-policy=task", "tony.worker.restart-backoff-ms=100"},
             "echo attempt $ATTEMPT_NUMBER of $JOB_NAME:$TASK_INDEX; "
             "echo checkpoints in $TONY_CHECKPOINT_DIR.; "
             "if [ $TASK_INDEX = 0 ] && [ $ATTEMPT_NUMBER = 0 ]; "
             "then echo first attempt fails >&2; exit 3; fi"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("worker:0 attempt 0 failed with exit code 3 and was restarted"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("first attempt fails"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(worker:0 +SUCCEEDED +\S+ +0 +2 )"))) << r.out;
  EXPECT_NE(TaskStdout(r).find("attempt 1 of worker:0"), std::string::npos);
  // Every task's checkpoint directory, by default in the job's directory: its HDFS staging
  // directory on YARN, its local one otherwise.
  const std::regex checkpoints(yarn() ? "checkpoints in hdfs://[^ ]+/\\.tony/" + r.app_id +
                                            "/checkpoints\\."
                                      : "checkpoints in " + r.job_dir + "/checkpoints\\.");
  EXPECT_TRUE(std::regex_search(TaskStdout(r), checkpoints)) << TaskStdout(r);
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
}

// A rank that stops (SIGSTOP: as a deadlock or a stuck read looks) is found hung once it makes no
// progress for tony.task.hang-timeout-ms; its stacks go to its log, it is stopped, and the restart
// policy restarts it.
TEST_P(BackendE2eTest, AHungTaskIsFoundWithItsStacksAndRestarted) {
  TonyResult r = Run(Submit(
      {"tony.worker.instances=2", "tony.worker.memory=256m", "tony.worker.max-restarts=1",
       "tony.worker.restart-policy=task", "tony.worker.restart-backoff-ms=100",
       "tony.task.hang-timeout-ms=3000",
       R"(tony.worker.progress-pattern=^step (?P<step>\d+)/(?P<total>\d+))"},
      "echo step 1/2; echo step 2/2; "
      "if [ $TASK_INDEX = 1 ] && [ $ATTEMPT_NUMBER = 0 ]; then kill -STOP $$; fi; echo done"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(std::regex_search(
      r.out,
      std::regex("worker:1 attempt 0 failed with exit code -1001 \\(hung\\) and was restarted:\n  "
                 "worker:1 is hung: no progress for [0-9]+ ms \\(tony.task.hang-timeout-ms "
                 "= 3000\\), at step 2\n")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(worker:1 +SUCCEEDED +\S+ +0 +2 )"))) << r.out;
  const std::string stderr_logs = TaskStdout(r, "stderr");
  EXPECT_NE(stderr_logs.find("[tony] stacks of worker:1's processes: worker:1 is hung"),
            std::string::npos)
      << stderr_logs;
  EXPECT_TRUE(std::regex_search(stderr_logs, std::regex(R"(thread [0-9]+ \(sh\) stopped)")))
      << stderr_logs;
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
}

TEST_P(BackendE2eTest, ListStatusAndKillWorkFromAnotherTerminal) {
  pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                            "/usr/bin/python3 sleep_forever.py"));
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(runner_.WaitForOutput("2 running", 120000)) << runner_.CurrentOutput();
  const std::string app_id = runner_.SubmittedAppId();
  ASSERT_FALSE(app_id.empty()) << runner_.CurrentOutput();

  // Another terminal of the same user: the same TONY_HOME, nothing else shared.
  TonyRunner other;
  std::map<std::string, std::string> env = Env();
  env["TONY_HOME"] = runner_.home();
  TonyResult status = other.Run({"status", app_id}, 60000, env);
  ASSERT_EQ(status.exit_code, 0) << Describe(status);
  EXPECT_NE(status.out.find(app_id + ": RUNNING"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("tracking URL http"), std::string::npos) << status.out;
  EXPECT_TRUE(TaskRow(status.out, "worker:0", "RUNNING")) << status.out;
  EXPECT_TRUE(TaskRow(status.out, "worker:1", "RUNNING")) << status.out;

  std::vector<std::string> list = {"list"};
  if (yarn()) list.insert(list.end(), {"--backend", "yarn"});
  TonyResult listed = other.Run(list, 60000, env);
  ASSERT_EQ(listed.exit_code, 0) << Describe(listed);
  EXPECT_TRUE(
      std::regex_search(listed.out, std::regex(app_id + " +TensorFlowApplication +\\S+ +RUNNING ")))
      << listed.out;

  TonyResult killed = other.Run({"kill", app_id}, 60000, env);
  ASSERT_EQ(killed.exit_code, 0) << Describe(killed);
  EXPECT_NE(killed.out.find(app_id + " ended: KILLED"), std::string::npos) << killed.out;
  // The client that submitted the job reports the kill and fails.
  TonyResult r = Wait(tony);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("KILLED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("killed with tony kill"), std::string::npos) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "KILLED");

  TonyResult after = other.Run({"status", app_id}, 60000, env);
  EXPECT_EQ(after.exit_code, 0) << Describe(after);
  EXPECT_NE(after.out.find("final status KILLED"), std::string::npos) << after.out;
  listed = other.Run(list, 60000, env);
  EXPECT_EQ(listed.out.find(app_id), std::string::npos) << listed.out;
  list.push_back("--all");
  listed = other.Run(list, 60000, env);
  EXPECT_TRUE(std::regex_search(listed.out, std::regex(app_id + " .* KILLED +KILLED ")))
      << listed.out;
  TonyResult again = other.Run({"kill", app_id}, 60000, env);
  EXPECT_EQ(again.exit_code, 0) << Describe(again);
  EXPECT_NE(again.out.find("had already ended: KILLED"), std::string::npos) << again.out;
}

TEST_P(BackendE2eTest, SummaryShowsEachTasksPeakMemoryEvenForAShortTask) {
  // worker:0 touches 150 MiB and exits well within one heartbeat interval; worker:1 does nothing.
  TonyResult r = Run(Submit({"tony.worker.instances=2", "tony.worker.memory=512m",
                             "tony.task.heartbeat-interval-ms=5000"},
                            "if [ $TASK_INDEX = 0 ]; then exec /usr/bin/python3 -c "
                            "'b = bytes(1) * (150 << 20); print(len(b))'; fi"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ASSERT_NE(r.out.find("PEAK RSS"), std::string::npos) << r.out;
  auto peak_mb = [&](const std::string& task) {
    std::smatch match;
    const std::regex row("(^|\\n)" + task + " +SUCCEEDED [^\\n]* ([0-9]+)\\.[0-9] MB ");
    return std::regex_search(r.out, match, row) ? std::stoi(match[2]) : -1;
  };
  EXPECT_GE(peak_mb("worker:0"), 150) << r.out;
  EXPECT_LT(peak_mb("worker:0"), 512) << r.out;
  const int idle = peak_mb("worker:1");
  EXPECT_TRUE(idle >= 0 && idle < 100) << r.out;
}

// The tracking URL the client printed, ending in '/'; "" when it printed none.
std::string TrackingUrl(const std::string& out) {
  std::smatch url;
  if (!std::regex_search(out, url, std::regex(R"(tracking URL (https?://\S+))"))) return "";
  std::string base = url[1].str();
  if (!base.ends_with("/")) base += "/";
  return base;
}

TEST_P(BackendE2eTest, TrackingUrlShowsTheRunningJob) {
  // The client prints the tracking URL: the AM's status page itself (local), or YARN's web proxy
  // in front of it (the RM's "ApplicationMaster" link).
  pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                            "/usr/bin/python3 sleep_forever.py"));
  ASSERT_GT(WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                              {{"JOB_NAME", "worker"}, {"TASK_INDEX", "1"}}),
            0);
  const std::string base = TrackingUrl(runner_.CurrentOutput());
  ASSERT_FALSE(base.empty()) << runner_.CurrentOutput();
  if (yarn()) {
    EXPECT_NE(base.find("/proxy/" + app_id_), std::string::npos) << base;
  }
  // The page follows the job within a tick of the AM.
  std::string json;
  for (int i = 0; i < 100; ++i) {
    json = Get(base + "status.json");
    if (std::regex_search(json, std::regex(R"(TASK_RUNNING[\s\S]*TASK_RUNNING)"))) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(json.find("\"appId\":\"" + app_id_ + "\""), std::string::npos) << json;
  EXPECT_TRUE(std::regex_search(json, std::regex(R"(TASK_RUNNING[\s\S]*TASK_RUNNING)"))) << json;
  const std::string html = Get(base);
  EXPECT_NE(html.find("<td>worker:1</td><td class=\"RUNNING\">RUNNING</td>"), std::string::npos)
      << html;
  kill(tony, SIGINT);
  TonyResult r = Wait(tony);
  EXPECT_EQ(r.exit_code, 130) << Describe(r);
}

// The AM serves the running job as Prometheus metrics beside its page (through YARN's web proxy
// on YARN): prometheus_client's own parser reads them, and they hold the job's state, its tasks
// by state, each task's heartbeats, memory, CPU and reported progress.
TEST_P(BackendE2eTest, TheRunningJobsMetricsParseAsPrometheusText) {
  pid_t tony =
      Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m",
                    "tony.task.heartbeat-interval-ms=200", "tony.task.metrics-interval-ms=200",
                    R"(tony.worker.progress-pattern=^step (?P<step>\d+)/(?P<total>\d+))"},
                   "echo step 3/4; exec /usr/bin/python3 sleep_forever.py"));
  ASSERT_GT(WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                              {{"JOB_NAME", "worker"}, {"TASK_INDEX", "1"}}),
            0);
  const std::string base = TrackingUrl(runner_.CurrentOutput());
  ASSERT_FALSE(base.empty()) << runner_.CurrentOutput();
  const std::string job = R"(app_id=")" + app_id_ + R"(")";
  auto task = [&](int index) {
    return StrCat(job, R"(,task_index=")", index, R"(",task_type="worker"})");
  };
  // What the metrics must hold: the job running with both tasks, and each task's heartbeats,
  // memory and CPU from a sample, and its reported step. Each task's heartbeats and samples
  // reach the AM on their own schedule, and the page follows at most once a second: polled until
  // everything is there (30 s at most), then every part checked, so that a failure names it.
  std::vector<std::pair<std::string, std::regex>> wanted = {
      {"the job running",
       std::regex(StrCat(R"(tony_job_state\{)", job, R"(,state="RUNNING"\} 1\.0)"))},
      {"both tasks running",
       std::regex(StrCat(R"(tony_job_tasks\{)", job, R"(,state="RUNNING"\} 2\.0)"))}};
  for (int i : {0, 1}) {
    const std::string labels = std::regex_replace(task(i), std::regex(R"([{}])"), R"(\$&)");
    for (const char* series : {"tony_task_heartbeats_total", "tony_task_memory_bytes"}) {
      wanted.emplace_back(StrCat(series, " of worker:", i),
                          std::regex(StrCat(series, R"(\{)", labels, R"( [1-9])")));
    }
    wanted.emplace_back(StrCat("the CPU of worker:", i),
                        std::regex(StrCat(R"(tony_task_cpu_seconds_total\{)", labels, " ")));
    wanted.emplace_back(StrCat("the step of worker:", i),
                        std::regex(StrCat(R"(tony_task_progress_step\{)", labels, R"( 3\.0)")));
    wanted.emplace_back(StrCat("the progress of worker:", i),
                        std::regex(StrCat(R"(tony_task_progress_ratio\{)", labels, R"( 0\.75)")));
  }
  auto missing = [&](const std::string& samples) {
    std::vector<std::string> absent;
    for (const auto& [what, pattern] : wanted) {
      if (!std::regex_search(samples, pattern)) absent.push_back(what);
    }
    return absent;
  };
  ParsedMetrics parsed;
  for (int i = 0; i < 300; ++i) {
    parsed = ParseMetricsText(Get(base + "metrics"));
    if (parsed.ok && missing(parsed.samples).empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(parsed.ok) << parsed.samples;
  for (const std::string& what : missing(parsed.samples)) {
    ADD_FAILURE() << "no " << what << " in the metrics:\n" << parsed.samples;
  }
  kill(tony, SIGINT);
  TonyResult r = Wait(tony);
  EXPECT_EQ(r.exit_code, 130) << Describe(r);
}

// TonY's TensorBoard sidecar with real TensorBoard (PyPI, scripts/install-pydeps): the client
// prints its URL, which serves the run the worker wrote, and the sidecar ends with the job.
TEST_P(BackendE2eTest, TensorBoardSidecarServesTheJobsRuns) {
  TonyResult r = RunTensorBoardSidecar(runner_.work_dir() + "/tensorboard-logs");
  EXPECT_NE(r.out.find("TensorBoard: http://"), std::string::npos) << r.out;
}

// The sidecar's log directory on HDFS, as TonY's users keep it: TensorBoard reads hdfs:// through
// fsspec and hdfs-native (no JVM), with the job's delegation tokens on a Kerberized cluster.
TEST_P(BackendE2eTest, TensorBoardSidecarReadsAnHdfsLogDir) {
  if (!yarn()) GTEST_SKIP() << "hdfs:// log directories need the YARN backend";
  const std::string name = std::to_string(getpid()) + "-" + std::to_string(time(nullptr));
  // On a ViewFS cluster, the path through its mount table (hdfs:/// names no NameNode there, for
  // Hadoop's clients as for hdfs-native).
  const std::string scheme = cluster_->Value("MINICLUSTER_VIEWFS") == "true" ? "viewfs" : "hdfs";
  RunTensorBoardSidecar(scheme + ":///user/" + cluster_->user() + "/tensorboard-" + name);
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendE2eTest, ::testing::Values("local", "yarn"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tony::testing
