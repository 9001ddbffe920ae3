#pragma once
// The environment a task's user process sees: TonY's common variables plus what its framework
// expects (TF_CONFIG, RANK/WORLD_SIZE/MASTER_ADDR, DMLC_*, HOROVOD_*, JAX_*), plus the user's own
// variables. Pure functions: no sockets, processes or files, so every rule is unit-tested.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/task_context.h"

namespace tony::runtime {

// The variables tony sets for `ctx`'s user process, layered from lowest to highest precedence:
//   1. common variables (JOB_NAME, TASK_INDEX, ... see common_env.h),
//   2. the framework's variables,
//   3. ctx.container_envs (tony.containers.envs),
//   4. ctx.execution_envs (tony.execution.envs and --shell_env).
// A value the user set always wins over one tony computed, so a user can work around a rule of
// tony's without patching it. The result is what tony adds on top of the inherited environment;
// the executor removes ScrubbedVariables() from the inherited part first.
// Errors (InvalidArgument): an unknown framework (the message lists the supported ones); a task
// the framework needs that is missing from ctx.cluster ("pytorch needs task worker:0 in the
// cluster spec"); an address that is not host:port; a malformed context (empty job type,
// negative index).
[[nodiscard]] absl::StatusOr<Environment> BuildTaskEnvironment(const TaskContext& ctx);

// Variables the executor removes from the environment it inherits before adding
// BuildTaskEnvironment's: MALLOC_ARENA_MAX, which Hadoop sets for containers and which slows
// TensorFlow about 3x (TonY issue 346). A user who sets one of them in container or execution envs
// still gets it.
const std::vector<std::string>& ScrubbedVariables();

// The framework names BuildTaskEnvironment accepts, in a fixed order.
std::vector<std::string> SupportedFrameworks();

}  // namespace tony::runtime
