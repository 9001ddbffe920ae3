#include "runtime/cluster_util.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tony::runtime {
namespace {

constexpr absl::string_view kChiefType = "chief";
constexpr absl::string_view kWorkerType = "worker";

absl::Status NotHostPort(absl::string_view task, absl::string_view address) {
  return absl::InvalidArgumentError(
      absl::StrCat("task ", task, " has address '", address, "', which is not host:port"));
}

}  // namespace

absl::StatusOr<HostPort> SplitHostPort(absl::string_view task, absl::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return NotHostPort(task, address);
  absl::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = 0;
  if (host.empty() || !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 1 ||
      port > 65535) {
    return NotHostPort(task, address);
  }
  return HostPort{std::string(host), port};
}

std::string TaskName(absl::string_view type, int index) { return absl::StrCat(type, ":", index); }

absl::StatusOr<std::string> RequireTaskAddress(const ClusterSpec& cluster,
                                               absl::string_view framework, absl::string_view type,
                                               int index) {
  auto it = cluster.find(std::string(type));
  if (index < 0 || it == cluster.end() || static_cast<size_t>(index) >= it->second.size() ||
      it->second[index].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(framework, " needs task ", TaskName(type, index), " in the cluster spec"));
  }
  return it->second[index];
}

int CountTasks(const ClusterSpec& cluster, absl::string_view type) {
  auto it = cluster.find(std::string(type));
  return it == cluster.end() ? 0 : static_cast<int>(it->second.size());
}

std::optional<int> ProcessGroup::RankOf(absl::string_view type, int index) const {
  for (size_t rank = 0; rank < members.size(); ++rank) {
    if (members[rank].type == type && members[rank].index == index) return static_cast<int>(rank);
  }
  return std::nullopt;
}

int ProcessGroup::LocalSize(int rank) const {
  const std::string& host = members[rank].host_port.host;
  int size = 0;
  for (const GroupMember& member : members) size += member.host_port.host == host ? 1 : 0;
  return size;
}

int ProcessGroup::LocalRank(int rank) const {
  const std::string& host = members[rank].host_port.host;
  int local_rank = 0;
  for (int other = 0; other < rank; ++other) {
    local_rank += members[other].host_port.host == host ? 1 : 0;
  }
  return local_rank;
}

absl::StatusOr<std::vector<GroupMember>> MembersOfType(const ClusterSpec& cluster,
                                                       absl::string_view type) {
  std::vector<GroupMember> members;
  auto it = cluster.find(std::string(type));
  if (it == cluster.end()) return members;
  for (size_t index = 0; index < it->second.size(); ++index) {
    const std::string& address = it->second[index];
    absl::StatusOr<HostPort> host_port =
        SplitHostPort(TaskName(type, static_cast<int>(index)), address);
    if (!host_port.ok()) return host_port.status();
    members.push_back(
        GroupMember{std::string(type), static_cast<int>(index), address, *std::move(host_port)});
  }
  return members;
}

absl::StatusOr<ProcessGroup> ChiefAndWorkerGroup(const ClusterSpec& cluster,
                                                 absl::string_view framework) {
  ProcessGroup group;
  for (absl::string_view type : {kChiefType, kWorkerType}) {
    absl::StatusOr<std::vector<GroupMember>> members = MembersOfType(cluster, type);
    if (!members.ok()) return members.status();
    group.members.insert(group.members.end(), members->begin(), members->end());
  }
  if (group.members.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(framework, " needs task worker:0 in the cluster spec"));
  }
  return group;
}

bool IsChiefOrWorkerType(absl::string_view type) {
  return type == kChiefType || type == kWorkerType;
}

}  // namespace tony::runtime
