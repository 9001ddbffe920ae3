#include "am/history_recorder.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "am/job_state_fixture.h"
#include "common/files.h"
#include "history/history_format.h"
#include "history/history_fs.h"

namespace tony::am {
namespace {

namespace fs = std::filesystem;

class HistoryRecorderTest : public JobStateTest {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tony_recorder_XXXXXX";
    root_ = mkdtemp(pattern);
    Init({{"tony.worker.instances", "1"}, {"tony.task.metrics-interval-ms", "1000"}});
  }
  void TearDown() override { fs::remove_all(root_); }

  // A recorder of this test's job; with_fs: writing the history under root_.
  std::unique_ptr<HistoryRecorder> Recorder(bool with_fs) {
    HistoryRecorderOptions options;
    options.app_id = "application_1_0001";
    options.user = "alice";
    options.backend = "local";
    options.conf_file = root_ + "/no-such-conf.xml";
    if (with_fs) {
      options.fs = history::LocalHistoryFs();
      options.dirs = {root_ + "/intermediate", root_ + "/finished"};
    }
    auto recorder = std::make_unique<HistoryRecorder>(options, &job_->spec(), &clock_);
    recorder->Open("http://am:1/", rpc::JobStatus());
    return recorder;
  }
  static rpc::HeartbeatRequest Heartbeat(double cpu, bool gpu) {
    rpc::HeartbeatRequest heartbeat;
    heartbeat.mutable_task()->set_type("worker");
    heartbeat.mutable_task()->set_index(0);
    heartbeat.set_cpu_seconds(cpu);
    heartbeat.set_rss_bytes(1 << 20);
    if (gpu) {
      heartbeat.set_has_gpu_sample(true);
      heartbeat.set_gpu_utilization(50);
    }
    return heartbeat;
  }
  std::string Finished(const std::string& file) {
    absl::StatusOr<std::string> data = ReadFile(root_ + "/finished/application_1_0001/" + file);
    return data.ok() ? *data : "<" + std::string(data.status().message()) + ">";
  }

  std::string root_;
};

TEST_F(HistoryRecorderTest, MetricSamplesAreKeptOncePerIntervalButEveryGpuSample) {
  std::unique_ptr<HistoryRecorder> recorder = Recorder(/*with_fs=*/false);
  recorder->RecordMetrics(Heartbeat(1, false), 0);  // the task's first: kept
  clock_.Advance(999);
  recorder->RecordMetrics(Heartbeat(2, false), 0);  // within the interval: dropped
  recorder->RecordMetrics(Heartbeat(3, true), 0);   // a GPU sample: kept
  clock_.Advance(1000);
  recorder->RecordMetrics(Heartbeat(4, false), 0);
  const auto& samples = recorder->live().metrics;
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].cpu_seconds, 1);
  EXPECT_EQ(samples[1].cpu_seconds, 3);
  EXPECT_EQ(samples[1].gpu_utilization, 50);
  EXPECT_EQ(samples[2].cpu_seconds, 4);
  EXPECT_EQ(samples[2].task, "worker:0");
}

TEST_F(HistoryRecorderTest, TheLiveCopyKeepsTheNewestEvents) {
  std::unique_ptr<HistoryRecorder> recorder = Recorder(/*with_fs=*/false);
  ASSERT_EQ(recorder->live().events.size(), 1u);  // the AM's start (no submission time known)
  std::vector<TaskTransition> transitions(HistoryRecorder::kLiveEvents);
  for (size_t i = 0; i < transitions.size(); ++i) {
    transitions[i].task = {"worker", 0};
    transitions[i].to = TaskState::kRequested;
    transitions[i].wall_ms = static_cast<int64_t>(i);
  }
  recorder->RecordChanges(transitions, {});
  const auto& events = recorder->live().events;
  EXPECT_LE(events.size(), HistoryRecorder::kLiveEvents);
  EXPECT_GT(events.size(), HistoryRecorder::kLiveEvents / 2);
  EXPECT_EQ(events.back().time_ms, static_cast<int64_t>(HistoryRecorder::kLiveEvents - 1));
}

TEST_F(HistoryRecorderTest, HungAndStragglingTasksAreEventsWithTheirReason) {
  std::unique_ptr<HistoryRecorder> recorder = Recorder(/*with_fs=*/false);
  recorder->RecordChanges({}, {{"HUNG", {"worker", 0}, 2, 5000, "worker:0 is hung: no progress"},
                               {"STRAGGLER", {"worker", 0}, 2, 6000, "worker:0 is a straggler"}});
  const auto& events = recorder->live().events;
  ASSERT_GE(events.size(), 2u);
  const history::HistoryEvent& hung = events[events.size() - 2];
  EXPECT_EQ(hung.kind, history::kEventTaskHung);
  EXPECT_EQ(hung.task, "worker:0");
  EXPECT_EQ(hung.attempt, 2);
  EXPECT_EQ(hung.time_ms, 5000);
  EXPECT_EQ(hung.diagnostics, "worker:0 is hung: no progress");
  EXPECT_EQ(events.back().kind, history::kEventTaskStraggling);
  EXPECT_EQ(events.back().diagnostics, "worker:0 is a straggler");
}

// A gang restart is an event of its own, and a member that runs again in its container is
// restarted, then allocated that same container, with no request between.
TEST_F(HistoryRecorderTest, AGangRestartAndARestartInPlaceAreRecorded) {
  std::unique_ptr<HistoryRecorder> recorder = Recorder(/*with_fs=*/false);
  recorder->RecordChanges(
      {}, {{"GANG_RESTART", {"worker", 1}, 1, 7000, "worker:1 failed (exit code 3); restarting"}});
  TaskTransition again;
  again.task = {"worker", 1};
  again.attempt = 1;
  again.from = TaskState::kFailed;
  again.to = TaskState::kAllocated;
  again.wall_ms = 7001;
  again.container_id = "c1";
  again.diagnostics = "attempt 0 failed; again in its container";
  recorder->RecordChanges({again}, {});
  const auto& events = recorder->live().events;
  ASSERT_GE(events.size(), 3u);
  const history::HistoryEvent& gang = events[events.size() - 3];
  EXPECT_EQ(gang.kind, history::kEventGangRestarted);
  EXPECT_EQ(gang.diagnostics, "worker:1 failed (exit code 3); restarting");
  const history::HistoryEvent& restarted = events[events.size() - 2];
  EXPECT_EQ(restarted.kind, history::kEventTaskRestarted);
  EXPECT_EQ(restarted.attempt, 1);
  EXPECT_EQ(restarted.diagnostics, "attempt 0 failed; again in its container");
  EXPECT_EQ(events.back().kind, history::kEventTaskAllocated);
  EXPECT_EQ(events.back().container, "c1");
}

// Transitions and notices come from two lists; the history has them in the order the state
// machine made them, within the same millisecond too.
TEST_F(HistoryRecorderTest, TransitionsAndNoticesAreRecordedInTheOrderTheyWereMade) {
  std::unique_ptr<HistoryRecorder> recorder = Recorder(/*with_fs=*/false);
  const size_t before = recorder->live().events.size();
  std::vector<TaskTransition> transitions(3);
  const int64_t times[] = {100, 300, 300};
  const uint64_t seqs[] = {2, 4, 6};
  const TaskState states[] = {TaskState::kRegistered, TaskState::kRunning, TaskState::kFailed};
  for (size_t i = 0; i < transitions.size(); ++i) {
    transitions[i].task = {"worker", 0};
    transitions[i].to = states[i];
    transitions[i].wall_ms = times[i];
    transitions[i].seq = seqs[i];
  }
  recorder->RecordChanges(transitions, {{"HUNG", {"worker", 0}, 0, 50, "hung", 1},
                                        {"STRAGGLER", {"worker", 0}, 0, 200, "slow", 3},
                                        {"PREEMPTING", {"worker", 0}, 0, 300, "preempted", 5},
                                        {"MODEL_PARAMS", {"worker", 0}, 0, 400, "{}", 7}});
  const auto& events = recorder->live().events;
  std::vector<std::string> kinds;
  for (size_t i = before; i < events.size(); ++i) {
    kinds.push_back(events[i].kind + "@" + std::to_string(events[i].time_ms));
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{
                       history::kEventTaskHung + std::string("@50"),
                       history::kEventTaskRegistered + std::string("@100"),
                       history::kEventTaskStraggling + std::string("@200"),
                       history::kEventTaskStarted + std::string("@300"),
                       history::kEventTaskPreempting + std::string("@300"),
                       history::kEventTaskFinished + std::string("@300"),
                       history::kEventModelParams + std::string("@400"),
                   }));
}

TEST_F(HistoryRecorderTest, RetriedOutputIsWrittenOnceAndAGapIsMarked) {
  std::unique_ptr<HistoryRecorder> recorder = Recorder(/*with_fs=*/true);
  const TaskRef task{"worker", 0};
  recorder->AppendOutput(task, 0, "c1", "stdout", 0, "hello ");
  recorder->AppendOutput(task, 0, "c1", "stdout", 0, "hello ");      // a retry: nothing new
  recorder->AppendOutput(task, 0, "c1", "stdout", 3, "lo world\n");  // overlaps: the rest only
  recorder->AppendOutput(task, 0, "c1", "stdout", 20, "end\n");      // 8 bytes never came
  recorder->RecordJobEnd(JobState::kSucceeded, "");
  absl::StatusOr<std::string> closed = recorder->Close("{}", 10000);
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(Finished("logs/" + history::LogFileName("worker", 0, 0, "stdout")),
            "hello world\n\n[tony: 8 bytes of this output were not received]\nend\n");
  EXPECT_NE(Finished(history::kEventsFile).find("\"kind\":\"APPLICATION_FINISHED\""),
            std::string::npos)
      << Finished(history::kEventsFile);
}

TEST_F(HistoryRecorderTest, WithoutAFileSystemOnlyTheLiveCopyIsKept) {
  std::unique_ptr<HistoryRecorder> recorder = Recorder(/*with_fs=*/false);
  EXPECT_FALSE(recorder->writing());
  recorder->AppendOutput({"worker", 0}, 0, "c1", "stdout", 0, "ignored");
  EXPECT_FALSE(recorder->Close("{}", 1000).ok());
  EXPECT_EQ(recorder->live().user, "alice");
}

}  // namespace
}  // namespace tony::am
