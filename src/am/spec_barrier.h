#pragma once
// The gang barrier as the executors meet it: each executor's WaitClusterSpec waits here until the
// state machine releases its task's cluster spec (and, for a Horovod worker, until the rendezvous
// is known), and is then answered with the whole cluster. A task stopped before that, or whose
// container ended, gets CANCELLED. Every waiter gets the same cluster, packed once for as long
// as the addresses stay the same (rpc/cluster_pack.h): with thousands of tasks, building or
// copying it per waiter would cost O(tasks) each.
//
// Threads: the AM's loop only.

#include <map>
#include <string>
#include <vector>

#include "am/am_reply.h"
#include "am/job_state.h"
#include "am/rendezvous_host.h"
#include "rpc/cluster_pack.h"
#include "rpc/tony.pb.h"

namespace tony::am {

class SpecBarrier {
 public:
  SpecBarrier(const JobStateMachine* job, RendezvousHost* rendezvous)
      : job_(job), rendezvous_(rendezvous) {}

  // The executor of `task` in `container_id` waits; NOT_FOUND at once if that is not the task's
  // container. Answered now if the spec is out.
  void Wait(const TaskRef& task, const std::string& container_id,
            Reply<rpc::WaitClusterSpecResponse> reply);
  // Answers every waiter whose spec is out, and cancels those whose task was stopped.
  void Answer();
  // Cancels the waiters of a container that ended (they would never be answered).
  void ContainerEnded(const std::string& container_id);
  // Cancels every waiter (the job has ended).
  void CancelAll();
  size_t size() const { return waiters_.size(); }

 private:
  struct Waiter {
    TaskRef task;
    std::string container_id;
    Reply<rpc::WaitClusterSpecResponse> reply;
  };

  // The cluster as the job's current version has it, packed once.
  const rpc::PackedCluster& Cluster();

  const JobStateMachine* const job_;
  RendezvousHost* const rendezvous_;
  std::vector<Waiter> waiters_;
  int restarts_seen_ = 0;       // the gang restarts when the rendezvous was last cleared
  int64_t packed_version_ = 0;  // the job's version packed_ was last checked at; 0: never
  std::map<std::string, std::vector<std::string>> packed_spec_;  // what packed_ holds
  rpc::PackedCluster packed_;
};

}  // namespace tony::am
