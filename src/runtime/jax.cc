#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/cluster_util.h"
#include "runtime/framework_env.h"

namespace tony::runtime {

// Arguments of jax.distributed.initialize(coordinator_address, num_processes, process_id). The
// processes are ChiefAndWorkerGroup (chief first when there is one, as for PyTorch); the
// coordinator is process 0, which serves on its registered port. Other types get nothing.
absl::Status AddJaxEnv(const TaskContext& ctx, Environment* env) {
  absl::StatusOr<ProcessGroup> group = ChiefAndWorkerGroup(ctx.cluster, "jax");
  if (!group.ok()) return group.status();
  if (!IsChiefOrWorkerType(ctx.job_type)) return absl::OkStatus();
  std::optional<int> process_id = group->RankOf(ctx.job_type, ctx.task_index);
  if (!process_id.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "jax needs task ", TaskName(ctx.job_type, ctx.task_index), " in the cluster spec"));
  }
  Environment& e = *env;
  e["JAX_COORDINATOR_ADDRESS"] = group->members.front().address;
  e["JAX_NUM_PROCESSES"] = absl::StrCat(group->members.size());
  e["JAX_PROCESS_ID"] = absl::StrCat(*process_id);
  return absl::OkStatus();
}

}  // namespace tony::runtime
