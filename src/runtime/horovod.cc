#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/cluster_util.h"
#include "runtime/framework_env.h"

namespace tony::runtime {
namespace {

constexpr absl::string_view kDriver = "driver";
constexpr absl::string_view kWorker = "worker";

// A worker's place in Horovod's layout, with Horovod's meanings: rank over all workers; local rank
// and size among the workers on its host; cross rank and size among the hosts that have a worker
// with the same local rank.
struct HorovodSlot {
  std::string hostname;
  int rank = 0;
  int size = 0;
  int local_rank = 0;
  int local_size = 0;
  int cross_rank = 0;
  int cross_size = 0;
};

// Lays workers out the way horovodrun does for a host list: hosts in order, each host's slots
// numbered consecutively. Hosts are ordered by their lowest worker index and a host's workers by
// index, so rank 0 is always worker:0, and ranks equal task indexes when workers are placed host by
// host.
HorovodSlot SlotOf(const std::vector<GroupMember>& workers, int task_index) {
  std::vector<std::string> hosts;
  std::vector<std::vector<int>> indexes_by_host;
  for (const GroupMember& worker : workers) {
    size_t h = 0;
    while (h < hosts.size() && hosts[h] != worker.host_port.host) ++h;
    if (h == hosts.size()) {
      hosts.push_back(worker.host_port.host);
      indexes_by_host.emplace_back();
    }
    indexes_by_host[h].push_back(worker.index);
  }

  HorovodSlot slot;
  slot.size = static_cast<int>(workers.size());
  int first_rank_on_host = 0;
  for (size_t h = 0; h < hosts.size(); ++h) {
    const std::vector<int>& indexes = indexes_by_host[h];
    for (size_t local = 0; local < indexes.size(); ++local) {
      if (indexes[local] != task_index) continue;
      slot.hostname = hosts[h];
      slot.local_rank = static_cast<int>(local);
      slot.local_size = static_cast<int>(indexes.size());
      slot.rank = first_rank_on_host + slot.local_rank;
    }
    first_rank_on_host += static_cast<int>(indexes.size());
  }
  for (size_t h = 0; h < hosts.size(); ++h) {
    if (static_cast<int>(indexes_by_host[h].size()) <= slot.local_rank) continue;
    if (hosts[h] == slot.hostname) slot.cross_rank = slot.cross_size;
    ++slot.cross_size;
  }
  return slot;
}

}  // namespace

// Workers run Horovod with the Gloo controller against the rendezvous server that the `driver` task
// runs on its registered address. The driver gets nothing beyond the common variables: it is not a
// Horovod rank. Tasks of other types get nothing either.
absl::Status AddHorovodEnv(const TaskContext& ctx, Environment* env) {
  absl::StatusOr<std::string> driver_address =
      RequireTaskAddress(ctx.cluster, "horovod", kDriver, 0);
  if (!driver_address.ok()) return driver_address.status();
  absl::StatusOr<HostPort> driver = SplitHostPort(TaskName(kDriver, 0), *driver_address);
  if (!driver.ok()) return driver.status();
  if (ctx.job_type != kWorker) return absl::OkStatus();

  absl::StatusOr<std::string> own_address =
      RequireTaskAddress(ctx.cluster, "horovod", kWorker, ctx.task_index);
  if (!own_address.ok()) return own_address.status();
  absl::StatusOr<std::vector<GroupMember>> workers = MembersOfType(ctx.cluster, kWorker);
  if (!workers.ok()) return workers.status();
  const HorovodSlot slot = SlotOf(*workers, ctx.task_index);

  Environment& e = *env;
  e["HOROVOD_CONTROLLER"] = "gloo";
  e["HOROVOD_CPU_OPERATIONS"] = "gloo";
  e["HOROVOD_GLOO_RENDEZVOUS_ADDR"] = driver->host;
  e["HOROVOD_GLOO_RENDEZVOUS_PORT"] = absl::StrCat(driver->port);
  // TonY's value. Containers start minutes apart on a busy cluster, far beyond Horovod's default.
  e["HOROVOD_GLOO_TIMEOUT_SECONDS"] = "2000";
  e["HOROVOD_RANK"] = absl::StrCat(slot.rank);
  e["HOROVOD_SIZE"] = absl::StrCat(slot.size);
  e["HOROVOD_LOCAL_RANK"] = absl::StrCat(slot.local_rank);
  e["HOROVOD_LOCAL_SIZE"] = absl::StrCat(slot.local_size);
  e["HOROVOD_CROSS_RANK"] = absl::StrCat(slot.cross_rank);
  e["HOROVOD_CROSS_SIZE"] = absl::StrCat(slot.cross_size);
  e["HOROVOD_HOSTNAME"] = slot.hostname;
  return absl::OkStatus();
}

}  // namespace tony::runtime
