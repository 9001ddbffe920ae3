#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "runtime/cluster_util.h"
#include "runtime/framework_env.h"
#include "runtime/horovod_plan.h"

namespace tony::runtime {
namespace {

constexpr absl::string_view kDriver = "driver";
constexpr absl::string_view kWorker = "worker";

}  // namespace

absl::StatusOr<std::vector<HorovodSlot>> HorovodPlan(const ClusterSpec& cluster) {
  absl::StatusOr<std::vector<GroupMember>> workers = MembersOfType(cluster, kWorker);
  if (!workers.ok()) return workers.status();
  if (workers->empty()) {
    return absl::InvalidArgumentError("horovod needs task worker:0 in the cluster spec");
  }
  // Hosts in order of their first worker, each with its workers' indexes in order.
  std::vector<std::pair<std::string, std::vector<int>>> hosts;
  for (const GroupMember& worker : *workers) {
    auto it = std::find_if(hosts.begin(), hosts.end(),
                           [&](const auto& host) { return host.first == worker.host_port.host; });
    if (it == hosts.end()) it = hosts.insert(hosts.end(), {worker.host_port.host, {}});
    it->second.push_back(worker.index);
  }
  std::vector<HorovodSlot> plan;
  const int size = static_cast<int>(workers->size());
  for (size_t h = 0; h < hosts.size(); ++h) {
    const auto& [host, indexes] = hosts[h];
    for (size_t local = 0; local < indexes.size(); ++local) {
      HorovodSlot slot;
      slot.task_index = indexes[local];
      slot.hostname = host;
      slot.rank = static_cast<int>(plan.size());
      slot.size = size;
      slot.local_rank = static_cast<int>(local);
      slot.local_size = static_cast<int>(indexes.size());
      // The hosts with a slot of this local rank, in host order.
      for (size_t other = 0; other < hosts.size(); ++other) {
        if (hosts[other].second.size() <= local) continue;
        if (other == h) slot.cross_rank = slot.cross_size;
        ++slot.cross_size;
      }
      plan.push_back(std::move(slot));
    }
  }
  return plan;
}

std::string HorovodHostList(const std::vector<HorovodSlot>& plan) {
  std::vector<std::string> parts;
  for (const HorovodSlot& slot : plan) {
    if (slot.local_rank == 0) parts.push_back(absl::StrCat(slot.hostname, ":", slot.local_size));
  }
  return absl::StrJoin(parts, ",");
}

std::map<std::string, int> HorovodScopeSizes(const std::vector<HorovodSlot>& plan) {
  std::map<std::string, int> sizes;
  for (const HorovodSlot& slot : plan) {
    sizes["global"] = slot.size;
    sizes[absl::StrCat("local_", slot.hostname)] = slot.local_size;
    sizes[absl::StrCat("cross_", slot.local_rank)] = slot.cross_size;
  }
  return sizes;
}

// Workers run Horovod with the Gloo controller against the rendezvous store the AM names in
// ctx.rendezvous_address: its own, or the one a debug driver (tony.horovod.driver.mode.debug)
// published. A `driver` task gets TonY's driver protocol instead: the host list and, when the
// executor made one, the directory for its port file. Tasks of other types get nothing.
absl::Status AddHorovodEnv(const TaskContext& ctx, Environment* env) {
  Environment& e = *env;
  if (ctx.job_type == kDriver) {
    absl::StatusOr<std::vector<HorovodSlot>> plan = HorovodPlan(ctx.cluster);
    if (!plan.ok()) return plan.status();
    e["CLUSTER_WORKER_LIST"] = HorovodHostList(*plan);
    if (!ctx.driver_output_path.empty()) e["DRIVER_OUTPUT_PATH"] = ctx.driver_output_path;
    return absl::OkStatus();
  }
  if (ctx.job_type != kWorker) return absl::OkStatus();

  if (ctx.rendezvous_address.empty()) {
    return absl::InvalidArgumentError(
        "horovod needs the address of its rendezvous from the AM, which gave none");
  }
  absl::StatusOr<HostPort> rendezvous = SplitHostPort("the rendezvous", ctx.rendezvous_address);
  if (!rendezvous.ok()) return rendezvous.status();
  absl::StatusOr<std::vector<HorovodSlot>> plan = HorovodPlan(ctx.cluster);
  if (!plan.ok()) return plan.status();
  auto slot = std::find_if(plan->begin(), plan->end(),
                           [&](const HorovodSlot& s) { return s.task_index == ctx.task_index; });
  if (slot == plan->end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "horovod needs task ", TaskName(kWorker, ctx.task_index), " in the cluster spec"));
  }

  e["HOROVOD_CONTROLLER"] = "gloo";
  e["HOROVOD_CPU_OPERATIONS"] = "gloo";
  e["HOROVOD_GLOO_RENDEZVOUS_ADDR"] = rendezvous->host;
  e["HOROVOD_GLOO_RENDEZVOUS_PORT"] = absl::StrCat(rendezvous->port);
  // TonY's value. Containers start minutes apart on a busy cluster, far beyond Horovod's default.
  e["HOROVOD_GLOO_TIMEOUT_SECONDS"] = "2000";
  e["HOROVOD_RANK"] = absl::StrCat(slot->rank);
  e["HOROVOD_SIZE"] = absl::StrCat(slot->size);
  e["HOROVOD_LOCAL_RANK"] = absl::StrCat(slot->local_rank);
  e["HOROVOD_LOCAL_SIZE"] = absl::StrCat(slot->local_size);
  e["HOROVOD_CROSS_RANK"] = absl::StrCat(slot->cross_rank);
  e["HOROVOD_CROSS_SIZE"] = absl::StrCat(slot->cross_size);
  e["HOROVOD_HOSTNAME"] = slot->hostname;
  return absl::OkStatus();
}

}  // namespace tony::runtime
