// TonY's end-to-end scenarios (TestTonyE2E in TonY) that no other suite here already runs, each
// named after TonY's test, with TonY's expected outcome, on the local backend and on YARN.
// docs/compatibility.md maps every TonY scenario to the test that covers it.

#include "e2e/backend_fixture.h"

namespace tony::testing {
namespace {

using TonyScenariosE2eTest = BackendE2eTest;

// testSingleNodeTrainingShouldFail: no tony.<type>.instances (single-node mode) and a command
// that exits 1: the job fails (TonY's -1, tony's 1), with the task's own words.
TEST_P(TonyScenariosE2eTest, SingleNodeTrainingThatFailsFailsTheJob) {
  TonyResult r = Run(Submit({}, "/usr/bin/python3 exit_with.py 1"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "FAILED")) << r.out;
  EXPECT_NE(r.out.find("failing on purpose with exit code 1"), std::string::npos) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

// testTensorBoardPortSetOnlyOnChiefWorker: only the chief gets TB_PORT (exit 0, every task
// succeeds); with a TensorBoard sidecar the chief gets none either (testAttachedTensorboard).
TEST_P(TonyScenariosE2eTest, TensorBoardPortIsSetOnlyOnTheChief) {
  const std::string check =
      "if [ $JOB_NAME:$TASK_INDEX = chief:0 ] && [ -z \"$TB_SIDECAR\" ]; then "
      "[ -n \"$TB_PORT\" ] || { echo \"chief:0 has no TB_PORT\" >&2; exit 3; }; "
      "else [ -z \"$TB_PORT\" ] || { echo \"$JOB_NAME:$TASK_INDEX has TB_PORT\" >&2; exit 4; }; fi";
  const std::vector<std::string> conf = {"tony.application.framework=tensorflow",
                                         "tony.chief.instances=1",
                                         "tony.ps.instances=1",
                                         "tony.worker.instances=1",
                                         "tony.application.untracked.jobtypes=",
                                         "tony.chief.memory=256m",
                                         "tony.ps.memory=256m",
                                         "tony.worker.memory=256m"};
  TonyResult r = Run(Submit(conf, check));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* task : {"chief:0", "ps:0", "worker:0"}) {
    EXPECT_TRUE(TaskRow(r.out, task, "SUCCEEDED")) << task << "\n" << r.out;
  }

  std::vector<std::string> with_sidecar = conf;
  with_sidecar.insert(with_sidecar.end(),
                      {"tony.tensorboard.memory=256m",
                       "tony.tensorboard.command=exec /usr/bin/python3 sleep_forever.py",
                       "tony.execution.envs=TB_SIDECAR=1"});
  std::vector<std::string> args = Submit(with_sidecar, check);
  args.insert(args.end(), {"--sidecar_tensorboard_log_dir", runner_.work_dir() + "/tb"});
  TonyResult sidecar = Run(args);
  ASSERT_EQ(sidecar.exit_code, 0) << Describe(sidecar);
  EXPECT_TRUE(TaskRow(sidecar.out, "chief:0", "SUCCEEDED")) << sidecar.out;
  EXPECT_TRUE(TaskRow(sidecar.out, "tensorboard:0", "STOPPED")) << sidecar.out;
}

// testTaskWithDependencyTimeoutButIgnoredAndWithPSShouldPass: the chief ends, the workers outlive
// their ignored dependency timeout on it, a ps serves forever (untracked by default): the job
// succeeds and stops the rest.
TEST_P(TonyScenariosE2eTest, IgnoredDependencyTimeoutWithAForeverPsSucceeds) {
  TonyResult r = Run(Submit(
      {"tony.chief.instances=1", "tony.worker.instances=2", "tony.ps.instances=1",
       "tony.chief.memory=256m", "tony.worker.memory=256m", "tony.ps.memory=256m",
       "tony.application.group.A=chief", "tony.application.dependency.worker.timeout.after.A=1",
       "tony.application.dependency.worker.timeout.after.A.ignored=true"},
      "if [ $JOB_NAME = chief ]; then echo trained; exit 0; fi; "
      "exec /usr/bin/python3 sleep_forever.py"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
  EXPECT_TRUE(TaskRow(r.out, "chief:0", "SUCCEEDED")) << r.out;
  for (const char* task : {"worker:0", "worker:1", "ps:0"}) {
    EXPECT_TRUE(TaskRow(r.out, task, "STOPPED")) << task << "\n" << r.out;
  }
}

// testPSSkewedWorkerTrainingShouldPass and testTaskCompletionNotificationDelayed, for real: the
// chief trains seconds longer than the other worker, with heartbeats every 100 ms and 5 allowed to
// go missing. The finished worker sends none and its container's end reaches the AM late (on YARN
// only with the scheduler's next heartbeat); neither counts as lost. The job succeeds when the
// chief does, and the ps that serves forever is stopped.
TEST_P(TonyScenariosE2eTest, SkewedChiefAndLateContainerEndsStillSucceed) {
  TonyResult r =
      Run(Submit({"tony.worker.instances=2", "tony.ps.instances=1", "tony.worker.memory=256m",
                  "tony.ps.memory=256m", "tony.task.heartbeat-interval-ms=100",
                  "tony.task.max-missed-heartbeats=5"},
                 "case $JOB_NAME:$TASK_INDEX in worker:0) sleep 6;; ps:0) exec /usr/bin/python3 "
                 "sleep_forever.py;; esac; echo trained"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "SUCCEEDED")) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "worker:1", "SUCCEEDED")) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "ps:0", "STOPPED")) << r.out;
  EXPECT_EQ(r.out.find("heartbeat"), std::string::npos) << r.out;
}

// testTonyAMSchedulerShouldPass: the training stage (ps, worker) starts only once the prepare stage
// (dbloader, db) has succeeded; every task exits 0 and so does the job.
TEST_P(TonyScenariosE2eTest, TrainingStageStartsAfterThePrepareStage) {
  const std::string marker = runner_.work_dir() + "/prepared";
  TonyResult r = Run(Submit(
      {"tony.dbloader.instances=1", "tony.db.instances=1", "tony.ps.instances=1",
       "tony.worker.instances=1", "tony.dbloader.memory=256m", "tony.db.memory=256m",
       "tony.ps.memory=256m", "tony.worker.memory=256m", "tony.application.untracked.jobtypes=",
       "tony.application.prepare-stage=dbloader,db", "tony.application.training-stage=ps,worker"},
      "case $JOB_NAME in dbloader|db) sleep 0.3; echo data > " + marker +
          "-$JOB_NAME;; *) test -f " + marker + "-dbloader && test -f " + marker +
          "-db && echo found prepared data;; esac"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string out = TaskStdout(r);
  size_t found = 0;
  for (size_t at = out.find("found prepared data"); at != std::string::npos;
       at = out.find("found prepared data", at + 1)) {
    ++found;
  }
  EXPECT_EQ(found, 2u) << out;
  for (const char* task : {"dbloader:0", "db:0", "ps:0", "worker:0"}) {
    EXPECT_TRUE(TaskRow(r.out, task, "SUCCEEDED")) << task << "\n" << r.out;
  }
}

// TonY's preprocessing job (tony.application.enable-preprocess): it runs first, alone, with
// PREPROCESSING_JOB=true, here tony.am.command; what it prints after "Model parameters: " reaches
// every later task as MODEL_PARAMS (TonY's name) and TASK_PARAMS. Its output is the job's like any
// task's.
TEST_P(TonyScenariosE2eTest, ThePreprocessingJobRunsFirstAndHandsItsParametersOn) {
  const std::string marker = runner_.work_dir() + "/preprocessed";
  TonyResult r = Run(Submit({"tony.worker.instances=2", "tony.worker.memory=256m",
                             "tony.am.memory=256m", "tony.application.enable-preprocess=true",
                             "tony.am.command=[ \"$PREPROCESSING_JOB\" = true ] && echo data > " +
                                 marker + " && echo 'Model parameters: --lr 0.1 --layers 4'"},
                            "test -f " + marker +
                                " || { echo 'ran before the preprocessing job' >&2; exit 3; }; "
                                "[ -z \"$PREPROCESSING_JOB\" ] || exit 4; "
                                "[ \"$TASK_PARAMS\" = \"$MODEL_PARAMS\" ] || exit 5; "
                                "echo \"trained with $MODEL_PARAMS\""));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(TaskRow(r.out, "preprocess:0", "SUCCEEDED")) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "SUCCEEDED")) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "worker:1", "SUCCEEDED")) << r.out;
  const std::string out = TaskStdout(r);
  EXPECT_NE(out.find("Model parameters: --lr 0.1 --layers 4"), std::string::npos) << out;
  size_t trained = 0;
  for (size_t at = out.find("trained with --lr 0.1 --layers 4\n"); at != std::string::npos;
       at = out.find("trained with --lr 0.1 --layers 4\n", at + 1)) {
    ++trained;
  }
  EXPECT_EQ(trained, 2u) << out;
}

// A preprocessing job that fails fails the job, with its exit code and the end of its stderr, and
// no other task starts.
TEST_P(TonyScenariosE2eTest, AFailedPreprocessingJobFailsTheJobBeforeAnyOtherTask) {
  TonyResult r = Run(Submit(
      {"tony.worker.instances=2", "tony.worker.memory=256m", "tony.am.memory=256m",
       "tony.application.enable-preprocess=true", "tony.am.command=echo no input data >&2; exit 7"},
      "echo the worker ran"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
  EXPECT_TRUE(TaskRow(r.out, "preprocess:0", "FAILED")) << r.out;
  for (const char* part : {"task preprocess:0 failed (exit code 7)", "no input data",
                           "the preprocessing job failed, so no other task starts"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  EXPECT_EQ(TaskStdout(r).find("the worker ran"), std::string::npos) << TaskStdout(r);
}

// testTonySidecarExecutorCrashShouldPass: a task of a sidecar type of the user's own that fails
// does not fail the job; the worker decides it.
TEST_P(TonyScenariosE2eTest, FailingSidecarOfTheUsersOwnLeavesTheJobToTheWorker) {
  TonyResult r = Run(Submit(
      {"tony.worker.instances=1", "tony.sidecarexecutor.instances=1", "tony.worker.memory=256m",
       "tony.sidecarexecutor.memory=256m", "tony.application.sidecar.jobtypes=sidecarexecutor",
       "tony.sidecarexecutor.command=/usr/bin/python3 exit_with.py 1"},
      "sleep 2; echo trained"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "SUCCEEDED")) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "sidecarexecutor:0", "FAILED")) << r.out;
}

// testTaskWithDependencyTimeAndIgnoredButFailedShouldPass (which TonY expects to fail): the
// workers outlive their ignored dependency timeout on the chief, then fail; they are a
// stop-on-failure type, so their failure still fails the job, while the evaluator runs on.
TEST_P(TonyScenariosE2eTest, TasksPastAnIgnoredTimeoutThatFailStillFailTheJob) {
  TonyResult r = Run(Submit(
      {"tony.chief.instances=1", "tony.worker.instances=2", "tony.evaluator.instances=1",
       "tony.chief.memory=256m", "tony.worker.memory=256m", "tony.evaluator.memory=256m",
       "tony.application.group.A=chief", "tony.application.dependency.worker.timeout.after.A=1",
       "tony.application.dependency.worker.timeout.after.A.ignored=true",
       "tony.application.stop-on-failure-jobtypes=worker"},
      "case $JOB_NAME in chief) echo trained;; worker) sleep 3; echo failing >&2; exit 1;; "
      "*) exec /usr/bin/python3 sleep_forever.py;; esac"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
  EXPECT_NE(r.out.find("worker is in tony.application.stop-on-failure-jobtypes"), std::string::npos)
      << r.out;
  EXPECT_TRUE(TaskRow(r.out, "chief:0", "SUCCEEDED")) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "evaluator:0", "STOPPED")) << r.out;
}

// testTonyAMStartupTimeoutShouldFail: an AM that YARN does not start within
// tony.am.startup-timeout fails the job, and the client kills the application. The real
// equivalent of TonY's faked RM state: another job holds all of the cluster's memory, so the
// second job's AM stays queued. (The local backend starts its AM at once; nothing queues it.)
TEST_P(TonyScenariosE2eTest, AmThatIsNotStartedInTimeFailsTheJob) {
  if (!yarn()) GTEST_SKIP() << "the local backend starts the AM at once: nothing can queue it";
  absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> yarn_client = cluster_->Yarn();
  ASSERT_TRUE(yarn_client.ok()) << yarn_client.status();
  // The cluster idle: the containers of the test before this one may still be counted until
  // the NodeManager's next heartbeats report them gone (bounded wait).
  absl::StatusOr<std::vector<hadoop::NodeReport>> nodes;
  for (int i = 0; i < 300; ++i) {
    nodes = (*yarn_client)->GetClusterNodes({hadoop::NodeState::kRunning});
    ASSERT_TRUE(nodes.ok()) << nodes.status();
    ASSERT_EQ(nodes->size(), 1u) << "one container can fill only a cluster of one NodeManager";
    if (nodes->front().num_containers == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const hadoop::NodeReport& node = nodes->front();
  ASSERT_EQ(node.num_containers, 0) << "the cluster is not idle after 30 s";
  // The holder's AM (256 MB) and its worker leave 128 MB: less than the second job's AM needs.
  const int64_t worker_mb = node.capability.memory_mb - 256 - 128;

  const fs::path marks = fs::path(runner_.work_dir()) / "holder";
  fs::create_directories(marks);
  const std::string holding = (marks / "holding").string();
  const std::string release = (marks / "release").string();
  TonyRunner holder;
  std::map<std::string, std::string> env = Env();
  const pid_t holder_pid = holder.Start(
      Submit({"tony.worker.instances=1", "tony.worker.memory=" + std::to_string(worker_mb) + "m",
              "tony.application.name=holder"},
             "touch " + holding + "; for i in $(seq 1500); do [ -e " + release +
                 " ] && exit 0; sleep 0.2; done; exit 1"),
      env);
  bool held = false;
  for (int i = 0; i < 1200 && !held; ++i) {
    held = fs::exists(holding);
    if (!held) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(held) << "the holder job never ran:\n" << holder.CurrentOutput();

  TonyResult r = Run(
      Submit({"tony.worker.instances=1", "tony.worker.memory=256m", "tony.am.startup-timeout=3000"},
             "echo never"));
  std::ofstream(release).put('\n');
  TonyResult held_job = holder.Wait(holder_pid, 180000);
  EXPECT_EQ(held_job.exit_code, 0) << held_job.Describe();

  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("the AM did not start within 3000 ms (tony.am.startup-timeout)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "KILLED");
  EXPECT_EQ(TaskStdout(r).find("never"), std::string::npos) << "a task of the queued job ran";
}

INSTANTIATE_TEST_SUITE_P(Backends, TonyScenariosE2eTest, ::testing::Values("local", "yarn"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tony::testing
