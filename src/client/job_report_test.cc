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

}  // namespace
}  // namespace tony::client
