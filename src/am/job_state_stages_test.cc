// The job state machine's stages, dependency timeouts, late results and skewed tasks
// (job_state_test.cc has the rest).

#include "am/job_state_fixture.h"

namespace tony::am {
namespace {

TEST_F(JobStateTest, TrainingStageStartsOnlyAfterThePrepareStageSucceeded) {
  Init({{"tony.prep.instances", "1"},
        {"tony.worker.instances", "2"},
        {"tony.application.prepare-stage", "prep"},
        {"tony.application.training-stage", "worker"}});
  EXPECT_EQ(State({"worker", 0}), TaskState::kNew);
  EXPECT_EQ(State({"prep", 0}), TaskState::kRequested);
  Allocate({"prep", 0});
  EXPECT_EQ(Count<SendClusterSpec>(Register({"prep", 0}, 100)), 1) << "prep is a gang of one";
  EXPECT_EQ(job_->ClusterSpec().count("worker"), 0u);
  Actions actions = Exit({"prep", 0}, 0);
  EXPECT_EQ(Count<RequestContainer>(actions), 2);
  EXPECT_FALSE(job_->decided());
  Allocate({"worker", 0});
  Allocate({"worker", 1});
  EXPECT_EQ(Count<SendClusterSpec>(Register({"worker", 0}, 200)), 0);
  EXPECT_EQ(Count<SendClusterSpec>(Register({"worker", 1}, 201)), 2) << "the training gang";
  Exit({"worker", 0}, 0);
  Exit({"worker", 1}, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
}

TEST_F(JobStateTest, FailedPrepareStageFailsTheJob) {
  Init({{"tony.prep.instances", "1"},
        {"tony.worker.instances", "1"},
        {"tony.application.prepare-stage", "prep"},
        {"tony.application.training-stage", "worker"}});
  Allocate({"prep", 0});
  Register({"prep", 0}, 100);
  Exit({"prep", 0}, 2);
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(),
            "prepare-stage task prep:0 failed, so the training stage cannot start");
  EXPECT_EQ(State({"worker", 0}), TaskState::kFinished);
}

TEST_F(JobStateTest, ThePreprocessingJobRunsAloneFirstAndHandsOnItsParameters) {
  Init({{"tony.ps.instances", "1"},
        {"tony.worker.instances", "2"},
        {"tony.application.enable-preprocess", "true"}});
  const TaskRef pre{config::kPreprocessType, 0};
  EXPECT_EQ(State(pre), TaskState::kRequested);
  EXPECT_EQ(State({"ps", 0}), TaskState::kNew);
  EXPECT_EQ(State({"worker", 1}), TaskState::kNew);
  Allocate(pre);
  EXPECT_EQ(Count<SendClusterSpec>(Register(pre, 100)), 1) << "a gang of one";
  EXPECT_TRUE(job_->ClusterSpec().empty()) << "it is no part of the others' cluster";
  job_->SetModelParams(pre, "c_old", 0, "--stale");
  job_->SetModelParams(pre, "c_" + pre.ToString(), 1, "--stale");
  EXPECT_EQ(job_->model_params(), "") << "another container's or attempt's";
  job_->SetModelParams(pre, "c_" + pre.ToString(), 0, "--lr 0.1");
  ASSERT_EQ(job_->model_params(), "--lr 0.1");
  std::vector<TaskEvent> notices = job_->TakeNotices();
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].kind, "MODEL_PARAMS");
  EXPECT_EQ(notices[0].detail, "--lr 0.1");
  Actions actions = Exit(pre, 0);
  EXPECT_EQ(Count<RequestContainer>(actions), 3);
  job_->SetModelParams(pre, "c_" + pre.ToString(), 0, "--late");
  EXPECT_EQ(job_->model_params(), "--lr 0.1") << "the task has ended";
  StartAllOf({{"ps", 0}, {"worker", 0}, {"worker", 1}});
  EXPECT_EQ(job_->ClusterSpec().size(), 2u);
  EXPECT_EQ(job_->ClusterSpec().count(config::kPreprocessType), 0u);
  Exit({"worker", 0}, 0);
  Exit({"worker", 1}, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
}

TEST_F(JobStateTest, AFailedPreprocessingJobFailsTheJobAndNothingElseStarts) {
  Init({{"tony.worker.instances", "2"}, {"tony.application.enable-preprocess", "true"}});
  const TaskRef pre{config::kPreprocessType, 0};
  Allocate(pre);
  Register(pre, 100);
  job_->OnExecutorResult(pre, "c_" + pre.ToString(), 3, "last lines of stderr:\nno data");
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(),
            "task preprocess:0 failed (exit code 3): last lines of stderr:\nno data; the "
            "preprocessing job failed, so no other task starts");
  EXPECT_EQ(State({"worker", 0}), TaskState::kFinished);
  EXPECT_EQ(State({"worker", 1}), TaskState::kFinished);
}

TEST_F(JobStateTest, WithStagesThePreprocessingJobComesBeforeThePrepareStage) {
  Init({{"tony.prep.instances", "1"},
        {"tony.worker.instances", "1"},
        {"tony.application.prepare-stage", "prep"},
        {"tony.application.training-stage", "worker"},
        {"tony.application.enable-preprocess", "true"}});
  const TaskRef pre{config::kPreprocessType, 0};
  EXPECT_EQ(State({"prep", 0}), TaskState::kNew);
  Allocate(pre);
  Register(pre, 100);
  EXPECT_EQ(Count<RequestContainer>(Exit(pre, 0)), 1) << "the prepare stage";
  EXPECT_EQ(State({"prep", 0}), TaskState::kRequested);
  EXPECT_EQ(State({"worker", 0}), TaskState::kNew);
  Allocate({"prep", 0});
  Register({"prep", 0}, 101);
  EXPECT_EQ(Count<RequestContainer>(Exit({"prep", 0}, 0)), 1) << "the training stage";
  Allocate({"worker", 0});
  Register({"worker", 0}, 102);
  Exit({"worker", 0}, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
}

// The allocation timeout of a later stage counts from its start, not the job's.
TEST_F(JobStateTest, ALaterStagesAllocationTimeoutCountsFromItsStart) {
  Init({{"tony.worker.instances", "1"},
        {"tony.container.allocation.timeout", "1000"},
        {"tony.application.enable-preprocess", "true"}});
  const TaskRef pre{config::kPreprocessType, 0};
  Allocate(pre);
  Register(pre, 100);
  clock_.Advance(5000);  // a long preprocessing job
  job_->OnTick();
  Exit(pre, 0);
  clock_.Advance(999);
  job_->OnTick();
  EXPECT_FALSE(job_->decided()) << job_->diagnostics();
  clock_.Advance(1);
  job_->OnTick();
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_NE(job_->diagnostics().find("worker:0 (no container)"), std::string::npos)
      << job_->diagnostics();
}

TEST_F(JobStateTest, DependencyTimeoutFailsTheJobWhenAnEvaluatorOutlivesTraining) {
  Init({{"tony.worker.instances", "1"},
        {"tony.evaluator.instances", "1"},
        {"tony.application.group.training", "worker"},
        {"tony.application.dependency.evaluator.timeout.after.training", "10"}});
  StartAll();
  Exit({"worker", 0}, 0);
  EXPECT_FALSE(job_->decided()) << "the evaluator is tracked and still runs";
  job_->OnTick();  // notices that the group is done
  clock_.Advance(9999);
  job_->OnTick();
  EXPECT_FALSE(job_->decided());
  clock_.Advance(1);
  Actions actions = job_->OnTick();
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(),
            "evaluator:0 still ran 10 s after group training (worker) finished "
            "(tony.application.dependency.evaluator.timeout.after.training)");
  EXPECT_EQ(Count<StopContainer>(actions), 1);
}

// TonY's `.ignored`: past the timeout the job stops waiting for the late tasks, which run on
// until it ends; here nothing else runs, so it ends at once and stops them.
TEST_F(JobStateTest, IgnoredDependencyTimeoutEndsTheWaitAndTheJobSucceeds) {
  Init({{"tony.worker.instances", "1"},
        {"tony.evaluator.instances", "1"},
        {"tony.application.group.training", "worker"},
        {"tony.application.dependency.evaluator.timeout.after.training", "1"},
        {"tony.application.dependency.evaluator.timeout.after.training.ignored", "true"}});
  StartAll();
  Exit({"worker", 0}, 0);
  job_->OnTick();
  clock_.Advance(999);
  EXPECT_EQ(Count<StopContainer>(job_->OnTick()), 0);
  clock_.Advance(1);
  Actions actions = job_->OnTick();
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
  ASSERT_EQ(Count<StopContainer>(actions), 1);
  bool noted = false;
  for (const TaskEvent& event : job_->events()) noted = noted || event.kind == "DEPENDENCY_TIMEOUT";
  EXPECT_TRUE(noted);
  job_->OnContainerCompleted("c_evaluator:0", 143, "", false);
  EXPECT_EQ(State({"evaluator", 0}), TaskState::kFinished);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
}

// TonY's scenario: the tasks no longer waited for still fail the job by the usual rules while it
// runs (stop-on-failure here), and the job still waits for the other tracked tasks.
TEST_F(JobStateTest, TasksPastAnIgnoredTimeoutRunOnAndTheirFailureStillCounts) {
  Init({{"tony.chief.instances", "1"},
        {"tony.worker.instances", "2"},
        {"tony.evaluator.instances", "1"},
        {"tony.application.stop-on-failure-jobtypes", "worker"},
        {"tony.application.group.A", "chief"},
        {"tony.application.dependency.worker.timeout.after.A", "5"},
        {"tony.application.dependency.worker.timeout.after.A.ignored", "true"}});
  StartAll();
  Exit({"chief", 0}, 0);
  job_->OnTick();
  clock_.Advance(5000);
  Actions actions = job_->OnTick();
  EXPECT_FALSE(job_->decided()) << "the evaluator is tracked and still runs";
  EXPECT_EQ(Count<StopContainer>(actions), 0) << "the workers run on";
  EXPECT_EQ(State({"worker", 0}), TaskState::kRunning);
  clock_.Advance(5000);
  Exit({"worker", 0}, 1);
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_NE(job_->diagnostics().find("stop-on-failure-jobtypes"), std::string::npos)
      << job_->diagnostics();
}

// A result from an executor that was itself signalled (YARN's NodeManager ending the container)
// waits for the container's end, which says why when the resource manager decided.
TEST_F(JobStateTest, SignalledExecutorsResultWaitsForTheResourceManagersStatus) {
  Init({{"tony.worker.instances", "2"},
        {"tony.task.heartbeat-interval-ms", "100"},
        {"tony.task.max-missed-heartbeats", "5"}});
  StartAll();
  Actions actions =
      job_->OnExecutorResult({"worker", 1}, "c_worker:1", 143, "stopped: signal 15", true);
  EXPECT_TRUE(actions.empty());
  EXPECT_EQ(State({"worker", 1}), TaskState::kRunning);
  // Its executor is gone and sends no heartbeats; that is not a lost heartbeat.
  clock_.Advance(1000);
  EXPECT_FALSE(job_->OnHeartbeat({"worker", 0}, "c_worker:0", 0));
  job_->OnTick();
  EXPECT_EQ(State({"worker", 1}), TaskState::kRunning);
  job_->OnContainerCompleted("c_worker:1", -104,
                             "Container is running beyond the 'PHYSICAL' memory limit", false);
  EXPECT_EQ(State({"worker", 1}), TaskState::kFailed);
  EXPECT_EQ(*job_->Find({"worker", 1})->exit_code, -104);
  EXPECT_EQ(job_->Find({"worker", 1})->diagnostics,
            "Container is running beyond the 'PHYSICAL' memory limit");
}

TEST_F(JobStateTest, SignalledExecutorsResultStandsWhenTheContainersEndAddsNothing) {
  Init({{"tony.worker.instances", "2"}});
  StartAll();
  job_->OnExecutorResult({"worker", 1}, "c_worker:1", 143, "stopped: signal 15", true);
  job_->OnContainerCompleted("c_worker:1", 143, "", false);
  EXPECT_EQ(*job_->Find({"worker", 1})->exit_code, 143);
  EXPECT_EQ(job_->Find({"worker", 1})->diagnostics, "stopped: signal 15");
}

TEST_F(JobStateTest, SignalledExecutorsResultStandsWhenTheContainersEndNeverComes) {
  Init({{"tony.worker.instances", "2"}});
  StartAll();
  job_->OnExecutorResult({"worker", 1}, "c_worker:1", 137, "killed", true);
  clock_.Advance(kProvisionalResultWaitMs - 1);
  EXPECT_FALSE(job_->OnHeartbeat({"worker", 0}, "c_worker:0", 0));
  job_->OnTick();
  EXPECT_EQ(State({"worker", 1}), TaskState::kRunning);
  clock_.Advance(1);
  EXPECT_FALSE(job_->OnHeartbeat({"worker", 0}, "c_worker:0", 0));
  job_->OnTick();
  EXPECT_EQ(State({"worker", 1}), TaskState::kFailed);
  EXPECT_EQ(*job_->Find({"worker", 1})->exit_code, 137);
}

// TonY's testTaskCompletionNotificationDelayed: a task that succeeded is not watched for heartbeats
// any more, however late its container's end comes; the job succeeds.
TEST_F(JobStateTest, ASucceededTaskIsNotLostWhileItsContainersEndIsLate) {
  Init({{"tony.worker.instances", "2"},
        {"tony.task.heartbeat-interval-ms", "100"},
        {"tony.task.max-missed-heartbeats", "5"}});
  StartAll();
  Exit({"worker", 1}, 0);
  EXPECT_EQ(State({"worker", 1}), TaskState::kSucceeded);
  clock_.Advance(1000);  // ten heartbeat intervals without worker:1's container end
  EXPECT_FALSE(job_->OnHeartbeat({"worker", 0}, "c_worker:0", 0));
  job_->OnTick();
  EXPECT_EQ(State({"worker", 1}), TaskState::kSucceeded);
  EXPECT_EQ(job_->state(), JobState::kRunning);
  Exit({"worker", 0}, 0);
  job_->OnContainerCompleted("c_worker:1", 0, "", false);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
  EXPECT_EQ(State({"worker", 1}), TaskState::kSucceeded);
}

// TonY's testPSSkewedWorkerTrainingShouldPass: the chief reports long after the other workers
// while it keeps heartbeating; the job waits for it and succeeds, the ps is stopped.
TEST_F(JobStateTest, AChiefThatFinishesLongAfterTheOthersStillDecides) {
  Init({{"tony.worker.instances", "2"},
        {"tony.ps.instances", "1"},
        {"tony.task.heartbeat-interval-ms", "100"},
        {"tony.task.max-missed-heartbeats", "5"}});
  StartAll();
  Exit({"worker", 1}, 0);
  for (int i = 0; i < 300; ++i) {  // 30 s of heartbeats from the chief and the ps
    clock_.Advance(100);
    EXPECT_FALSE(job_->OnHeartbeat({"worker", 0}, "c_worker:0", 0));
    EXPECT_FALSE(job_->OnHeartbeat({"ps", 0}, "c_ps:0", 0));
    job_->OnTick();
  }
  EXPECT_EQ(job_->state(), JobState::kRunning);
  Actions actions = Exit({"worker", 0}, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
  EXPECT_EQ(Count<StopContainer>(actions), 1) << "the ps";
}

}  // namespace
}  // namespace tony::am
