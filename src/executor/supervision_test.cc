// The executor's supervision rules on a fake clock.

#include "executor/supervision.h"

#include <signal.h>

#include "gtest/gtest.h"

namespace tony::executor {
namespace {

SupervisionLimits Limits() {
  SupervisionLimits limits;
  limits.heartbeat_interval_ms = 1000;
  limits.stop_grace_ms = 3000;
  limits.execution_timeout_ms = 0;
  limits.max_missed_heartbeats = 3;
  return limits;
}

// A large job's executors beat every few seconds; the loop still wakes every configured interval,
// so that the execution timeout is not late by a stretched interval.
TEST(SupervisionTest, AStretchedHeartbeatStillLetsTheLoopCheckEveryConfiguredInterval) {
  FakeClock clock;
  SupervisionLimits limits = Limits();
  limits.heartbeat_interval_ms = 6250;
  limits.check_interval_ms = 1000;
  limits.execution_timeout_ms = 2500;
  Supervision supervision(limits, &clock, clock.NowMs());
  ASSERT_TRUE(supervision.Check(0).heartbeat);
  ASSERT_TRUE(supervision.OnHeartbeat(true));
  EXPECT_EQ(supervision.WaitMs(), 1000);
  clock.Advance(2000);
  EXPECT_FALSE(supervision.Check(0).terminate);
  EXPECT_EQ(supervision.WaitMs(), 1000);
  clock.Advance(1000);
  const Supervision::Due due = supervision.Check(0);
  EXPECT_TRUE(due.terminate) << "the execution timeout, at most a configured interval late";
  EXPECT_FALSE(due.heartbeat);
  clock.Advance(3250);
  EXPECT_TRUE(supervision.Check(0).heartbeat);
}

// A heartbeat waits for the AM's next tick while the executor watches its task: while it is
// unanswered no other is due, the loop is not woken for one (its answer wakes it), and the next
// is due an interval after the answer.
TEST(SupervisionTest, NoHeartbeatIsDueWhileOneAwaitsItsAnswer) {
  FakeClock clock;
  Supervision supervision(Limits(), &clock, clock.NowMs());
  ASSERT_TRUE(supervision.Check(0).heartbeat);
  supervision.OnHeartbeatSent();
  EXPECT_TRUE(supervision.heartbeat_in_flight());
  EXPECT_FALSE(supervision.Check(0).heartbeat);
  EXPECT_EQ(supervision.WaitMs(), 1000);  // the check interval, not 0
  clock.Advance(1500);                    // longer than an interval: still unanswered
  EXPECT_FALSE(supervision.Check(0).heartbeat);
  ASSERT_TRUE(supervision.OnHeartbeat(true));
  EXPECT_FALSE(supervision.heartbeat_in_flight());
  EXPECT_FALSE(supervision.Check(0).heartbeat);
  EXPECT_EQ(supervision.WaitMs(), 1000);
  clock.Advance(1000);
  EXPECT_TRUE(supervision.Check(0).heartbeat);
}

TEST(SupervisionTest, HeartbeatsAreDueAtOnceThenEveryIntervalAfterTheLast) {
  FakeClock clock;
  Supervision supervision(Limits(), &clock, clock.NowMs());
  EXPECT_TRUE(supervision.Check(0).heartbeat);
  EXPECT_EQ(supervision.WaitMs(), 0);
  clock.Advance(250);  // the heartbeat itself took this long
  ASSERT_TRUE(supervision.OnHeartbeat(true));
  EXPECT_FALSE(supervision.Check(0).heartbeat);
  EXPECT_EQ(supervision.WaitMs(), 1000);
  clock.Advance(999);
  EXPECT_FALSE(supervision.Check(0).heartbeat);
  EXPECT_EQ(supervision.WaitMs(), 1);
  clock.Advance(1);
  EXPECT_TRUE(supervision.Check(0).heartbeat);
  EXPECT_FALSE(supervision.stopping());
}

TEST(SupervisionTest, TheAmIsLostOnlyAfterTheGivenNumberOfFailuresInARow) {
  FakeClock clock;
  Supervision supervision(Limits(), &clock, clock.NowMs());
  EXPECT_TRUE(supervision.OnHeartbeat(false));
  EXPECT_TRUE(supervision.OnHeartbeat(false));
  EXPECT_TRUE(supervision.OnHeartbeat(true));  // an answer resets the count
  EXPECT_EQ(supervision.failed_heartbeats(), 0);
  EXPECT_TRUE(supervision.OnHeartbeat(false));
  EXPECT_TRUE(supervision.OnHeartbeat(false));
  EXPECT_FALSE(supervision.OnHeartbeat(false));
  EXPECT_EQ(supervision.failed_heartbeats(), 3);
}

TEST(SupervisionTest, WithALaterAmAttemptTheAmIsLostOnlyOnceSilentForTheRecoveryTime) {
  FakeClock clock;
  SupervisionLimits limits = Limits();
  limits.am_recovery_ms = 10000;
  Supervision supervision(limits, &clock, clock.NowMs());
  EXPECT_TRUE(supervision.OnHeartbeat(false));
  clock.Advance(1000);
  EXPECT_TRUE(supervision.OnHeartbeat(false));
  EXPECT_FALSE(supervision.awaiting_next_am());
  clock.Advance(1000);
  EXPECT_TRUE(supervision.OnHeartbeat(false));  // three missed: the task waits for the next AM
  EXPECT_TRUE(supervision.awaiting_next_am());
  clock.Advance(7999);
  EXPECT_TRUE(supervision.OnHeartbeat(false));
  // The next attempt answers: the count starts again.
  EXPECT_TRUE(supervision.OnHeartbeat(true));
  EXPECT_FALSE(supervision.awaiting_next_am());
  EXPECT_TRUE(supervision.OnHeartbeat(false));
  clock.Advance(9999);
  EXPECT_TRUE(supervision.OnHeartbeat(false));
  EXPECT_TRUE(supervision.OnHeartbeat(false));
  clock.Advance(1);
  EXPECT_FALSE(supervision.OnHeartbeat(false));  // silent for 10 s since the first failure
}

TEST(SupervisionTest, TheAmIsSilentSinceTheFirstFailureOfARun) {
  FakeClock clock;
  Supervision supervision(Limits(), &clock, clock.NowMs());
  EXPECT_EQ(supervision.am_silent_since_ms(), 0);
  clock.Advance(100);
  const int64_t first = clock.NowMs();
  supervision.OnHeartbeat(false);
  clock.Advance(1000);
  supervision.OnHeartbeat(false);
  EXPECT_EQ(supervision.am_silent_since_ms(), first);
  supervision.OnHeartbeat(true);
  EXPECT_EQ(supervision.am_silent_since_ms(), 0);
}

TEST(SupervisionTest, AStopSignalTerminatesOnceThenKillsAfterTheGraceAndEverySecondAfter) {
  FakeClock clock;
  Supervision supervision(Limits(), &clock, clock.NowMs());
  ASSERT_TRUE(supervision.OnHeartbeat(true));
  clock.Advance(100);
  Supervision::Due due = supervision.Check(SIGTERM);
  EXPECT_TRUE(due.terminate);
  EXPECT_FALSE(due.kill);
  EXPECT_EQ(supervision.stop_reason(), "the executor received signal 15");
  // The signal stays noted; the stop does not begin again.
  EXPECT_FALSE(supervision.Check(SIGTERM).terminate);
  EXPECT_EQ(supervision.WaitMs(), 900) << "the next heartbeat comes before the kill";
  for (int beat = 0; beat < 3; ++beat) {  // the heartbeats go on while the task stops
    clock.Advance(beat == 0 ? 900 : 1000);
    EXPECT_TRUE(supervision.Check(SIGTERM).heartbeat);
    ASSERT_TRUE(supervision.OnHeartbeat(true));
  }
  // 3,000 ms after the stop began at +100: the kill at +3,100 comes before the heartbeat at +4,000.
  EXPECT_EQ(supervision.WaitMs(), 100) << "the kill comes before the next heartbeat";
  clock.Advance(99);
  EXPECT_FALSE(supervision.Check(SIGTERM).kill);
  clock.Advance(1);
  due = supervision.Check(SIGTERM);
  EXPECT_TRUE(due.kill);
  EXPECT_FALSE(due.terminate);
  EXPECT_FALSE(supervision.Check(SIGTERM).kill);
  clock.Advance(kKillRepeatMs);
  EXPECT_TRUE(supervision.Check(SIGTERM).kill) << "what survived is killed again";
}

TEST(SupervisionTest, TheFirstReasonToStopIsTheOneReported) {
  FakeClock clock;
  Supervision supervision(Limits(), &clock, clock.NowMs());
  EXPECT_TRUE(supervision.BeginStop("the AM asked to stop the task"));
  EXPECT_FALSE(supervision.BeginStop("the Horovod driver did not publish its port"));
  EXPECT_FALSE(supervision.Check(SIGINT).terminate);
  EXPECT_EQ(supervision.stop_reason(), "the AM asked to stop the task");
  EXPECT_TRUE(supervision.stopping());
}

TEST(SupervisionTest, TheExecutionTimeoutStopsTheTaskAndNamesItsKey) {
  FakeClock clock;
  SupervisionLimits limits = Limits();
  limits.execution_timeout_ms = 5000;
  const int64_t start = clock.NowMs();
  clock.Advance(1000);  // the user process started a second before supervision
  Supervision supervision(limits, &clock, start);
  clock.Advance(3999);
  EXPECT_FALSE(supervision.Check(0).terminate);
  clock.Advance(1);
  EXPECT_TRUE(supervision.Check(0).terminate);
  EXPECT_EQ(supervision.stop_reason(),
            "it ran longer than tony.task.executor.execution-timeout-ms = 5000");
}

TEST(SupervisionTest, WithoutAGracePeriodTheKillFollowsTheTerminationAtOnce) {
  FakeClock clock;
  SupervisionLimits limits = Limits();
  limits.stop_grace_ms = 0;
  Supervision supervision(limits, &clock, clock.NowMs());
  const Supervision::Due due = supervision.Check(SIGHUP);
  EXPECT_TRUE(due.terminate);
  EXPECT_TRUE(due.kill);
}

}  // namespace
}  // namespace tony::executor
