#pragma once
// Variables every task's user process gets, whatever its framework.

#include "absl/status/status.h"
#include "runtime/task_context.h"

namespace tony::runtime {

// Adds JOB_NAME, TASK_INDEX, TASK_NUM, JOB_ID, DISTRIBUTED_MODE, SESSION_ID, AM_HOST, AM_PORT,
// ATTEMPT_NUMBER, IS_CHIEF ("true", on the chief only; absent elsewhere, as in TonY), and TB_PORT
// and TB_HOST (only when a TensorBoard port was reserved) to *env.
// InvalidArgument when the context is malformed: empty job type or negative counts.
// REQUIRES: env != nullptr.
[[nodiscard]] absl::Status AddCommonEnv(const TaskContext& ctx, Environment* env);

}  // namespace tony::runtime
