#include "am/status_publisher.h"

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

void StatusPublisher::Fill(rpc::JobStatus* status) const {
  status->set_app_id(app_id_);
  status->set_state(ToProto(job_->state()));
  status->set_version(Version());
  status->set_diagnostics(job_->diagnostics());
  status->set_start_ms(job_->start_wall_ms());
  status->set_end_ms(job_->end_wall_ms());
  status->set_tensorboard_url(tensorboard_url_);
  status->set_output_dir(job_->spec().output_dir);
  status->set_complete(complete_);
  status->set_final_status_unsaved(final_status_unsaved_);
  for (const TaskRecord& record : job_->tasks()) {
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
    task->set_heartbeats(record.heartbeats);
    if (record.progress.has_step) {
      rpc::TaskProgress* progress = task->mutable_progress();
      progress->set_has_step(true);
      progress->set_step(record.progress.step);
      progress->set_total(record.progress.total);
      progress->mutable_metrics()->insert(record.progress.metrics.begin(),
                                          record.progress.metrics.end());
    }
    task->set_progress_ms(record.progress_wall_ms);
    task->set_hung(record.hung);
    task->set_straggler(record.straggler);
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
  for (const TaskEvent& event : job_->events()) {
    rpc::TaskEvent* out = status->add_events();
    out->set_kind(event.kind);
    out->mutable_task()->set_type(event.task.type);
    out->mutable_task()->set_index(event.task.index);
    out->set_attempt(event.attempt);
    out->set_time_ms(event.wall_ms);
    out->set_detail(event.detail);
  }
}

std::string StatusPublisher::FinalJson() const {
  rpc::JobStatus status;
  Fill(&status);
  status.set_complete(true);  // the record of a job that has ended
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(status, &json);
  return json;
}

bool StatusPublisher::SetTensorBoardUrl(const std::string& url) {
  if (url == tensorboard_url_) return false;
  tensorboard_url_ = url;
  ++url_changes_;
  return true;
}

void StatusPublisher::MarkComplete(std::string unsaved) {
  complete_ = true;
  final_status_unsaved_ = std::move(unsaved);
}

void StatusPublisher::MaybePublish() {
  if (!render_) return;
  const int64_t version = Version();
  const int64_t now = clock_->NowMs();
  const bool changed = version != page_version_;
  if (!changed && now - page_rendered_ms_ < kUnchangedEveryMs) return;
  if (changed && !complete_ && page_version_ >= 0 && now - page_rendered_ms_ < kChangedEveryMs) {
    return;
  }
  page_version_ = version;
  page_rendered_ms_ = now;
  rpc::JobStatus status;
  Fill(&status);
  render_(status, *live_);
}

}  // namespace tony::am
