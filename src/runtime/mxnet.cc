#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/cluster_util.h"
#include "runtime/framework_env.h"

namespace tony::runtime {
namespace {

// TonY's MXNet job types; each is also the task's DMLC_ROLE.
constexpr absl::string_view kScheduler = "scheduler";
constexpr absl::string_view kServer = "server";
constexpr absl::string_view kWorker = "worker";

}  // namespace

// ps-lite's variables: every role connects to scheduler:0, which listens on its registered port.
// DMLC_PS_ROOT_URI is the scheduler's host as registered; TonY resolves it to an IP address, but
// this module does no name lookups and ps-lite accepts a host name. The server and worker counts
// are those of the cluster spec, which in GANG mode equal the configured instances TonY reads.
// Tasks of other types (a TensorBoard sidecar) have no DMLC role and get nothing.
absl::Status AddMXNetEnv(const TaskContext& ctx, Environment* env) {
  absl::StatusOr<std::string> scheduler_address =
      RequireTaskAddress(ctx.cluster, "mxnet", kScheduler, 0);
  if (!scheduler_address.ok()) return scheduler_address.status();
  absl::StatusOr<HostPort> scheduler = SplitHostPort(TaskName(kScheduler, 0), *scheduler_address);
  if (!scheduler.ok()) return scheduler.status();
  if (ctx.job_type != kScheduler && ctx.job_type != kServer && ctx.job_type != kWorker) {
    return absl::OkStatus();
  }
  Environment& e = *env;
  e["DMLC_ROLE"] = ctx.job_type;
  e["DMLC_PS_ROOT_URI"] = scheduler->host;
  e["DMLC_PS_ROOT_PORT"] = absl::StrCat(scheduler->port);
  e["DMLC_NUM_SERVER"] = absl::StrCat(CountTasks(ctx.cluster, kServer));
  e["DMLC_NUM_WORKER"] = absl::StrCat(CountTasks(ctx.cluster, kWorker));
  e["DMLC_LOCAL"] = "0";
  return absl::OkStatus();
}

}  // namespace tony::runtime
