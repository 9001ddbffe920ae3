#include "runtime/common_env.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace tony::runtime {

absl::Status AddCommonEnv(const TaskContext& ctx, Environment* env) {
  if (ctx.job_type.empty()) return absl::InvalidArgumentError("task context has no job type");
  if (ctx.task_index < 0 || ctx.num_tracked_tasks < 0 || ctx.attempt_number < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", ctx.job_type, ":", ctx.task_index, " has a negative index, task count (",
        ctx.num_tracked_tasks, ") or attempt number (", ctx.attempt_number, ")"));
  }
  Environment& e = *env;
  e["JOB_NAME"] = ctx.job_type;
  e["TASK_INDEX"] = absl::StrCat(ctx.task_index);
  e["TASK_NUM"] = absl::StrCat(ctx.num_tracked_tasks);
  e["JOB_ID"] = ctx.app_id;
  e["DISTRIBUTED_MODE"] = ctx.distributed_mode;
  e["SESSION_ID"] = ctx.session_id;
  e["AM_HOST"] = ctx.am_host;
  e["AM_PORT"] = absl::StrCat(ctx.am_port);
  e["ATTEMPT_NUMBER"] = absl::StrCat(ctx.attempt_number);
  // TonY's scripts test for the variable's presence, so non-chief tasks must not get "false".
  if (ctx.is_chief) e["IS_CHIEF"] = "true";
  if (ctx.cpu_threads > 0) e["OMP_NUM_THREADS"] = absl::StrCat(ctx.cpu_threads);
  if (!ctx.output_dir.empty()) e["TONY_OUTPUT_DIR"] = ctx.output_dir;
  if (!ctx.output_uri.empty()) e["TONY_OUTPUT_URI"] = ctx.output_uri;
  if (ctx.preprocessing) e["PREPROCESSING_JOB"] = "true";
  if (!ctx.model_params.empty()) {
    e["MODEL_PARAMS"] = ctx.model_params;
    e["TASK_PARAMS"] = ctx.model_params;
  }
  if (ctx.tensorboard_port.has_value()) {
    e["TB_PORT"] = absl::StrCat(*ctx.tensorboard_port);
    if (!ctx.tensorboard_host.empty()) e["TB_HOST"] = ctx.tensorboard_host;
  }
  return absl::OkStatus();
}

}  // namespace tony::runtime
