// The AM's account of the job to its clients and its status page: the JobStatus it fills, its
// version, and the WatchJob long-polls that wait for a newer one. On the AM's loop, as all of
// ApplicationMaster.

#include <algorithm>

#include "am/application_master.h"
#include "google/protobuf/util/json_util.h"

namespace tony::am {
namespace {

rpc::TaskState ToProto(TaskState state) {
  switch (state) {
    case TaskState::kNew:
      return rpc::TASK_NEW;
    case TaskState::kRequested:
      return rpc::TASK_REQUESTED;
    case TaskState::kAllocated:
      return rpc::TASK_ALLOCATED;
    case TaskState::kRegistered:
      return rpc::TASK_REGISTERED;
    case TaskState::kRunning:
      return rpc::TASK_RUNNING;
    case TaskState::kSucceeded:
      return rpc::TASK_SUCCEEDED;
    case TaskState::kFailed:
      return rpc::TASK_FAILED;
    case TaskState::kFinished:
      return rpc::TASK_FINISHED;
  }
  return rpc::TASK_STATE_UNSPECIFIED;
}

rpc::JobState ToProto(JobState state) {
  switch (state) {
    case JobState::kRunning:
      return rpc::JOB_RUNNING;
    case JobState::kSucceeded:
      return rpc::JOB_SUCCEEDED;
    case JobState::kFailed:
      return rpc::JOB_FAILED;
    case JobState::kKilled:
      return rpc::JOB_KILLED;
  }
  return rpc::JOB_STATE_UNSPECIFIED;
}

}  // namespace

void ApplicationMaster::UpdateStatusPage() {
  if (!options_.status_page) return;
  const int64_t version = Version();
  const int64_t now = clock_->NowMs();
  // Rendered at most once a second (a large job changes on every event), and every few seconds
  // for new metric samples; the job's end at once.
  const bool changed = version != page_version_;
  if (!changed && now - page_rendered_ms_ < 5000) return;
  if (changed && !complete_ && page_version_ >= 0 && now - page_rendered_ms_ < 1000) return;
  page_version_ = version;
  page_rendered_ms_ = now;
  rpc::JobStatus status;
  FillStatus(&status);
  status_page_.Update(status, live_);
}

int64_t ApplicationMaster::Version() const {
  return (job_.version() + url_changes_) * 2 + (complete_ ? 1 : 0);
}

void ApplicationMaster::FillStatus(rpc::JobStatus* status) const {
  status->set_app_id(options_.app_id);
  status->set_state(ToProto(job_.state()));
  status->set_version(Version());
  status->set_diagnostics(job_.diagnostics());
  status->set_start_ms(job_.start_wall_ms());
  status->set_end_ms(job_.end_wall_ms());
  status->set_tensorboard_url(tensorboard_url_);
  status->set_complete(complete_);
  status->set_final_status_unsaved(final_status_unsaved_);
  for (const TaskRecord& record : job_.tasks()) {
    rpc::TaskStatus* task = status->add_tasks();
    task->set_type(record.ref.type);
    task->set_index(record.ref.index);
    task->set_state(ToProto(record.state));
    task->set_host(record.host);
    task->set_port(record.port);
    task->set_container_id(record.container_id);
    task->set_attempt(record.attempt);
    task->set_has_exit_code(record.exit_code.has_value());
    task->set_exit_code(record.exit_code.value_or(0));
    task->set_diagnostics(record.diagnostics);
    task->set_start_ms(record.start_wall_ms);
    task->set_end_ms(record.end_wall_ms);
    task->set_log_dir(record.log_dir);
    task->set_role(std::string(config::ToString(record.role)));
    task->set_peak_rss_bytes(record.peak_rss_bytes);
    if (auto tail = output_tails_.find(record.ref); tail != output_tails_.end()) {
      task->set_output_tail(tail->second);
    }
    for (const AttemptRecord& previous : record.previous_attempts) {
      rpc::AttemptStatus* attempt = task->add_previous_attempts();
      attempt->set_attempt(previous.attempt);
      attempt->set_container_id(previous.container_id);
      attempt->set_exit_code(previous.exit_code);
      attempt->set_diagnostics(previous.diagnostics);
      attempt->set_end_ms(previous.end_wall_ms);
    }
  }
  for (const TaskEvent& event : job_.events()) {
    rpc::TaskEvent* out = status->add_events();
    out->set_kind(event.kind);
    out->mutable_task()->set_type(event.task.type);
    out->mutable_task()->set_index(event.task.index);
    out->set_attempt(event.attempt);
    out->set_time_ms(event.wall_ms);
    out->set_detail(event.detail);
  }
}

std::string ApplicationMaster::StatusJson() const {
  rpc::JobStatus status;
  FillStatus(&status);
  status.set_complete(true);  // the record of a job that has ended
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(status, &json);
  return json;
}

void ApplicationMaster::GetJobStatus(const rpc::GetJobStatusRequest&, Reply<rpc::JobStatus> reply) {
  FillStatus(reply.response());
  std::move(reply).Send();
}

void ApplicationMaster::WatchJob(const rpc::WatchJobRequest& request, Reply<rpc::JobStatus> reply) {
  watchers_.Add(request.after_version(), request.max_wait_ms(), std::move(reply));
  AnswerWatchers(/*all=*/false);
}

void ApplicationMaster::AnswerWatchers(bool all) {
  const auto fill = [this](rpc::JobStatus* status) { FillStatus(status); };
  if (all) {
    watchers_.AnswerAll(fill);
  } else {
    watchers_.Poll(Version(), complete_, fill);
  }
}

}  // namespace tony::am
