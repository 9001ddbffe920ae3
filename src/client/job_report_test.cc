#include "client/job_report.h"

#include <gtest/gtest.h>

namespace tony::client {
namespace {

rpc::TaskStatus* AddTask(rpc::JobStatus& status, const std::string& type, int index,
                         rpc::TaskState state, const std::string& role = "tracked") {
  rpc::TaskStatus* task = status.add_tasks();
  task->set_type(type);
  task->set_index(index);
  task->set_state(state);
  task->set_role(role);
  return task;
}

// TensorFlow's ParameterServerStrategy under a TonY configuration that tracks every type: the
// chief (the coordinator) is done, the workers and the ps serve on.
rpc::JobStatus PsJobAfterTheChief(int64_t chief_end_ms) {
  rpc::JobStatus status;
  status.set_state(rpc::JOB_RUNNING);
  AddTask(status, "chief", 0, rpc::TASK_SUCCEEDED)->set_end_ms(chief_end_ms);
  AddTask(status, "worker", 0, rpc::TASK_RUNNING);
  AddTask(status, "worker", 1, rpc::TASK_RUNNING);
  AddTask(status, "ps", 0, rpc::TASK_RUNNING);
  AddTask(status, "tensorboard", 0, rpc::TASK_RUNNING, "sidecar");
  return status;
}

TEST(LingeringTasksHintTest, NamesTheTrackedTasksAndTheKeyOnceTheChiefIsLongDone) {
  const rpc::JobStatus status = PsJobAfterTheChief(1'000'000);
  EXPECT_EQ(LingeringTasksHint(status, 1'000'000 + 29'999, 30'000), "");
  EXPECT_EQ(LingeringTasksHint(status, 1'000'000 + 45'000, 30'000),
            "chief:0 succeeded 45 s ago; the job waits for its tracked tasks still running "
            "(worker:0, worker:1, ps:0). If they serve until stopped (TensorFlow "
            "ParameterServerStrategy's workers and ps), make them untracked: "
            "tony.application.untracked.jobtypes=worker,ps");
}

TEST(LingeringTasksHintTest, SaysNothingWhereNothingLingers) {
  const int64_t later = 1'000'000 + 3'600'000;
  rpc::JobStatus running_chief = PsJobAfterTheChief(1'000'000);
  running_chief.mutable_tasks(0)->set_state(rpc::TASK_RUNNING);
  EXPECT_EQ(LingeringTasksHint(running_chief, later, 30'000), "");

  rpc::JobStatus untracked = PsJobAfterTheChief(1'000'000);
  for (int i = 1; i < 4; ++i) untracked.mutable_tasks(i)->set_role("untracked");
  EXPECT_EQ(LingeringTasksHint(untracked, later, 30'000), "");

  rpc::JobStatus ended = PsJobAfterTheChief(1'000'000);
  ended.set_state(rpc::JOB_SUCCEEDED);
  EXPECT_EQ(LingeringTasksHint(ended, later, 30'000), "");

  // No chief job type: whichever worker leads is one of the tracked tasks itself.
  rpc::JobStatus workers;
  workers.set_state(rpc::JOB_RUNNING);
  AddTask(workers, "worker", 0, rpc::TASK_SUCCEEDED)->set_end_ms(1'000'000);
  AddTask(workers, "worker", 1, rpc::TASK_RUNNING);
  EXPECT_EQ(LingeringTasksHint(workers, later, 30'000), "");
}

TEST(TerminalSafeTest, KeepsTextAndUtf8AndDefusesTheRest) {
  EXPECT_EQ(TerminalSafe("accuracy: 0.973\nloss\t0.1"), "accuracy: 0.973\nloss 0.1");
  EXPECT_EQ(TerminalSafe("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");
  // An escape sequence that would recolour or clear the terminal, a lone continuation byte, a
  // sequence cut short, and a carriage return.
  EXPECT_EQ(TerminalSafe("\x1b[2Jred\x80 \xe2\x9c\rend"), "?[2Jred? ???end");
  EXPECT_EQ(TerminalSafe(std::string(10, 'x') + "\nfour", 4), "xxxx...\nfour");
}

TEST(SummaryTest, EndsWithTheLastLinesTheChiefPrinted) {
  rpc::JobStatus status;
  status.set_app_id("application_1_0001");
  status.set_state(rpc::JOB_SUCCEEDED);
  AddTask(status, "worker", 0, rpc::TASK_SUCCEEDED)->set_output_tail("worker says hi");
  AddTask(status, "chief", 0, rpc::TASK_SUCCEEDED)->set_output_tail("epoch 9\ntest accuracy: 0.97");
  const std::string summary = Summary(status);
  const std::string expected =
      "\nlast lines of chief:0's output:\n  epoch 9\n  test accuracy: 0.97\n";
  ASSERT_GE(summary.size(), expected.size());
  EXPECT_EQ(summary.substr(summary.size() - expected.size()), expected) << summary;
  EXPECT_EQ(summary.find("worker says hi"), std::string::npos) << summary;

  // Without a chief type, worker:0's; without any output, nothing.
  status.mutable_tasks()->RemoveLast();
  EXPECT_NE(Summary(status).find("last lines of worker:0's output:\n  worker says hi\n"),
            std::string::npos);
  status.mutable_tasks(0)->clear_output_tail();
  EXPECT_EQ(Summary(status).find("last lines of"), std::string::npos);
}

TEST(SummaryTest, NamesWhereTheOutputsAre) {
  rpc::JobStatus status;
  status.set_app_id("application_1_0001");
  status.set_state(rpc::JOB_SUCCEEDED);
  EXPECT_EQ(Summary(status).find("outputs:"), std::string::npos);
  status.set_output_dir("hdfs://nn:8020/user/alice/.tony/application_1_0001/outputs");
  EXPECT_NE(Summary(status).find(
                "\noutputs: hdfs://nn:8020/user/alice/.tony/application_1_0001/outputs\n"),
            std::string::npos)
      << Summary(status);
}

// Exit codes that are not the process's own say what they mean.
TEST(SummaryTest, NamesTheExitCodesTonyAndTheClusterGive) {
  rpc::JobStatus status;
  status.set_app_id("application_1_0001");
  status.set_state(rpc::JOB_FAILED);
  rpc::TaskStatus* worker = AddTask(status, "worker", 0, rpc::TASK_FAILED);
  worker->set_has_exit_code(true);
  worker->set_exit_code(3);
  rpc::AttemptStatus* gang = worker->add_previous_attempts();
  gang->set_attempt(0);
  gang->set_exit_code(-1002);
  gang->set_diagnostics("gang restart 1: worker:1 failed (exit code 3)");
  rpc::AttemptStatus* preempted = worker->add_previous_attempts();
  preempted->set_attempt(1);
  preempted->set_exit_code(-102);
  const std::string summary = Summary(status);
  EXPECT_NE(summary.find("worker:0 attempt 0 failed with exit code -1002 (stopped for a gang "
                         "restart) and was restarted:\n  gang restart 1: worker:1 failed"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("worker:0 attempt 1 failed with exit code -102 (preempted) and was "
                         "restarted\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("worker:0 failed with exit code 3\n"), std::string::npos) << summary;
}

TEST(SummaryTest, ShowsProgressWhenATaskReportsItAndNamesAHungTask) {
  rpc::JobStatus status;
  status.set_app_id("application_1_0001");
  status.set_state(rpc::JOB_RUNNING);
  AddTask(status, "worker", 0, rpc::TASK_RUNNING);
  EXPECT_EQ(Summary(status).find("PROGRESS"), std::string::npos) << "no column without progress";
  rpc::TaskStatus* task = AddTask(status, "worker", 1, rpc::TASK_RUNNING);
  task->mutable_progress()->set_has_step(true);
  task->mutable_progress()->set_step(70);
  task->mutable_progress()->set_total(100);
  (*task->mutable_progress()->mutable_metrics())["loss"] = 0.123456;
  (*task->mutable_progress()->mutable_metrics())["acc"] = 0.5;
  task->set_hung("worker:1 is hung: no progress for 15000 ms");
  status.mutable_tasks(0)->set_straggler("worker:0 is a straggler: at step 3, 67 behind");
  const std::string summary = Summary(status);
  EXPECT_NE(summary.find("PROGRESS"), std::string::npos) << summary;
  EXPECT_NE(summary.find("70/100 acc=0.5 loss=0.1235"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\nworker:1 is hung: no progress for 15000 ms\n"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("\nworker:0 is a straggler: at step 3, 67 behind\n"), std::string::npos)
      << summary;
  rpc::TaskProgress step_only;
  step_only.set_has_step(true);
  step_only.set_step(3);
  EXPECT_EQ(ProgressText(step_only), "step 3");
  EXPECT_EQ(ProgressText(rpc::TaskProgress()), "-");
}

// A staged job's later tasks wait for the stages before them; they are not yet requested.
TEST(ProgressLineTest, TellsWaitingRequestedStartingAndRunningApart) {
  rpc::JobStatus status;
  auto add = [&](const char* type, rpc::TaskState state) {
    rpc::TaskStatus* task = status.add_tasks();
    task->set_type(type);
    task->set_state(state);
  };
  add("prepare", rpc::TASK_SUCCEEDED);
  add("worker", rpc::TASK_RUNNING);
  add("worker", rpc::TASK_REGISTERED);
  add("worker", rpc::TASK_ALLOCATED);
  add("worker", rpc::TASK_REQUESTED);
  add("evaluator", rpc::TASK_NEW);
  add("evaluator", rpc::TASK_NEW);
  add("ps", rpc::TASK_FAILED);
  add("ps", rpc::TASK_FINISHED);
  EXPECT_EQ(ProgressLine(status),
            "evaluator: 2 waiting | prepare: 1 succeeded | ps: 1 failed, 1 stopped | "
            "worker: 1 requested, 2 starting, 1 running");
}

}  // namespace
}  // namespace tony::client
