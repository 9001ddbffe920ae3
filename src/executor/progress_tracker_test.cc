#include "executor/progress_tracker.h"

#include <gtest/gtest.h>

namespace tony::executor {
namespace {

using Stream = ProgressTracker::Stream;

TEST(ProgressTrackerTest, WithoutStepsOutputAndCpuAreProgress) {
  FakeClock clock;
  ProgressTracker tracker("", &clock, clock.NowMs());
  clock.Advance(4000);
  EXPECT_EQ(tracker.quiet_ms(), 4000);
  tracker.OnOutput(Stream::kStderr, "loading data\n");
  EXPECT_EQ(tracker.quiet_ms(), 0);
  clock.Advance(3000);
  tracker.OnCpu(50);
  EXPECT_EQ(tracker.quiet_ms(), 0);
  clock.Advance(3000);
  tracker.OnCpu(50);  // no more CPU than before: a process that sleeps or is stopped
  tracker.OnOutput(Stream::kStdout, "");
  EXPECT_EQ(tracker.quiet_ms(), 3000);
  // A busy child exits (the sum drops), and the one left works on: that is CPU use.
  tracker.OnCpu(20);
  clock.Advance(1000);
  tracker.OnCpu(30);
  EXPECT_EQ(tracker.quiet_ms(), 0);
  EXPECT_FALSE(tracker.progress().has_step());
}

TEST(ProgressTrackerTest, OnceATaskReportsStepsOnlyANewStepIsProgress) {
  FakeClock clock;
  ProgressTracker tracker(R"(step (?P<step>\d+)(?:/(?P<total>\d+))? loss=(?P<loss>[0-9.]+))",
                          &clock, clock.NowMs());
  clock.Advance(1000);
  // Lines arrive in pieces, on either stream.
  tracker.OnOutput(Stream::kStdout, "epoch 1 ste");
  tracker.OnOutput(Stream::kStderr, "warning: slow\n");
  tracker.OnOutput(Stream::kStdout, "p 7/100 loss=0.25\nstep 8/100 loss=0.5");
  EXPECT_EQ(tracker.progress().step(), 7);
  EXPECT_EQ(tracker.progress().total(), 100);
  EXPECT_DOUBLE_EQ(tracker.progress().metrics().at("loss"), 0.25);
  tracker.OnOutput(Stream::kStdout, "\n");
  EXPECT_EQ(tracker.progress().step(), 8);
  EXPECT_DOUBLE_EQ(tracker.progress().metrics().at("loss"), 0.5);
  EXPECT_EQ(tracker.quiet_ms(), 0);
  // Output and CPU at the same step are not progress any more: a spinning or chatty hang.
  clock.Advance(5000);
  tracker.OnOutput(Stream::kStderr, "retrying connection\n");
  tracker.OnCpu(1000);
  tracker.OnOutput(Stream::kStdout, "step 8 loss=0.5\n");
  EXPECT_EQ(tracker.quiet_ms(), 5000);
  // A step back (a restart from a checkpoint) is a new step; a line without a total keeps it.
  clock.Advance(1000);
  tracker.OnOutput(Stream::kStdout, "step 3 loss=0.9\n");
  EXPECT_EQ(tracker.quiet_ms(), 0);
  EXPECT_EQ(tracker.progress().step(), 3);
  EXPECT_EQ(tracker.progress().total(), 100);
}

TEST(ProgressTrackerTest, UnparsableNumbersSkippedLinesAndLongLinesAreHarmless) {
  FakeClock clock;
  ProgressTracker tracker(R"(step=(?P<step>\S+) acc=(?P<acc>\S+))", &clock, clock.NowMs());
  tracker.OnOutput(Stream::kStdout, "step=abc acc=1\n");  // not a step: ignored
  EXPECT_FALSE(tracker.progress().has_step());
  tracker.OnOutput(Stream::kStdout, "step=4 acc=n/a\n");  // a step; the metric is not a number
  EXPECT_EQ(tracker.progress().step(), 4);
  EXPECT_TRUE(tracker.progress().metrics().empty());
  // After a skip the bytes start inside a line: up to its end they are no line of their own
  // ("...12345 acc=1" read from its middle is not step 345).
  tracker.OnOutput(Stream::kStdout, "garbage step=");
  tracker.OnSkipped(Stream::kStdout);
  tracker.OnOutput(Stream::kStdout, "step=77 acc=0.5");
  tracker.OnOutput(Stream::kStdout, "\nstep=6 acc=0.75\n");
  EXPECT_EQ(tracker.progress().step(), 6);
  // A stream that starts again (a file written over) starts with a whole line.
  tracker.OnOutput(Stream::kStdout, "step=");
  tracker.OnRestarted(Stream::kStdout);
  tracker.OnOutput(Stream::kStdout, "step=7 acc=1\n");
  EXPECT_EQ(tracker.progress().step(), 7);
  // A line far longer than kMaxLineBytes is cut, not kept whole.
  tracker.OnOutput(Stream::kStdout, "step=9 acc=1 " + std::string(1 << 20, 'x') + "\n");
  EXPECT_EQ(tracker.progress().step(), 9);
}

TEST(ProgressTrackerTest, ReportsFromTheProgressFileAreStepsWithoutAPattern) {
  FakeClock clock;
  ProgressTracker tracker("", &clock, clock.NowMs());
  clock.Advance(2000);
  // A pid that dumps its stacks on the signal is not progress.
  tracker.OnOutput(Stream::kReports, "faulthandler=42\n");
  EXPECT_EQ(tracker.quiet_ms(), 2000);
  EXPECT_EQ(tracker.faulthandler_pids(), std::set<pid_t>{42});
  tracker.OnOutput(Stream::kReports, "step=3 total=10 loss=0.5 acc=0.25\nstep=4 lo");
  EXPECT_EQ(tracker.quiet_ms(), 0);
  EXPECT_EQ(tracker.progress().step(), 3);
  EXPECT_EQ(tracker.progress().total(), 10);
  EXPECT_DOUBLE_EQ(tracker.progress().metrics().at("acc"), 0.25);
  tracker.OnOutput(Stream::kReports, "ss=0.4\n");
  EXPECT_EQ(tracker.progress().step(), 4);
  EXPECT_DOUBLE_EQ(tracker.progress().metrics().at("loss"), 0.4);
  // Steps reported, so plain output is no longer progress.
  clock.Advance(1000);
  tracker.OnOutput(Stream::kStdout, "still here\n");
  EXPECT_EQ(tracker.quiet_ms(), 1000);
  // Lines without a step, bad pids and bad numbers change nothing; metrics are bounded.
  tracker.OnOutput(
      Stream::kReports,
      "total=99\nfaulthandler=1\nfaulthandler=x\nfaulthandler=99999999999\nstep=x\n=3\n");
  EXPECT_EQ(tracker.progress().step(), 4);
  EXPECT_EQ(tracker.progress().total(), 10);
  EXPECT_EQ(tracker.faulthandler_pids(), std::set<pid_t>{42});
  std::string many = "step=5";
  for (int i = 0; i < 40; ++i) many += " m" + std::to_string(i) + "=1";
  tracker.OnOutput(Stream::kReports, many + "\n");
  EXPECT_LE(tracker.progress().metrics().size(), ProgressTracker::kMaxMetrics);
}

}  // namespace
}  // namespace tony::executor
