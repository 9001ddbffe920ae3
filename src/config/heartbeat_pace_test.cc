// The executors' heartbeat pace: the configured one in small jobs, stretched in large ones within
// the configured deadline for a silent task.

#include "config/heartbeat_pace.h"

#include "common/strings.h"
#include "config/job_spec_fixture.h"

namespace tony::config {
namespace {

class HeartbeatPaceTest : public JobSpecTest {
 protected:
  HeartbeatPace PaceOf(int workers, int64_t interval_ms = 1000, int missed = 25) {
    Set("tony.worker.instances", std::to_string(workers));
    Set("tony.task.heartbeat-interval-ms", std::to_string(interval_ms));
    Set("tony.task.max-missed-heartbeats", std::to_string(missed));
    absl::StatusOr<JobSpec> spec = Build();
    EXPECT_TRUE(spec.ok()) << spec.status();
    return spec.ok() ? ExecutorHeartbeat(*spec) : HeartbeatPace{};
  }
};

TEST_F(HeartbeatPaceTest, UpToTheBudgetTheConfiguredPaceHolds) {
  for (int workers : {1, 64, kHeartbeatsPerSecond}) {
    const HeartbeatPace pace = PaceOf(workers);
    EXPECT_EQ(pace.interval_ms, 1000) << workers;
    EXPECT_EQ(pace.max_missed, 25) << workers;
  }
  const HeartbeatPace slow = PaceOf(64, 200, 10);
  EXPECT_EQ(slow.interval_ms, 200);
  EXPECT_EQ(slow.max_missed, 10);
}

TEST_F(HeartbeatPaceTest, ALargerJobBeatsAtTheBudgetWithinTheSameDeadline) {
  const HeartbeatPace pace = PaceOf(2 * kHeartbeatsPerSecond);
  EXPECT_EQ(pace.interval_ms, 2000);
  EXPECT_EQ(pace.max_missed, 12);  // 24 s of the configured 25 s
  const HeartbeatPace odd = PaceOf(kHeartbeatsPerSecond + 1);
  EXPECT_EQ(odd.interval_ms, 1002);  // rounded up: never over the budget
  EXPECT_EQ(odd.max_missed, 24);
}

TEST_F(HeartbeatPaceTest, TheStretchStopsAtAThirdOfTheDeadline) {
  const HeartbeatPace at_budget = PaceOf(4096);  // the budget: 8 s, within 25 s / 3
  EXPECT_EQ(at_budget.interval_ms, 8000);
  EXPECT_EQ(at_budget.max_missed, 3);
  const HeartbeatPace pace = PaceOf(8192);  // the budget alone would give 16 s
  EXPECT_EQ(pace.interval_ms, 8333);
  EXPECT_EQ(pace.max_missed, 3);
  // A deadline too short to stretch keeps the configured pace.
  const HeartbeatPace tight = PaceOf(4096, 1000, 2);
  EXPECT_EQ(tight.interval_ms, 1000);
  EXPECT_EQ(tight.max_missed, 2);
}

TEST_F(HeartbeatPaceTest, AConfiguredIntervalSlowerThanTheBudgetIsKept) {
  const HeartbeatPace pace = PaceOf(4096, 10000, 5);
  EXPECT_EQ(pace.interval_ms, 10000);
  EXPECT_EQ(pace.max_missed, 5);
}

TEST_F(HeartbeatPaceTest, EveryPaceKeepsTheDeadlineAndTheBudgetWhereItCan) {
  for (int workers : {1, 100, 511, 512, 513, 777, 1000, 2048, 3000, 4096, 10000, 50000}) {
    for (auto [interval, missed] :
         {std::pair<int64_t, int>{1000, 25}, {100, 3}, {5000, 10}, {1, 1000}, {250, 1}}) {
      const HeartbeatPace pace = PaceOf(workers, interval, missed);
      const std::string where = StrCat(workers, " tasks at ", interval, " ms x ", missed);
      EXPECT_GE(pace.interval_ms, interval) << where;
      EXPECT_GE(pace.max_missed, 1) << where;
      EXPECT_LE(pace.interval_ms * pace.max_missed, interval * missed) << where;
      if (pace.interval_ms < interval * missed / 3) {
        // Not capped: the job's heartbeats are within the budget.
        EXPECT_LE(int64_t{workers} * 1000, int64_t{kHeartbeatsPerSecond} * pace.interval_ms)
            << where;
      }
    }
  }
}

}  // namespace
}  // namespace tony::config
