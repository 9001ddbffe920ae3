#include "am/spec_barrier.h"

#include <algorithm>

#include "common/strings.h"
#include "rpc/cluster_pack.h"

namespace tony::am {

void SpecBarrier::Wait(const TaskRef& task, const std::string& container_id,
                       Reply<rpc::WaitClusterSpecResponse> reply) {
  const TaskRecord* record = job_->Find(task);
  if (record == nullptr || record->container_id != container_id) {
    std::move(reply).Send(
        absl::NotFoundError(StrCat("no task ", task.ToString(), " in container ", container_id)));
    return;
  }
  waiters_.push_back({task, container_id, std::move(reply)});
  Answer();
}

const rpc::PackedCluster& SpecBarrier::Cluster() {
  // With thousands of tasks their waits come one by one after the release, and each would pack
  // the whole cluster again: the packing is kept while the job's version stays, and past that
  // while the addresses do (the version also moves with what heartbeats report).
  if (packed_version_ == job_->version()) return packed_;
  packed_version_ = job_->version();
  bool restarted = false;
  if (job_->gang_restarts() != restarts_seen_) {
    // A restarted gang meets afresh: nothing its last run stored may be read by the new one
    // (every member of that run has ended by now).
    restarts_seen_ = job_->gang_restarts();
    rendezvous_->Clear();
    restarted = true;
  }
  std::map<std::string, std::vector<std::string>> spec = job_->ClusterSpec();
  if (!restarted && packed_.size > 0 && spec == packed_spec_) return packed_;
  rendezvous_->SizeScopes(spec);
  packed_ = rpc::PackCluster(spec);
  packed_spec_ = std::move(spec);
  return packed_;
}

void SpecBarrier::Answer() {
  std::erase_if(waiters_, [&](Waiter& waiter) {
    const TaskRecord* record = job_->Find(waiter.task);
    if (record->stop_requested || IsTerminal(record->state)) {
      std::move(waiter.reply).Send(absl::CancelledError("the task was stopped before it started"));
      return true;
    }
    if (!job_->ClusterSpecReleased(waiter.task) || rendezvous_->Awaits(waiter.task)) return false;
    rpc::WaitClusterSpecResponse* response = waiter.reply.response();
    rpc::SetPackedCluster(Cluster(), response);
    response->set_num_tracked_tasks(job_->spec().TrackedTasks());
    response->set_is_chief(job_->IsChief(waiter.task));
    response->set_attempt(record->attempt);
    response->set_session_id("0");
    response->set_rendezvous_address(rendezvous_->address());
    response->set_restart_count(job_->gang_restarts());
    response->set_model_params(job_->model_params());
    std::move(waiter.reply).Send();
    return true;
  });
}

void SpecBarrier::ContainerEnded(const std::string& container_id) {
  std::erase_if(waiters_, [&](Waiter& waiter) {
    if (waiter.container_id != container_id) return false;
    std::move(waiter.reply).Send(absl::CancelledError("the container ended"));
    return true;
  });
}

void SpecBarrier::CancelAll() {
  for (Waiter& waiter : waiters_) {
    std::move(waiter.reply).Send(absl::CancelledError("the job has ended"));
  }
  waiters_.clear();
}

}  // namespace tony::am
