#pragma once
// Horovod's layout of a job's workers (what `horovodrun` computes from a host list), shared by the
// executor (each worker's HOROVOD_* variables), the AM (the sizes of the rendezvous store's scopes)
// and a TonY-style debug driver (CLUSTER_WORKER_LIST). Pure functions.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/task_context.h"

namespace tony::runtime {

// A worker's place, with Horovod's meanings: rank over all workers; local rank and size among the
// workers on its host; cross rank and size among the hosts that have a worker with the same local
// rank.
struct HorovodSlot {
  int task_index = 0;  // the worker task that holds the slot
  std::string hostname;
  int rank = 0;
  int size = 0;
  int local_rank = 0;
  int local_size = 0;
  int cross_rank = 0;
  int cross_size = 0;
};

// The slots of the `worker` tasks of `cluster`, by rank. Hosts are ordered by their lowest worker
// index and a host's workers by index, so rank 0 is always worker:0, and ranks equal task indexes
// when workers are placed host by host. InvalidArgument when there is no worker or an address is
// not host:port.
[[nodiscard]] absl::StatusOr<std::vector<HorovodSlot>> HorovodPlan(const ClusterSpec& cluster);

// The plan as Horovod's host list, "host:slots,host:slots", hosts in rank order (TonY's
// CLUSTER_WORKER_LIST for a debug driver).
std::string HorovodHostList(const std::vector<HorovodSlot>& plan);

// How many ranks finalize each scope of Horovod's Gloo rendezvous for this plan: "global" (all),
// "local_<host>" (the host's workers) and "cross_<local rank>" (the hosts with that local rank).
std::map<std::string, int> HorovodScopeSizes(const std::vector<HorovodSlot>& plan);

}  // namespace tony::runtime
