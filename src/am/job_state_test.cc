#include "am/job_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "am/job_state_fixture.h"
#include "common/strings.h"
#include "config/key_catalog.h"

namespace tony::am {
namespace {

TEST_F(JobStateTest, GangReleasesTheClusterSpecOnlyWhenEveryTaskRegistered) {
  Init({{"tony.worker.instances", "2"}, {"tony.ps.instances", "1"}});
  for (const TaskRecord& task : std::vector<TaskRecord>(job_->tasks())) Allocate(task.ref);
  EXPECT_EQ(Count<SendClusterSpec>(Register({"worker", 0}, 5000)), 0);
  EXPECT_EQ(Count<SendClusterSpec>(Register({"ps", 0}, 5001)), 0);
  EXPECT_FALSE(job_->ClusterSpecReleased({"worker", 0}));
  Actions last = Register({"worker", 1}, 5002);
  EXPECT_EQ(Count<SendClusterSpec>(last), 3);
  EXPECT_TRUE(job_->ClusterSpecReleased({"worker", 0}));
  auto spec = job_->ClusterSpec();
  EXPECT_EQ(spec["worker"], (std::vector<std::string>{"h:5000", "h:5002"}));
  EXPECT_EQ(spec["ps"], (std::vector<std::string>{"h:5001"}));
}

TEST_F(JobStateTest, FcfsReleasesEachTaskAtRegistration) {
  Init({{"tony.worker.instances", "2"}, {"tony.application.distributed-mode", "FCFS"}});
  Allocate({"worker", 0});
  Allocate({"worker", 1});
  EXPECT_EQ(Count<SendClusterSpec>(Register({"worker", 1}, 7000)), 1);
  EXPECT_TRUE(job_->ClusterSpecReleased({"worker", 1}));
  EXPECT_FALSE(job_->ClusterSpecReleased({"worker", 0}));
}

TEST_F(JobStateTest, SurplusAndStaleContainers) {
  Init({{"tony.worker.instances", "1"}});
  Allocate({"worker", 0});
  Actions surplus = job_->OnContainerAllocated("extra", "worker", "h", "/l");
  EXPECT_EQ(Count<ReleaseContainer>(surplus), 1);
  EXPECT_FALSE(job_->OnTaskRegistered({"worker", 0}, "extra", "h", 1).ok());
  EXPECT_FALSE(job_->OnTaskRegistered({"worker", 7}, "c_worker:0", "h", 1).ok());
  EXPECT_EQ(State({"worker", 0}), TaskState::kAllocated);
}

TEST_F(JobStateTest, WorkerFailureWithSuccessfulChiefSucceedsAndNamesTheWorker) {
  Init({{"tony.worker.instances", "3"}});
  StartAll();
  Exit({"worker", 1}, 3);
  EXPECT_FALSE(job_->decided());
  Exit({"worker", 2}, 0);
  Actions actions = Exit({"worker", 0}, 0);
  EXPECT_EQ(Count<JobDecided>(actions), 1);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
  EXPECT_EQ(job_->diagnostics(), "the chief succeeded; failed tasks: worker:1");
  EXPECT_EQ(State({"worker", 1}), TaskState::kFailed);
}

TEST_F(JobStateTest, FailOnWorkerFailureFailsAtOnceAndStopsTheRest) {
  Init({{"tony.worker.instances", "3"},
        {"tony.application.fail-on-worker-failure-enabled", "true"}});
  StartAll();
  Actions actions = Exit({"worker", 2}, 3);
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(),
            "task worker:2 failed (exit code 3): boom; "
            "tony.application.fail-on-worker-failure-enabled is true");
  EXPECT_EQ(Count<StopContainer>(actions), 2);
  EXPECT_TRUE(job_->Find({"worker", 0})->stop_requested);
  job_->OnContainerCompleted("c_worker:0", 143, "", false);
  EXPECT_EQ(State({"worker", 0}), TaskState::kFinished);
  EXPECT_EQ(job_->state(), JobState::kFailed);
}

TEST_F(JobStateTest, ChiefFailureFailsAtOnce) {
  Init({{"tony.chief.instances", "1"}, {"tony.worker.instances", "2"}});
  StartAll();
  Exit({"chief", 0}, 1);
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(), "chief chief:0 failed (exit code 1): boom");
}

TEST_F(JobStateTest, UntrackedPsIsStoppedWhenWorkersFinish) {
  Init({{"tony.worker.instances", "2"}, {"tony.ps.instances", "1"}});
  StartAll();
  Exit({"worker", 0}, 0);
  Actions actions = Exit({"worker", 1}, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
  ASSERT_EQ(Count<StopContainer>(actions), 1);
  EXPECT_EQ(std::get<StopContainer>(actions[0]).container_id, "c_ps:0");
  job_->OnContainerCompleted("c_ps:0", 143, "", false);
  EXPECT_EQ(State({"ps", 0}), TaskState::kFinished);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
}

TEST_F(JobStateTest, PsFailureFailsTheJob) {
  Init({{"tony.worker.instances", "1"}, {"tony.ps.instances", "1"}});
  StartAll();
  Exit({"ps", 0}, 137);
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(),
            "task ps:0 failed (killed by signal 9): boom; ps is in "
            "tony.application.stop-on-failure-jobtypes");
}

TEST_F(JobStateTest, SidecarFailureIsIgnored) {
  Init({{"tony.worker.instances", "1"}, {"tony.tensorboard.instances", "1"}});
  StartAll();
  Exit({"tensorboard", 0}, 2);
  EXPECT_FALSE(job_->decided());
  Exit({"worker", 0}, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
}

TEST_F(JobStateTest, ContainerExitBeforeRegistrationFailsTheJobAtOnce) {
  Init({{"tony.worker.instances", "2"}});
  Allocate({"worker", 0});
  Allocate({"worker", 1});
  job_->OnContainerCompleted("c_worker:1", 127, "exec failed", false);
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(),
            "task worker:1 failed (exit code 127): container c_worker:1 exited before its "
            "executor registered (exit code 127): exec failed");
}

TEST_F(JobStateTest, AllocationTimeoutNamesTheMissingTasks) {
  Init({{"tony.worker.instances", "3"}, {"tony.container.allocation.timeout", "5000"}});
  Allocate({"worker", 0});
  Allocate({"worker", 1});
  Register({"worker", 0}, 100);
  clock_.Advance(4999);
  EXPECT_TRUE(job_->OnTick().empty());
  clock_.Advance(1);
  job_->OnTick();
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(),
            "not every task registered within 5000 ms (tony.container.allocation.timeout); "
            "missing: worker:1 (container c_worker:1 not registered), worker:2 (no container)");
  EXPECT_EQ(State({"worker", 2}), TaskState::kFinished);
}

TEST_F(JobStateTest, RegistrationTimeout) {
  Init({{"tony.worker.instances", "1"}, {"tony.container.registration.timeout", "1000"}});
  clock_.Advance(5000);
  job_->OnTick();
  EXPECT_FALSE(job_->decided()) << "the clock starts at allocation";
  Allocate({"worker", 0});
  clock_.Advance(1000);
  job_->OnTick();
  EXPECT_EQ(job_->diagnostics(),
            "task worker:0 (container c_worker:0) did not register within 1000 ms "
            "(tony.container.registration.timeout)");
}

TEST_F(JobStateTest, TheClustersEndsAndTransientExitCodesUseNoRestart) {
  Init({{"tony.worker.instances", "1"},
        {"tony.worker.max-restarts", "1"},
        {"tony.worker.restart-policy", "task"},
        {"tony.worker.restart-backoff-ms", "0"},
        {"tony.worker.transient-exit-codes", "75, 99"}});
  StartAll();
  const TaskRef worker{"worker", 0};
  auto end_with = [&](int code) {
    const std::string container = job_->Find(worker)->container_id;
    job_->OnContainerCompleted(container, code, "the cluster's words", false);
    if (job_->decided() || job_->Find(worker)->state != TaskState::kRequested) return;
    Allocate(worker);
    Register(worker, 3000);
  };
  // Preempted, lost with its node, its disks failed, a transient code: restarted every time,
  // and the one restart of its own is still there.
  for (int code : {kExitPreempted, kExitAborted, kExitDisksFailed, 75, 99}) end_with(code);
  EXPECT_EQ(job_->state(), JobState::kRunning);
  EXPECT_EQ(job_->Find(worker)->attempt, 5);
  EXPECT_EQ(job_->Find(worker)->restarts_used, 0);
  EXPECT_EQ(job_->events().front().detail,
            "attempt 0 failed (preempted); restarting in 0 ms (not counted against "
            "tony.worker.max-restarts)");
  // Over memory is the task's own: it uses the restart, and the next failure ends the job.
  end_with(kExitOverPhysicalMemory);
  EXPECT_EQ(job_->Find(worker)->restarts_used, 1);
  EXPECT_EQ(job_->state(), JobState::kRunning);
  end_with(3);
  EXPECT_EQ(job_->state(), JobState::kFailed);
  // Even without a restart budget a preempted task comes back.
  Init({{"tony.worker.instances", "1"}, {"tony.worker.restart-backoff-ms", "0"}});
  StartAll();
  end_with(kExitPreempted);
  EXPECT_EQ(job_->state(), JobState::kRunning);
  EXPECT_EQ(State(worker), TaskState::kRunning);
  EXPECT_EQ(ExitText(kExitPreempted), "preempted");
  EXPECT_EQ(ExitText(kExitOverPhysicalMemory), "killed over its memory");
}

TEST_F(JobStateTest, FreeRestartsAreBoundedThenCountLikeAnyOther) {
  Init({{"tony.worker.instances", "1"},
        {"tony.worker.max-restarts", "1"},
        {"tony.worker.restart-policy", "task"},
        {"tony.worker.restart-backoff-ms", "0"},
        {"tony.worker.transient-exit-codes", "75"}});
  StartAll();
  for (int i = 0; i <= kMaxFreeRestarts + 1 && !job_->decided(); ++i) {
    Exit({"worker", 0}, 75);
    if (job_->decided()) break;
    Allocate({"worker", 0});
    Register({"worker", 0}, 3000);
  }
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->Find({"worker", 0})->free_restarts, kMaxFreeRestarts);
  EXPECT_EQ(job_->Find({"worker", 0})->restarts_used, 1) << "then the budget of its own";
}

TEST_F(JobStateTest, ApplicationTimeout) {
  Init({{"tony.worker.instances", "1"}, {"tony.application.timeout", "2000"}});
  StartAll();
  clock_.Advance(2000);
  job_->OnTick();
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(),
            "the application timed out after 2000 ms (tony.application.timeout)");
}

TEST_F(JobStateTest, KillWinsAndLaterEventsDoNotChangeTheFinalStatus) {
  Init({{"tony.worker.instances", "2"}});
  StartAll();
  Actions actions = job_->Kill("killed by the user");
  EXPECT_EQ(job_->state(), JobState::kKilled);
  EXPECT_EQ(Count<StopContainer>(actions), 2);
  EXPECT_TRUE(job_->OnHeartbeat({"worker", 0}, "c_worker:0", 0)) << "told to stop";
  Exit({"worker", 0}, 1);
  EXPECT_EQ(State({"worker", 0}), TaskState::kFinished);
  EXPECT_EQ(job_->state(), JobState::kKilled);
  EXPECT_EQ(job_->diagnostics(), "killed by the user");
}

TEST_F(JobStateTest, SingleNodeRunsOneTask) {
  Init({});
  ASSERT_EQ(job_->tasks().size(), 1u);
  StartAll();
  Exit({"worker", 0}, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
}

TEST_F(JobStateTest, VersionMovesOnEveryChange) {
  Init({{"tony.worker.instances", "1"}});
  const int64_t before = job_->version();
  Allocate({"worker", 0});
  EXPECT_GT(job_->version(), before);
}

TEST_F(JobStateTest, FailedTaskIsRestartedWithTheSameTypeAndIndex) {
  Init({{"tony.worker.instances", "2"},
        {"tony.worker.max-restarts", "1"},
        {"tony.worker.restart-policy", "task"},
        {"tony.worker.restart-backoff-ms", "500"}});
  StartAll();
  Actions actions = Exit({"worker", 1}, 3);
  EXPECT_FALSE(job_->decided());
  const TaskRecord* task = job_->Find({"worker", 1});
  EXPECT_EQ(task->state, TaskState::kNew);
  EXPECT_EQ(task->attempt, 1);
  ASSERT_EQ(task->previous_attempts.size(), 1u);
  EXPECT_EQ(task->previous_attempts[0].exit_code, 3);
  EXPECT_EQ(task->previous_attempts[0].container_id, "c_worker:1");
  ASSERT_EQ(Count<StopContainer>(actions), 1) << "the old container must not linger";
  ASSERT_EQ(job_->events().size(), 1u);
  EXPECT_EQ(job_->events()[0].kind, "RESTARTED");
  EXPECT_EQ(job_->events()[0].attempt, 1);

  clock_.Advance(499);
  EXPECT_EQ(Count<RequestContainer>(job_->OnTick()), 0) << "the backoff has not passed";
  clock_.Advance(1);
  EXPECT_EQ(Count<RequestContainer>(job_->OnTick()), 1);
  EXPECT_EQ(Count<LaunchTask>(job_->OnContainerAllocated("c_new", "worker", "h2", "/l")), 1);
  // The gang was released long ago: the new attempt gets the spec as soon as it registers,
  // with its new address in it.
  absl::StatusOr<Actions> registered = job_->OnTaskRegistered({"worker", 1}, "c_new", "h2", 9999);
  ASSERT_TRUE(registered.ok());
  EXPECT_EQ(Count<SendClusterSpec>(*registered), 1);
  EXPECT_EQ(job_->ClusterSpec()["worker"][1], "h2:9999");
  // A late word from the old container changes nothing.
  job_->OnContainerCompleted("c_worker:1", 3, "", false);
  EXPECT_EQ(State({"worker", 1}), TaskState::kRunning);

  job_->OnExecutorResult({"worker", 1}, "c_new", 0, "");
  Exit({"worker", 0}, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
}

TEST_F(JobStateTest, TaskThatFailsMoreOftenThanAllowedFailsTheJob) {
  Init({{"tony.worker.instances", "2"},
        {"tony.worker.max-restarts", "1"},
        {"tony.worker.restart-policy", "task"},
        {"tony.worker.restart-backoff-ms", "0"}});
  StartAll();
  Exit({"worker", 0}, 3);
  job_->OnTick();
  job_->OnContainerAllocated("c_again", "worker", "h", "/l");
  ASSERT_TRUE(job_->OnTaskRegistered({"worker", 0}, "c_again", "h", 1234).ok());
  job_->OnExecutorResult({"worker", 0}, "c_again", 4, "again");
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(), "chief worker:0 failed (exit code 4): again");
}

// The history's events: every change of a task's state, in order, with the attempt, the
// container and, for an ended attempt, its exit code and diagnostics; a restart is the old
// attempt's end and the new attempt's start.
TEST_F(JobStateTest, TransitionsRecordEveryAttemptInOrder) {
  Init({{"tony.worker.instances", "1"},
        {"tony.worker.max-restarts", "1"},
        {"tony.worker.restart-policy", "task"},
        {"tony.worker.restart-backoff-ms", "0"}});
  StartAll();
  clock_.Advance(10);
  Exit({"worker", 0}, 3);
  job_->OnContainerAllocated("c_again", "worker", "h2", "/l");
  ASSERT_TRUE(job_->OnTaskRegistered({"worker", 0}, "c_again", "h2", 1234).ok());
  job_->OnExecutorResult({"worker", 0}, "c_again", 0, "");
  ASSERT_EQ(job_->state(), JobState::kSucceeded);

  std::vector<TaskTransition> seen = job_->TakeTransitions();
  std::vector<std::string> lines;
  lines.reserve(seen.size());
  for (const TaskTransition& t : seen) {
    lines.push_back(StrCat(t.task.ToString(), "#", t.attempt, " ", ToString(t.from), ">",
                           ToString(t.to), " ", t.container_id,
                           t.exit_code ? StrCat(" exit ", *t.exit_code) : "",
                           t.diagnostics.empty() ? "" : StrCat(" (", t.diagnostics, ")")));
  }
  EXPECT_THAT(
      lines,
      ::testing::ElementsAre(
          "worker:0#0 NEW>REQUESTED ", "worker:0#0 REQUESTED>ALLOCATED c_worker:0",
          "worker:0#0 ALLOCATED>REGISTERED c_worker:0", "worker:0#0 REGISTERED>RUNNING c_worker:0",
          "worker:0#0 RUNNING>FAILED c_worker:0 exit 3 (boom)",
          "worker:0#1 FAILED>NEW  (attempt 0 failed (exit code 3); restarting in 0 ms)",
          "worker:0#1 NEW>REQUESTED ", "worker:0#1 REQUESTED>ALLOCATED c_again",
          "worker:0#1 ALLOCATED>REGISTERED c_again", "worker:0#1 REGISTERED>RUNNING c_again",
          "worker:0#1 RUNNING>SUCCEEDED c_again exit 0"));
  EXPECT_GE(seen[4].wall_ms, seen[3].wall_ms + 10);
  EXPECT_TRUE(job_->TakeTransitions().empty()) << "taken once";
}

TEST_F(JobStateTest, NoRestartWithoutMaxRestarts) {
  Init({{"tony.worker.instances", "1"}});
  StartAll();
  Exit({"worker", 0}, 3);
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_TRUE(job_->events().empty());
}

}  // namespace
}  // namespace tony::am
