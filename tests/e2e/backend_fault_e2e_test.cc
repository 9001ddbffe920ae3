// Faults on both backends (backend_fixture.h): kill -9 of user processes, executors and the AM
// (with and without an AM retry), stopped executors, dependency timeouts, grace periods, commands
// that cannot start. After each, nothing of the job may be left.

#include "e2e/backend_fixture.h"

namespace tony::testing {
namespace {

TEST_P(BackendE2eTest, KillMinusNineOfAWorkersUserProcessFailsTheJob) {
  pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m",
                             "tony.application.fail-on-worker-failure-enabled=true"},
                            "/usr/bin/python3 sleep_forever.py"));
  pid_t user = WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                                 {{"JOB_NAME", "worker"}, {"TASK_INDEX", "1"}});
  ASSERT_GT(user, 0);
  kill(user, SIGKILL);
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("task worker:1 failed (killed by signal 9)"), std::string::npos) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "STOPPED")) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

TEST_P(BackendE2eTest, KillMinusNineOfTheAmFailsTheJobAndLeavesNothing) {
  pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                            "/usr/bin/python3 sleep_forever.py"));
  ASSERT_GT(WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                              {{"JOB_NAME", "worker"}, {"TASK_INDEX", "1"}}),
            0);
  const std::vector<pid_t> am = TonyRoleProcesses("am", {});
  ASSERT_EQ(am.size(), 1u);
  kill(am[0], SIGKILL);
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  if (yarn()) {
    EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
  } else {
    EXPECT_NE(r.out.find("the AM killed by signal 9 (SIGKILL) before it recorded a final status"),
              std::string::npos)
        << r.out;
  }
  // TearDown checks that no task survived the AM.
}

// An AM attempt that cannot take the job up (no history: tony.history.location cannot be
// written) stops what the earlier attempt left running and runs the job again, once that has ended.
TEST_P(BackendE2eTest, AnAmAttemptWithoutHistoryRunsTheJobAgainOnceTheEarlierTasksEnded) {
  if (yarn()) GTEST_SKIP() << "the YARN mini cluster's history on HDFS is always writable";
  // The first attempt's worker leaves a marker and hangs; the second attempt's finds it and ends.
  const pid_t tony = StartAJobWhoseFirstAttemptHangs({"tony.history.location=/proc/no-history"});
  ASSERT_GT(tony, 0);
  const std::vector<pid_t> am = TonyRoleProcesses("am", {});
  ASSERT_EQ(am.size(), 1u);
  kill(am[0], SIGKILL);
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("ended without a final status (attempt 1)"), std::string::npos) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "SUCCEEDED")) << r.out;
  EXPECT_NE(TaskStdout(r).find("found the first run's marker"), std::string::npos);
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
  const std::string am_log = ReadAll(fs::path(r.job_dir) / "am.log");
  EXPECT_NE(am_log.find("the job starts again once the 1 containers of earlier attempts ended"),
            std::string::npos)
      << am_log;
  // TearDown checks that nothing of either attempt is left.
}

// kill -9 of the AM in mid-job, with tony.am.retry-count=1: the next attempt takes up the job from
// the first one's history and adopts its running tasks, whose processes run on, once each; the job
// SUCCEEDS, and the client, the history and the final status agree.
TEST_P(BackendE2eTest, KilledAmsNextAttemptAdoptsTheRunningTasksWhichRunOnlyOnce) {
  const std::string dir = runner_.work_dir();
  const pid_t tony = StartRunOnceWorkersAndKillTheAm(dir, AmFault::kKill);
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(runner_.WaitForOutput("AM attempt 2 takes over the job", 120000))
      << runner_.CurrentOutput();
  // The tasks end now: their results reach the second attempt, whichever way they find it.
  std::ofstream(dir + "/go").close();
  ExpectRunOnceJobSucceededOnce(Wait(tony), dir);
}

// The same, with the tasks ending while no AM runs (the client, which starts the next attempt, is
// held meanwhile): each executor keeps its task's result until the next attempt takes it.
TEST_P(BackendE2eTest, ATaskThatEndsWhileNoAmRunsReportsToTheNextAttempt) {
  if (yarn()) GTEST_SKIP() << "on YARN the ResourceManager starts the next attempt, not the client";
  const std::string dir = runner_.work_dir();
  const pid_t tony = StartRunOnceWorkersAndKillTheAm(dir, AmFault::kKillHeld);
  ASSERT_GT(tony, 0);
  std::ofstream(dir + "/go").close();
  const auto ended = [this] {
    int done = 0;
    for (const auto& entry :
         fs::directory_iterator(fs::path(runner_.home()) / "jobs" / app_id_ / "logs")) {
      const std::string out = ReadAll(entry.path() / "stdout");
      done += out.find(" done") != std::string::npos ? 1 : 0;
    }
    return done == 2;
  };
  for (int i = 0; i < 600 && !ended(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(ended());
  kill(tony, SIGCONT);
  TonyResult r = Wait(tony);
  ExpectRunOnceJobSucceededOnce(r, dir);
  // The executors said why they waited.
  int waited = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(r.job_dir) / "logs")) {
    const std::string log = ReadAll(entry.path() / "executor.log");
    waited += log.find("waiting up to 300000 ms for its next attempt") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(waited, 2);
}

// Only the AM container's main process (its launch shell) is killed, on YARN: the container has
// ended, so YARN starts attempt 2, which takes the job over. The first attempt's AM must not live
// on as an orphan that claims a final status: it dies with its container, and the client follows
// the attempt the ResourceManager counts. YARN and tony agree that the job SUCCEEDED.
TEST_P(BackendE2eTest, AnAmWhoseContainerEndedClaimsNothingAndTheNextAttemptDecides) {
  if (!yarn()) GTEST_SKIP() << "the local backend's AM has no launch shell";
  const std::string dir = runner_.work_dir();
  const pid_t tony = StartRunOnceWorkersAndKillTheAm(dir, AmFault::kKillItsShell);
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(runner_.WaitForOutput("AM attempt 2 takes over the job", 120000))
      << runner_.CurrentOutput();
  std::ofstream(dir + "/go").close();
  TonyResult r = Wait(tony);
  ExpectRunOnceJobSucceededOnce(r, dir);
  // Dead: gone, or a zombie its new parent has not reaped yet.
  const auto dead = [pid = first_am_] {
    const std::string now = ReadAll("/proc/" + std::to_string(pid) + "/stat");
    return now.empty() || now.substr(now.rfind(')') + 2, 1) == "Z";
  };
  for (int i = 0; i < 200 && !dead(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(dead()) << "the first attempt's AM outlived its container";
  // TearDown checks that nothing of either attempt is left.
}

TEST_P(BackendE2eTest, StoppedExecutorIsFoundByItsMissingHeartbeats) {
  TonyResult r = SignalWorkerOnesExecutor(
      {"tony.task.heartbeat-interval-ms=100", "tony.task.max-missed-heartbeats=5"}, SIGSTOP);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("task worker:1 failed (lost heartbeat): no heartbeat for"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

TEST_P(BackendE2eTest, StoppedAmBlamesNoTaskAndTheExecutorsSayItWasSilent) {
  // Heartbeats every 100 ms, 20 may be missed: the AM alone would count 2 s without one as a lost
  // task, the executors give up after about 20 s of failed calls. The AM is stopped for 4 s.
  const std::string go = runner_.work_dir() + "/go";
  pid_t tony = Start(
      Submit({"tony.worker.instances=2", "tony.worker.memory=256m",
              "tony.task.heartbeat-interval-ms=100", "tony.task.max-missed-heartbeats=20"},
             "echo waiting-$TASK_INDEX; while [ ! -e " + go + " ]; do sleep 0.1; done; echo went"));
  ASSERT_TRUE(WaitForTaskOutput("waiting-0"));
  ASSERT_TRUE(WaitForTaskOutput("waiting-1"));
  app_id_ = runner_.SubmittedAppId();
  const std::vector<pid_t> am = TonyRoleProcesses("am", {});
  ASSERT_EQ(am.size(), 1u);
  const fs::path logs = yarn() ? fs::path(conf_dir_) / "data" : fs::path(runner_.home()) / "jobs";
  auto logged = [&](const std::string& name, const std::string& text, int at_least) {
    const std::string all = TonyRunner::ReadFilesBelow(logs.string(), name, app_id_);
    int found = 0;
    for (size_t at = all.find(text); at != std::string::npos; at = all.find(text, at + 1)) ++found;
    return found >= at_least;
  };
  const auto stopped_at = std::chrono::steady_clock::now();
  kill(am[0], SIGSTOP);
  bool noticed = false;
  for (int i = 0; i < 300 && !noticed; ++i) {
    noticed = logged("executor.log", "the AM did not answer a heartbeat", 2);
    if (!noticed) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // The fault's length, not a synchronisation: the AM stays stopped for 4 s in all.
  std::this_thread::sleep_until(stopped_at + std::chrono::seconds(4));
  kill(am[0], SIGCONT);
  EXPECT_TRUE(noticed) << "the executors did not say that the AM stopped answering";
  // Each executor says so at its first heartbeat that the AM answers; the tasks end only after
  // that, or an executor's next call could be its result rather than a heartbeat.
  bool answered = false;
  for (int i = 0; i < 300 && !answered; ++i) {
    answered = logged("executor.log", "the AM answers again, after", 2);
    if (!answered) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(answered) << "the executors did not say that the AM answers again";
  std::ofstream(go) << "go\n";
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "SUCCEEDED")) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "worker:1", "SUCCEEDED")) << r.out;
  EXPECT_EQ(r.out.find("lost heartbeat"), std::string::npos) << r.out;
  EXPECT_TRUE(logged("am.log", "the AM did not run for", 1));
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
}

TEST_P(BackendE2eTest, EvaluatorThatOutlivesTrainingIsStoppedByTheDependencyTimeout) {
  const std::string command =
      "if [ $JOB_NAME = evaluator ]; then exec /usr/bin/python3 sleep_forever.py; fi; echo trained";
  const std::vector<std::string> conf = {
      "tony.worker.instances=2",
      "tony.evaluator.instances=1",
      "tony.worker.memory=256m",
      "tony.evaluator.memory=256m",
      "tony.application.group.training=worker",
      "tony.application.dependency.evaluator.timeout.after.training=1"};
  TonyResult failed = Run(Submit(conf, command));
  ASSERT_EQ(failed.exit_code, 1) << Describe(failed);
  EXPECT_NE(failed.out.find("evaluator:0 still ran 1 s after group training (worker) finished"),
            std::string::npos)
      << failed.out;
  EXPECT_EQ(RecordedFinalStatus(failed), "FAILED");

  std::vector<std::string> ignored = conf;
  ignored.push_back("tony.application.dependency.evaluator.timeout.after.training.ignored=true");
  TonyResult succeeded = Run(Submit(ignored, command));
  ASSERT_EQ(succeeded.exit_code, 0) << Describe(succeeded);
  EXPECT_TRUE(TaskRow(succeeded.out, "evaluator:0", "STOPPED")) << succeeded.out;
  EXPECT_EQ(RecordedFinalStatus(succeeded), "SUCCEEDED");
}

TEST_P(BackendE2eTest, StoppedTaskGetsItsGracePeriodToCleanUp) {
  // The handler needs a second, longer than YARN's own SIGTERM-to-SIGKILL delay (250 ms).
  pid_t tony = Start(
      Submit({"tony.worker.instances=1", "tony.worker.memory=256m", "tony.task.stop-grace-ms=5000"},
             "trap 'sleep 1; echo cleaned up; exit 0' TERM; echo ready; "
             "while true; do sleep 0.1; done"));
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(WaitForTaskOutput("ready")) << "the task never printed ready";
  kill(tony, SIGINT);
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 130) << Describe(r);
  EXPECT_NE(TaskStdout(r).find("cleaned up"), std::string::npos) << "the grace period was cut";
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "STOPPED")) << r.out;
}

TEST_P(BackendE2eTest, KillMinusNineOfAWorkersExecutorFailsTheJob) {
  TonyResult r = SignalWorkerOnesExecutor({}, SIGKILL);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("task worker:1 failed"), std::string::npos) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

TEST_P(BackendE2eTest, KillMinusNineOfThePsOrTheChiefFailsTheJob) {
  for (const std::string victim : {"ps", "chief"}) {
    pid_t tony = Start(Submit({"tony.chief.instances=1", "tony.ps.instances=1",
                               "tony.chief.memory=256m", "tony.ps.memory=256m"},
                              "/usr/bin/python3 sleep_forever.py"));
    pid_t pid = WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                                  {{"JOB_NAME", victim}, {"TASK_INDEX", "0"}});
    ASSERT_GT(pid, 0) << victim;
    kill(pid, SIGKILL);
    TonyResult r = Wait(tony);
    ASSERT_EQ(r.exit_code, 1) << Describe(r);
    EXPECT_NE(r.out.find(victim == "ps" ? "ps is in tony.application.stop-on-failure-jobtypes"
                                        : "chief chief:0 failed (killed by signal 9)"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
  }
}

TEST_P(BackendE2eTest, UserProcessThatIgnoresSigtermIsKilledAfterTheGracePeriod) {
  pid_t tony = Start(
      Submit({"tony.worker.instances=1", "tony.worker.memory=256m", "tony.task.stop-grace-ms=500"},
             "trap '' TERM; echo ignoring; while true; do sleep 1; done"));
  ASSERT_GT(tony, 0);
  // Only once the shell runs its loop does it ignore SIGTERM.
  ASSERT_TRUE(WaitForTaskOutput("ignoring")) << "the task never printed ignoring";
  kill(tony, SIGINT);
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 130) << Describe(r);
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"((^|\n)worker:0 +STOPPED +\S+ +137 )")))
      << r.out;
}

TEST_P(BackendE2eTest, CommandThatCannotStartFailsTheTaskWithTheReason) {
  TonyResult r = Run(Submit({"tony.worker.instances=1", "tony.worker.memory=256m"},
                            "./no-such-entry-point --flag"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("worker:0 failed with exit code 127"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no-such-entry-point: not found"), std::string::npos) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

TEST_P(BackendE2eTest, TaskOverItsMemoryIsKilledWithTheBackendsDiagnostic) {
  // YARN's NodeManager checks every 3 s, the local backend as configured here; both kill the
  // container with YARN's exit status for physical memory (-104) and say so.
  TonyResult r = Run(Submit({"tony.worker.instances=1", "tony.worker.memory=128m",
                             "tony.local.memory-check-interval-ms=100"},
                            "/usr/bin/python3 eat_memory.py 400"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(worker:0 +FAILED +\S+ +-104 )"))) << r.out;
  EXPECT_NE(r.out.find("physical memory used"), std::string::npos) << r.out;
  if (!yarn()) {
    EXPECT_NE(r.out.find("is running beyond physical memory limits"), std::string::npos) << r.out;
  }
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

// tony.<type>.memory-growth: a task killed over its memory runs again once with more, using no
// restart, and the summary says why and with how much.
TEST_P(BackendE2eTest, ATaskKilledOverItsMemoryRunsAgainWithMore) {
  TonyResult r = Run(
      Submit({"tony.worker.instances=1", "tony.worker.memory=256m", "tony.worker.memory-growth=3",
              "tony.worker.restart-backoff-ms=0", "tony.local.memory-check-interval-ms=100"},
             "timeout 8 /usr/bin/python3 eat_memory.py 400; "
             "echo attempt $ATTEMPT_NUMBER survived"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("worker:0 attempt 0 failed with exit code -104 (killed over its memory) "
                       "and was restarted"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("restarted with 768 MB instead of 256 MB (tony.worker.memory-growth = 3)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(TaskStdout(r).find("attempt 1 survived"), std::string::npos) << TaskStdout(r);
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
}

// Restart policy gang (the default for pytorch): a rank's failure or hang stops the other rank
// too, and both start again in the containers they have, with a fresh rendezvous, from the
// checkpoint in TONY_CHECKPOINT_DIR. Real PyTorch DDP over gloo.
// What each rank printed at each start: "rank R attempt A restart N in DIR starts at step S".
std::vector<std::smatch> RankStarts(const std::string& out) {
  static const std::regex start(
      R"(rank ([01]) attempt ([0-9]+) restart ([0-9]+) in (\S+) starts at step ([0-9]+))");
  std::vector<std::smatch> found;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), start); it != std::sregex_iterator();
       ++it) {
    found.push_back(*it);
  }
  return found;
}

std::vector<std::string> GangConf(const std::string& checkpoints) {
  return {"tony.application.framework=pytorch",
          "tony.worker.instances=2",
          "tony.worker.memory=512m",
          "tony.worker.max-restarts=1",
          "tony.worker.restart-backoff-ms=0",
          "tony.application.checkpoint-dir=" + checkpoints};
}

// Both ranks ran twice, each time in the same directory (its container), the second time as
// attempt 1 of the gang's first restart, resuming from the checkpoint rank 0 wrote.
void ExpectRestartedInPlace(const std::string& out, int fault_step) {
  const std::vector<std::smatch> starts = RankStarts(out);
  ASSERT_EQ(starts.size(), 4u) << out;
  std::map<std::string, std::vector<std::string>> dirs;
  for (const std::smatch& m : starts) {
    dirs[m[1].str()].push_back(m[4].str());
    if (m[2].str() == "0") {
      EXPECT_EQ(m[3].str(), "0") << m[0];
      EXPECT_EQ(m[5].str(), "0") << m[0];
    } else {
      EXPECT_EQ(m[2].str(), "1") << m[0];
      EXPECT_EQ(m[3].str(), "1") << m[0] << ": TORCHELASTIC_RESTART_COUNT";
      EXPECT_GE(std::stoi(m[5].str()), fault_step - 1) << m[0] << ": resumed from the checkpoint";
    }
  }
  for (const auto& [rank, seen] : dirs) {
    ASSERT_EQ(seen.size(), 2u) << rank;
    EXPECT_EQ(seen[0], seen[1]) << "rank " << rank << " ran again in its own container";
  }
  EXPECT_NE(out.find("rank 1 finished 12 steps"), std::string::npos) << out;
}

TEST_P(BackendE2eTest, AKilledRankRestartsTheGangInItsContainersFromTheCheckpoint) {
  const std::string checkpoints = runner_.work_dir() + "/checkpoints";
  TonyResult r = Run(Submit(GangConf(checkpoints), "/usr/bin/python3 gang_ddp.py kill 5"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ExpectRestartedInPlace(TaskStdout(r), 5);
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(worker:0 +SUCCEEDED +\S+ +0 +2 )"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(worker:1 +SUCCEEDED +\S+ +0 +2 )"))) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
}

TEST_P(BackendE2eTest, AStoppedRankIsFoundHungAndTheGangRestartsFromTheCheckpoint) {
  const std::string checkpoints = runner_.work_dir() + "/checkpoints";
  std::vector<std::string> conf = GangConf(checkpoints);
  conf.push_back("tony.task.hang-timeout-ms=4000");
  TonyResult r = Run(Submit(conf, "/usr/bin/python3 gang_ddp.py stop 5"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("worker:1 is hung: no progress for [0-9]+ ms \\(tony.task.hang-timeout-ms "
                        "= 4000\\)")))
      << r.out;
  ExpectRestartedInPlace(TaskStdout(r), 5);
  const std::string stderr_logs = TaskStdout(r, "stderr");
  EXPECT_NE(stderr_logs.find("[tony] stacks of worker:1's processes: worker:1 is hung"),
            std::string::npos)
      << stderr_logs;
  EXPECT_NE(stderr_logs.find("[tony] worker:0 starts again as attempt 1 (its gang restarts)"),
            std::string::npos)
      << stderr_logs;
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendE2eTest, ::testing::Values("local", "yarn"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tony::testing
