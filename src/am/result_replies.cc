#include "am/result_replies.h"

#include <algorithm>

namespace tony::am {

bool ResultReplies::Waits(const TaskRef& task, const std::string& container_id,
                          Reply<rpc::ReportResultResponse>& reply) const {
  const TaskRecord* record = job_->Find(task);
  const bool current = record != nullptr && record->container_id == container_id;
  if (current && record->pending_result.has_value() && !job_->decided()) return true;
  // A task that was running in this container and now waits there for its next attempt's
  // registration runs again in it.
  if (current && record->state == TaskState::kAllocated && !record->stop_requested &&
      !job_->decided()) {
    reply.response()->set_run_again(true);
    reply.response()->set_attempt(record->attempt);
  }
  std::move(reply).Send();
  return false;
}

void ResultReplies::Answer(const TaskRef& task, const std::string& container_id,
                           Reply<rpc::ReportResultResponse> reply) {
  if (Waits(task, container_id, reply)) held_.push_back({task, container_id, std::move(reply)});
}

void ResultReplies::Poll() {
  std::erase_if(held_,
                [&](Held& held) { return !Waits(held.task, held.container_id, held.reply); });
}

void ResultReplies::ContainerEnded(const std::string& container_id) {
  std::erase_if(held_, [&](Held& held) {
    if (held.container_id != container_id) return false;
    std::move(held.reply).Send();
    return true;
  });
}

void ResultReplies::AnswerAll() {
  for (Held& held : held_) std::move(held.reply).Send();
  held_.clear();
}

}  // namespace tony::am
