#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/cluster_util.h"
#include "runtime/framework_env.h"

namespace tony::runtime {

// The world is ChiefAndWorkerGroup: chief tasks (if the job has that type) then workers. TonY uses
// worker:0 and the task index, which is the same world when there is no chief type (TonY's usual
// PyTorch job); with a chief, a torchrun or PyTorchJob user expects the chief to be rank 0 and the
// master, with the workers after it, so that is what tony does.
//
// World members get TonY's INIT_METHOD (tcp://<rank 0's address>), RANK and WORLD, and torch's own
// MASTER_ADDR, MASTER_PORT, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE, so init_method="env://"
// works too. WORLD is the world size; TonY sets it to TASK_NUM, which is the same unless the job
// has other tracked types. Local ranks count the world's tasks on the same host, in rank order.
// Tasks of other types (a TensorBoard sidecar, say) are not in the world and get nothing, so that
// none of them joins the process group by mistake.
//
// An elastic job's workers (ctx.elastic_nnodes) get torchrun's own settings instead, as its PET_*
// variables, which a bare `torchrun train.py` reads (its flags win where given): the node range,
// the c10d backend at the AM's store, the job's id as the rendezvous id, is_host=false (the store
// is the AM's, never a worker's) and the restarts its agent may make. torchrun gives the processes
// it starts their RANK, WORLD_SIZE, MASTER_ADDR and the rest from each rendezvous: a fixed world
// of tony's would be wrong after the first change, so there is none.
absl::Status AddElasticPyTorchEnv(const TaskContext& ctx, Environment* env) {
  if (ctx.rendezvous_address.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("elastic task ",
                                                   TaskName(ctx.job_type, ctx.task_index),
                                                   " has no c10d rendezvous: the AM named none"));
  }
  Environment& e = *env;
  e["PET_NNODES"] = ctx.elastic_nnodes;
  e["PET_RDZV_BACKEND"] = "c10d";
  e["PET_RDZV_ENDPOINT"] = ctx.rendezvous_address;
  e["PET_RDZV_ID"] = ctx.app_id;
  e["PET_RDZV_CONF"] = "is_host=false";
  e["PET_MAX_RESTARTS"] = absl::StrCat(ctx.elastic_max_restarts);
  return absl::OkStatus();
}

absl::Status AddPyTorchEnv(const TaskContext& ctx, Environment* env) {
  if (!ctx.elastic_nnodes.empty()) return AddElasticPyTorchEnv(ctx, env);
  absl::StatusOr<ProcessGroup> world = ChiefAndWorkerGroup(ctx.cluster, "pytorch");
  if (!world.ok()) return world.status();
  if (!IsChiefOrWorkerType(ctx.job_type)) return absl::OkStatus();
  std::optional<int> rank = world->RankOf(ctx.job_type, ctx.task_index);
  if (!rank.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pytorch needs task ", TaskName(ctx.job_type, ctx.task_index), " in the cluster spec"));
  }
  const GroupMember& master = world->members.front();
  const std::string world_size = absl::StrCat(world->members.size());
  Environment& e = *env;
  e["INIT_METHOD"] = absl::StrCat("tcp://", master.address);
  e["RANK"] = absl::StrCat(*rank);
  e["WORLD"] = world_size;
  e["MASTER_ADDR"] = master.host_port.host;
  e["MASTER_PORT"] = absl::StrCat(master.host_port.port);
  e["WORLD_SIZE"] = world_size;
  e["LOCAL_RANK"] = absl::StrCat(world->LocalRank(*rank));
  e["LOCAL_WORLD_SIZE"] = absl::StrCat(world->LocalSize(*rank));
  // As torchrun counts its restarts: the gang restarts of the job so far.
  e["TORCHELASTIC_RESTART_COUNT"] = absl::StrCat(ctx.restart_count);
  return absl::OkStatus();
}

}  // namespace tony::runtime
