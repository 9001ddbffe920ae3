#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "runtime/framework_env.h"

namespace tony::runtime {
namespace {

bool IsEvaluator(absl::string_view type) { return absl::EqualsIgnoreCase(type, "evaluator"); }

// JSON text of `value`, compact. Hosts come from outside tony, so a string that is not UTF-8 is an
// error for the task rather than an exception.
absl::StatusOr<std::string> ToJson(const nlohmann::json& value, absl::string_view variable) {
  try {
    return value.dump();
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write ", variable, " as JSON: ", e.what()));
  }
}

}  // namespace

// CLUSTER_SPEC is the whole spec, every type included (sidecars and evaluator too), as TonY gives
// it: scripts use it to find any task. TF_CONFIG's cluster is what TensorFlow's strategies build a
// server from, so it leaves out
//   - sidecar types (TensorBoard), which run no TensorFlow server;
//   - the evaluator, except in the evaluator's own TF_CONFIG (TonY's rule): training tasks must not
//     count it as a peer, since it evaluates on its own schedule and a worker that listed it could
//     wait for it.
// Both are set only in GANG mode, as in TonY: in FCFS mode a task gets the spec before its peers
// registered, so the cluster would be incomplete.
absl::Status AddTensorFlowEnv(const TaskContext& ctx, Environment* env) {
  if (absl::EqualsIgnoreCase(ctx.distributed_mode, "FCFS")) return absl::OkStatus();

  ClusterSpec tf_cluster;
  for (const auto& [type, addresses] : ctx.cluster) {
    if (ctx.sidecar_types.contains(type)) continue;
    if (IsEvaluator(type) && !IsEvaluator(ctx.job_type)) continue;
    tf_cluster.emplace(type, addresses);
  }
  nlohmann::json tf_config;
  tf_config["cluster"] = tf_cluster;
  tf_config["task"]["type"] = ctx.job_type;
  tf_config["task"]["index"] = ctx.task_index;

  absl::StatusOr<std::string> cluster_spec = ToJson(ctx.cluster, "CLUSTER_SPEC");
  if (!cluster_spec.ok()) return cluster_spec.status();
  absl::StatusOr<std::string> tf_config_text = ToJson(tf_config, "TF_CONFIG");
  if (!tf_config_text.ok()) return tf_config_text.status();
  (*env)["CLUSTER_SPEC"] = *std::move(cluster_spec);
  (*env)["TF_CONFIG"] = *std::move(tf_config_text);
  return absl::OkStatus();
}

}  // namespace tony::runtime
