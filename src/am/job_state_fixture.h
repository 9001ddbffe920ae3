#pragma once
// The fixture of the job state machine's tests: a JobStateMachine on a fake clock, built from
// tony.* settings, with helpers that play the allocator and the executors.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "am/job_state.h"
#include "common/clock.h"
#include "config/key_catalog.h"

namespace tony::am {

using config::TaskRef;

inline config::JobSpec MakeSpec(const std::vector<std::pair<std::string, std::string>>& settings) {
  config::Configuration conf = config::KeyCatalog::BuiltIn().Defaults();
  conf.Set("tony.containers.command", "true", config::ValueSource::ConfFlag());
  for (const auto& [key, value] : settings) conf.Set(key, value, config::ValueSource::ConfFlag());
  absl::StatusOr<config::JobSpec> spec = config::BuildJobSpec(conf);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

template <typename T>
inline int Count(const Actions& actions) {
  int n = 0;
  for (const Action& a : actions) n += std::holds_alternative<T>(a) ? 1 : 0;
  return n;
}

class JobStateTest : public ::testing::Test {
 protected:
  void Init(const std::vector<std::pair<std::string, std::string>>& settings) {
    job_ = std::make_unique<JobStateMachine>(MakeSpec(settings), &clock_);
    Actions actions = job_->Start();
    int later = 0;  // tasks of a later stage wait for the earlier ones
    for (const TaskRecord& task : job_->tasks()) later += task.awaiting_stage ? 1 : 0;
    EXPECT_EQ(Count<RequestContainer>(actions), job_->spec().TotalTasks() - later);
  }
  // Grants a container for the task and returns its id.
  std::string Allocate(const TaskRef& task) {
    std::string id = "c_" + task.ToString();
    Actions actions = job_->OnContainerAllocated(id, task.type, "host", "/logs/" + id);
    EXPECT_EQ(Count<LaunchTask>(actions), 1);
    EXPECT_EQ(job_->Find(task)->container_id, id) << "lowest index first";
    return id;
  }
  Actions Register(const TaskRef& task, int port) {
    absl::StatusOr<Actions> actions =
        job_->OnTaskRegistered(task, "c_" + task.ToString(), "h", port);
    EXPECT_TRUE(actions.ok()) << actions.status();
    return actions.ok() ? *actions : Actions{};
  }
  // Allocates and registers every task; returns the actions of the last registration.
  Actions StartAll() {
    Actions last;
    int port = 1000;
    for (const TaskRecord& task : std::vector<TaskRecord>(job_->tasks())) Allocate(task.ref);
    for (const TaskRecord& task : std::vector<TaskRecord>(job_->tasks())) {
      last = Register(task.ref, port++);
    }
    return last;
  }
  // Allocates and registers these tasks, in order; returns the actions of the last registration.
  Actions StartAllOf(const std::vector<TaskRef>& tasks) {
    Actions last;
    int port = 2000;
    for (const TaskRef& task : tasks) Allocate(task);
    for (const TaskRef& task : tasks) last = Register(task, port++);
    return last;
  }
  Actions Exit(const TaskRef& task, int code) {
    return job_->OnExecutorResult(task, "c_" + task.ToString(), code, code ? "boom" : "");
  }
  TaskState State(const TaskRef& task) { return job_->Find(task)->state; }

  FakeClock clock_;
  std::unique_ptr<JobStateMachine> job_;
};

}  // namespace tony::am
