// `--output json`: every field a program reads, with the text output's names.

#include "client/job_json.h"

#include <gtest/gtest.h>

#include "client/job_control.h"
#include "nlohmann/json.hpp"

namespace tony::client {
namespace {

rpc::JobStatus EndedJob() {
  rpc::JobStatus status;
  status.set_app_id("application_1_0001");
  status.set_state(rpc::JOB_FAILED);
  status.set_complete(true);
  status.set_diagnostics("worker:1 failed");
  status.set_start_ms(1000);
  status.set_end_ms(5000);
  status.set_output_dir("/home/alice/.tony/jobs/application_1_0001/outputs");
  rpc::TaskStatus* done = status.add_tasks();
  done->set_type("worker");
  done->set_index(0);
  done->set_state(rpc::TASK_SUCCEEDED);
  done->set_has_exit_code(true);
  done->set_exit_code(0);
  done->mutable_progress()->set_has_step(true);
  done->mutable_progress()->set_step(20);
  done->mutable_progress()->set_total(20);
  (*done->mutable_progress()->mutable_metrics())["loss"] = 0.25;
  rpc::TaskStatus* failed = status.add_tasks();
  failed->set_type("worker");
  failed->set_index(1);
  failed->set_state(rpc::TASK_FAILED);
  failed->set_has_exit_code(true);
  failed->set_exit_code(3);
  failed->set_attempt(1);
  rpc::AttemptStatus* before = failed->add_previous_attempts();
  before->set_attempt(0);
  before->set_exit_code(137);
  rpc::TaskStatus* never = status.add_tasks();
  never->set_type("ps");
  never->set_index(0);
  never->set_state(rpc::TASK_REQUESTED);
  return status;
}

TEST(JobJsonTest, TheJobAndItsTasksAsTheTextOutputNamesThem) {
  cluster::AppReport report;
  report.app_id = "application_1_0001";
  report.name = "digits";
  report.user = "alice";
  report.state = cluster::AppState::kFailed;
  report.final_state = "FAILED";
  report.tracking_url = "N/A";
  report.attempt = 2;
  const std::string text = JobJson(EndedJob(), &report);
  EXPECT_EQ(text.find('\n'), std::string::npos) << "one line";
  const nlohmann::json job = nlohmann::json::parse(text);
  EXPECT_EQ(job["app_id"], "application_1_0001");
  EXPECT_EQ(job["name"], "digits");
  EXPECT_EQ(job["user"], "alice");
  EXPECT_EQ(job["state"], "FAILED");
  EXPECT_EQ(job["backend_state"], "FAILED");
  EXPECT_EQ(job["final_status"], "FAILED");
  EXPECT_EQ(job["tracking_url"], "") << "YARN's N/A is no URL";
  EXPECT_EQ(job["am_attempt"], 2);
  EXPECT_EQ(job["complete"], true);
  EXPECT_EQ(job["diagnostics"], "worker:1 failed");
  EXPECT_EQ(job["end_ms"], 5000);
  EXPECT_EQ(job["output_dir"], "/home/alice/.tony/jobs/application_1_0001/outputs");
  ASSERT_EQ(job["tasks"].size(), 3u);
  const nlohmann::json& first = job["tasks"][0];
  EXPECT_EQ(first["task"], "worker:0");
  EXPECT_EQ(first["state"], "SUCCEEDED");
  EXPECT_EQ(first["exit_code"], 0);
  EXPECT_EQ(first["progress"]["step"], 20);
  EXPECT_EQ(first["progress"]["metrics"]["loss"], 0.25);
  const nlohmann::json& second = job["tasks"][1];
  EXPECT_EQ(second["exit_code"], 3);
  EXPECT_EQ(second["attempt"], 1);
  ASSERT_EQ(second["previous_attempts"].size(), 1u);
  EXPECT_EQ(second["previous_attempts"][0]["exit_code"], 137);
  const nlohmann::json& third = job["tasks"][2];
  EXPECT_TRUE(third["exit_code"].is_null()) << "it never ran";
  EXPECT_TRUE(third["progress"].is_null());
  EXPECT_EQ(third["state"], "REQUESTED");
}

TEST(JobJsonTest, SubmitsLinesAndTheListAreJsonToo) {
  const nlohmann::json submitted = nlohmann::json::parse(
      SubmittedJson("application_1_0001", "yarn", "/j", "hdfs://nn/user/alice/out"));
  EXPECT_EQ(submitted["event"], "submitted");
  EXPECT_EQ(submitted["backend"], "yarn");
  EXPECT_EQ(submitted["output_dir"], "hdfs://nn/user/alice/out");
  const nlohmann::json ended = nlohmann::json::parse(EndedJson(EndedJob(), 1));
  EXPECT_EQ(ended["event"], "ended");
  EXPECT_EQ(ended["exit_code"], 1);
  EXPECT_EQ(ended["job"]["state"], "FAILED");
  EXPECT_FALSE(ended["job"].contains("backend_state")) << "no report was asked";

  cluster::AppReport running;
  running.app_id = "application_1_0002";
  running.state = cluster::AppState::kRunning;
  running.tracking_url = "http://rm:8088/proxy/application_1_0002/";
  const nlohmann::json list = nlohmann::json::parse(JobListJson({running}));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["backend_state"], "RUNNING");
  EXPECT_EQ(list[0]["final_status"], "");
  EXPECT_EQ(list[0]["tracking_url"], "http://rm:8088/proxy/application_1_0002/");
  EXPECT_EQ(JobListJson({}), "[]");
}

TEST(JobJsonTest, ATaskTableComesBackFromTheHistorysJobJson) {
  EXPECT_FALSE(StatusFromJobJson("not json").has_value());
  EXPECT_FALSE(StatusFromJobJson(R"({"app_id":"a"})").has_value());
  std::optional<rpc::JobStatus> status = StatusFromJobJson(
      R"({"format":1,"status":{"app_id":"application_1_0001","state":"JOB_SUCCEEDED",)"
      R"("tasks":[{"type":"worker","index":1,"exit_code":0,"has_exit_code":true}],)"
      R"("a_newer_field":1}})");
  ASSERT_TRUE(status.has_value());
  ASSERT_EQ(status->tasks_size(), 1);
  EXPECT_EQ(status->tasks(0).index(), 1);
  EXPECT_EQ(status->state(), rpc::JOB_SUCCEEDED);
}

}  // namespace
}  // namespace tony::client
