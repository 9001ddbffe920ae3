#pragma once
// One function per framework (each in its own file, e.g. pytorch.cc): adds the variables that
// framework expects for ctx's task to *env. They add nothing common (see common_env.h) and read
// only ctx. Each returns InvalidArgument naming the task when the cluster spec lacks an address it
// needs or holds one that is not host:port.
// REQUIRES: env != nullptr.

#include "absl/status/status.h"
#include "runtime/task_context.h"

namespace tony::runtime {

[[nodiscard]] absl::Status AddTensorFlowEnv(const TaskContext& ctx, Environment* env);
[[nodiscard]] absl::Status AddPyTorchEnv(const TaskContext& ctx, Environment* env);
[[nodiscard]] absl::Status AddMXNetEnv(const TaskContext& ctx, Environment* env);
[[nodiscard]] absl::Status AddHorovodEnv(const TaskContext& ctx, Environment* env);
[[nodiscard]] absl::Status AddJaxEnv(const TaskContext& ctx, Environment* env);
[[nodiscard]] absl::Status AddStandaloneEnv(const TaskContext& ctx, Environment* env);

}  // namespace tony::runtime
