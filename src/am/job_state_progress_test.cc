// The state machine's heartbeats (job_state_progress.cc): memory samples, lost and stalled
// heartbeats, progress, hangs and stragglers.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "am/job_state.h"
#include "am/job_state_fixture.h"
#include "common/strings.h"

namespace tony::am {
namespace {

// Two workers, each restarted once (alone) when it fails, hung after 15 s without progress.
std::vector<std::pair<std::string, std::string>> TwoWorkersWithAHangTimeout() {
  return {{"tony.worker.instances", "2"},
          {"tony.worker.max-restarts", "1"},
          {"tony.worker.restart-policy", "task"},
          {"tony.worker.restart-backoff-ms", "0"},
          {"tony.task.hang-timeout-ms", "15000"}};
}

TEST_F(JobStateTest, PeakMemoryIsTheLargestSampleOfTheCurrentContainer) {
  Init({{"tony.worker.instances", "1"}});
  StartAll();
  EXPECT_FALSE(job_->OnHeartbeat({"worker", 0}, "c_worker:0", 3 << 20));
  job_->OnMemorySample({"worker", 0}, "c_worker:0", 7 << 20);  // the executor's final report
  EXPECT_FALSE(job_->OnHeartbeat({"worker", 0}, "c_worker:0", 5 << 20));
  job_->OnMemorySample({"worker", 0}, "stale_container", 9 << 20);
  EXPECT_EQ(job_->Find({"worker", 0})->peak_rss_bytes, 7 << 20);
  // The heartbeats of the task's container count (/metrics); a stale container's do not.
  EXPECT_TRUE(job_->OnHeartbeat({"worker", 0}, "stale_container", 1 << 20));
  EXPECT_EQ(job_->Find({"worker", 0})->heartbeats, 2);
}

TEST_F(JobStateTest, LostHeartbeatsFailTheTask) {
  Init({{"tony.worker.instances", "2"},
        {"tony.task.heartbeat-interval-ms", "100"},
        {"tony.task.max-missed-heartbeats", "5"}});
  StartAll();
  clock_.Advance(400);
  EXPECT_FALSE(job_->OnHeartbeat({"worker", 0}, "c_worker:0", 1 << 20));
  clock_.Advance(101);
  Actions actions = job_->OnTick();
  EXPECT_EQ(State({"worker", 1}), TaskState::kFailed);
  EXPECT_EQ(*job_->Find({"worker", 1})->exit_code, kExitLostHeartbeat);
  EXPECT_EQ(job_->Find({"worker", 1})->diagnostics, "no heartbeat for 501 ms (5 x 100 ms allowed)");
  EXPECT_EQ(State({"worker", 0}), TaskState::kRunning);
  EXPECT_EQ(job_->Find({"worker", 0})->peak_rss_bytes, 1 << 20);
  EXPECT_GE(Count<StopContainer>(actions), 1);
  clock_.Advance(500);
  job_->OnTick();
  EXPECT_EQ(job_->state(), JobState::kFailed) << "worker:0 is the chief and was lost too";
}

TEST_F(JobStateTest, TheAmsOwnStallIsNotBlamedOnItsTasks) {
  Init({{"tony.worker.instances", "2"},
        {"tony.task.heartbeat-interval-ms", "1000"},
        {"tony.task.max-missed-heartbeats", "5"}});
  StartAll();
  job_->OnTick();
  // The AM is stopped for 45 s: no tick runs, the heartbeats wait in its queue.
  clock_.Advance(45000);
  job_->OnTick();
  EXPECT_EQ(job_->last_stall_ms(), 45000);
  EXPECT_EQ(State({"worker", 0}), TaskState::kRunning);
  EXPECT_EQ(State({"worker", 1}), TaskState::kRunning);
  // Running again: worker:0 heartbeats, worker:1 never does, and is lost 5 intervals later.
  for (int second = 1; second <= 6; ++second) {
    clock_.Advance(1000);
    EXPECT_FALSE(job_->OnHeartbeat({"worker", 0}, "c_worker:0", 1 << 20));
    job_->OnTick();
  }
  EXPECT_EQ(State({"worker", 0}), TaskState::kRunning);
  EXPECT_EQ(State({"worker", 1}), TaskState::kFailed);
  EXPECT_EQ(job_->Find({"worker", 1})->diagnostics,
            "no heartbeat for 6000 ms (5 x 1000 ms allowed)");
}

TEST_F(JobStateTest, AStallBeforeTheFirstTickIsTheAmsToo) {
  Init({{"tony.worker.instances", "1"},
        {"tony.task.heartbeat-interval-ms", "100"},
        {"tony.task.max-missed-heartbeats", "20"}});
  // The tasks register and run, and the AM is stopped before its loop ticked even once.
  StartAll();
  clock_.Advance(4000);
  job_->OnTick();
  EXPECT_EQ(job_->last_stall_ms(), 4000);
  EXPECT_EQ(State({"worker", 0}), TaskState::kRunning);
}

HeartbeatReport Quiet(int64_t quiet_ms, int64_t step = -1) {
  HeartbeatReport report;
  report.quiet_ms = quiet_ms;
  if (step >= 0) report.progress = {true, step, 100, {{"loss", 0.5}}};
  return report;
}

TEST_F(JobStateTest, ATaskWithoutProgressForTheHangTimeoutIsHungStoppedAndRestarted) {
  Init(TwoWorkersWithAHangTimeout());
  StartAll();
  // Progress shows in the task's record.
  HeartbeatAnswer answer = job_->OnHeartbeat({"worker", 0}, "c_worker:0", Quiet(0, 7));
  EXPECT_FALSE(answer.stop);
  EXPECT_EQ(job_->Find({"worker", 0})->progress.step, 7);
  EXPECT_EQ(job_->Find({"worker", 0})->progress.total, 100);
  EXPECT_EQ(job_->Find({"worker", 0})->progress.metrics.at("loss"), 0.5);
  EXPECT_EQ(job_->Find({"worker", 0})->progress_wall_ms, clock_.WallMs());
  // Quiet, but not yet for the timeout.
  clock_.Advance(14999);
  answer = job_->OnHeartbeat({"worker", 0}, "c_worker:0", Quiet(14999, 7));
  EXPECT_FALSE(answer.stop);
  EXPECT_FALSE(answer.dump_stacks);
  EXPECT_EQ(job_->Find({"worker", 0})->progress_wall_ms, clock_.WallMs() - 14999);
  // Past it: hung. Told to write its stacks and stop; the rest of the gang to write theirs.
  clock_.Advance(1000);
  answer = job_->OnHeartbeat({"worker", 0}, "c_worker:0", Quiet(15999, 7));
  EXPECT_TRUE(answer.stop);
  EXPECT_TRUE(answer.dump_stacks);
  EXPECT_EQ(answer.reason,
            "worker:0 is hung: no progress for 15999 ms (tony.task.hang-timeout-ms = 15000), at "
            "step 7");
  EXPECT_EQ(job_->events().back().kind, "HUNG");
  answer = job_->OnHeartbeat({"worker", 1}, "c_worker:1", Quiet(0));
  EXPECT_FALSE(answer.stop);
  EXPECT_TRUE(answer.dump_stacks);
  EXPECT_EQ(answer.reason, job_->Find({"worker", 0})->hung);
  EXPECT_FALSE(job_->OnHeartbeat({"worker", 1}, "c_worker:1", Quiet(0)).dump_stacks) << "once";
  // Its end, after the stop's signal, is a failure for its hang: the restart policy applies.
  Actions actions =
      job_->OnExecutorResult({"worker", 0}, "c_worker:0", 143, "stopped: worker:0 is hung");
  const TaskRecord* task = job_->Find({"worker", 0});
  EXPECT_EQ(task->attempt, 1);
  ASSERT_EQ(task->previous_attempts.size(), 1u);
  EXPECT_EQ(task->previous_attempts[0].exit_code, kExitHung);
  EXPECT_EQ(task->previous_attempts[0].diagnostics, answer.reason);
  EXPECT_EQ(Count<RequestContainer>(actions), 1);
  EXPECT_TRUE(task->hung.empty());
  EXPECT_FALSE(task->progress.has_step);
  EXPECT_EQ(job_->state(), JobState::kRunning);
  // The new attempt hangs too, and no restart is left: the job fails, saying why.
  Allocate({"worker", 0});
  Register({"worker", 0}, 2000);
  clock_.Advance(20000);
  EXPECT_TRUE(job_->OnHeartbeat({"worker", 0}, "c_worker:0", Quiet(20000)).stop);
  job_->OnExecutorResult({"worker", 0}, "c_worker:0", 137, "");
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(ExitText(*job_->Find({"worker", 0})->exit_code), "hung");
  EXPECT_NE(job_->diagnostics().find("worker:0 failed (hung): worker:0 is hung: no progress for "
                                     "20000 ms"),
            std::string::npos)
      << job_->diagnostics();
}

// The executor does not wait for a heartbeat's answer, which comes at the AM's next tick: a
// heartbeat may be taken up after the result its executor sent later. It still counts as a sign
// of life, but what it carries is older than what the AM knows: a task whose provisional result
// waits for its container's end is not found hung by it, and an earlier attempt's progress does
// not replace the current one's.
TEST_F(JobStateTest, AHeartbeatOvertakenByTheTasksResultChangesNothing) {
  Init(TwoWorkersWithAHangTimeout());
  StartAll();
  job_->OnHeartbeat({"worker", 0}, "c_worker:0", Quiet(0, 7));
  clock_.Advance(16000);
  job_->OnExecutorResult({"worker", 0}, "c_worker:0", 1, "boom", /*provisional=*/true);
  ASSERT_TRUE(job_->Find({"worker", 0})->pending_result.has_value());
  const size_t events = job_->events().size();
  HeartbeatAnswer answer = job_->OnHeartbeat({"worker", 0}, "c_worker:0", Quiet(16000, 7));
  EXPECT_FALSE(answer.dump_stacks);
  EXPECT_TRUE(job_->Find({"worker", 0})->hung.empty());
  EXPECT_EQ(job_->events().size(), events);
  EXPECT_EQ(job_->Find({"worker", 0})->last_heartbeat_ms, clock_.NowMs());
  // worker:1 fails and runs again (attempt 1); attempt 0's last heartbeat comes after, under the
  // same container id (as when the attempt runs again in its container).
  job_->OnHeartbeat({"worker", 1}, "c_worker:1", Quiet(0, 40));
  job_->OnExecutorResult({"worker", 1}, "c_worker:1", 1, "boom");
  ASSERT_EQ(job_->Find({"worker", 1})->attempt, 1);
  Allocate({"worker", 1});
  Register({"worker", 1}, 2000);
  ASSERT_FALSE(job_->Find({"worker", 1})->progress.has_step);
  HeartbeatReport late = Quiet(0, 41);
  late.attempt = 0;
  job_->OnHeartbeat({"worker", 1}, "c_worker:1", late);
  EXPECT_FALSE(job_->Find({"worker", 1})->progress.has_step);
  // The current attempt's own heartbeat is taken as ever.
  HeartbeatReport current = Quiet(0, 3);
  current.attempt = 1;
  job_->OnHeartbeat({"worker", 1}, "c_worker:1", current);
  EXPECT_EQ(job_->Find({"worker", 1})->progress.step, 3);
}

TEST_F(JobStateTest, TheJobsProgressIsItsTrackedTasksShares) {
  Init({{"tony.worker.instances", "2"}, {"tony.ps.instances", "1"}});
  StartAll();
  EXPECT_FLOAT_EQ(job_->Progress(), 0.0f);
  // Without totals: the share of tracked tasks that ended (ps is not tracked).
  Exit({"worker", 1}, 0);
  EXPECT_FLOAT_EQ(job_->Progress(), 0.5f);
  // With a total: each task's step over it.
  job_->OnHeartbeat({"worker", 0}, "c_worker:0", Quiet(0, 25));  // step 25 of 100
  EXPECT_FLOAT_EQ(job_->Progress(), (0.25f + 1.0f) / 2);
  Exit({"worker", 0}, 0);
  EXPECT_FLOAT_EQ(job_->Progress(), 1.0f);
}

TEST_F(JobStateTest, ATaskFarBehindItsTypesMedianIsAStraggler) {
  Init({{"tony.worker.instances", "3"}, {"tony.task.straggler-steps", "10"}});
  StartAll();
  job_->OnHeartbeat({"worker", 0}, "c_worker:0", Quiet(0, 100));
  job_->OnHeartbeat({"worker", 1}, "c_worker:1", Quiet(0, 95));
  job_->OnHeartbeat({"worker", 2}, "c_worker:2", Quiet(0, 90));
  job_->OnTick();
  EXPECT_TRUE(job_->TakeNotices().empty()) << "5 behind the median is within 10";
  job_->OnHeartbeat({"worker", 0}, "c_worker:0", Quiet(0, 130));
  job_->OnHeartbeat({"worker", 1}, "c_worker:1", Quiet(0, 120));
  job_->OnTick();
  EXPECT_EQ(job_->Find({"worker", 2})->straggler,
            "worker:2 is a straggler: at step 90, 30 behind the median of the running worker tasks "
            "(tony.task.straggler-steps = 10)");
  EXPECT_TRUE(job_->Find({"worker", 0})->straggler.empty());
  std::vector<TaskEvent> notices = job_->TakeNotices();
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].kind, "STRAGGLER");
  EXPECT_EQ(notices[0].task, (TaskRef{"worker", 2}));
  // Said once while it lags; cleared once it catches up; said no more in this attempt when it
  // hovers at the bound.
  job_->OnTick();
  EXPECT_TRUE(job_->TakeNotices().empty());
  job_->OnHeartbeat({"worker", 2}, "c_worker:2", Quiet(0, 115));
  job_->OnTick();
  EXPECT_TRUE(job_->Find({"worker", 2})->straggler.empty());
  job_->OnHeartbeat({"worker", 2}, "c_worker:2", Quiet(0, 100));
  job_->OnTick();
  EXPECT_FALSE(job_->Find({"worker", 2})->straggler.empty());
  EXPECT_TRUE(job_->TakeNotices().empty());
}

TEST_F(JobStateTest, WithoutAHangTimeoutAQuietTaskRunsOn) {
  Init({{"tony.worker.instances", "1"}});
  StartAll();
  clock_.Advance(3600000);
  const HeartbeatAnswer answer = job_->OnHeartbeat({"worker", 0}, "c_worker:0", Quiet(3600000));
  EXPECT_FALSE(answer.stop);
  EXPECT_FALSE(answer.dump_stacks);
  EXPECT_TRUE(job_->Find({"worker", 0})->hung.empty());
}

TEST_F(JobStateTest, AHungTaskStoppedByTheJobsEndIsNotCountedAsHung) {
  Init({{"tony.worker.instances", "2"}, {"tony.task.hang-timeout-ms", "1000"}});
  StartAll();
  EXPECT_TRUE(job_->OnHeartbeat({"worker", 1}, "c_worker:1", Quiet(5000)).stop);
  job_->Kill("killed by the user");
  Exit({"worker", 1}, 143);
  EXPECT_EQ(State({"worker", 1}), TaskState::kFinished);
  EXPECT_EQ(job_->state(), JobState::kKilled);
}

}  // namespace
}  // namespace tony::am
