#pragma once
// Reading task addresses out of a ClusterSpec, shared by the framework runtimes.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/task_context.h"

namespace tony::runtime {

struct HostPort {
  std::string host;  // without the brackets of an IPv6 literal
  int port = 0;
};

// Splits "host:port" (or "[v6addr]:port") at its last colon. `task` ("worker:0") names the task in
// the error, which is InvalidArgument when there is no host or the port is not in 1..65535.
[[nodiscard]] absl::StatusOr<HostPort> SplitHostPort(absl::string_view task,
                                                     absl::string_view address);

// "type:index", the way tony names a task in messages.
std::string TaskName(absl::string_view type, int index);

// The address of task type:index, or InvalidArgument
// "<framework> needs task <type>:<index> in the cluster spec".
[[nodiscard]] absl::StatusOr<std::string> RequireTaskAddress(const ClusterSpec& cluster,
                                                             absl::string_view framework,
                                                             absl::string_view type, int index);

// Number of tasks of `type` in the cluster (0 when the type is absent).
int CountTasks(const ClusterSpec& cluster, absl::string_view type);

struct GroupMember {
  std::string type;
  int index = 0;
  std::string address;  // as registered, "host:port"
  HostPort host_port;
};

// A set of processes that train together, listed by rank: member i has rank i.
struct ProcessGroup {
  std::vector<GroupMember> members;

  // Rank of task type:index, or nullopt when it is not a member.
  std::optional<int> RankOf(absl::string_view type, int index) const;
  // REQUIRES for both: 0 <= rank < members.size().
  // Members on the same host as the member of rank `rank`, itself included.
  int LocalSize(int rank) const;
  // Position of `rank` among the members on its host, in rank order.
  int LocalRank(int rank) const;
};

// Every task of `type`, by task index, with parsed addresses. InvalidArgument names a task whose
// address is not host:port.
[[nodiscard]] absl::StatusOr<std::vector<GroupMember>> MembersOfType(const ClusterSpec& cluster,
                                                                     absl::string_view type);

// The group of a collective (all-reduce) job: every `chief` task when the job has that type, then
// every `worker` task, each in task-index order. So rank 0, the rendezvous master, is chief:0 when
// there is a chief and worker:0 otherwise. This matches what torchrun and Kubeflow's PyTorchJob
// users expect: the master is one more training process (rank 0), and WORLD_SIZE counts it.
// InvalidArgument "<framework> needs task worker:0 in the cluster spec" when the group is empty.
[[nodiscard]] absl::StatusOr<ProcessGroup> ChiefAndWorkerGroup(const ClusterSpec& cluster,
                                                               absl::string_view framework);

// True for the types ChiefAndWorkerGroup draws its members from.
bool IsChiefOrWorkerType(absl::string_view type);

}  // namespace tony::runtime
