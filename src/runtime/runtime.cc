#include "runtime/runtime.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "runtime/common_env.h"
#include "runtime/framework_env.h"

namespace tony::runtime {
namespace {

using AddFrameworkEnvFn = absl::Status (*)(const TaskContext&, Environment*);

struct Framework {
  absl::string_view name;
  AddFrameworkEnvFn add_env;
};

constexpr Framework kFrameworks[] = {
    {"tensorflow", &AddTensorFlowEnv},
    {"pytorch", &AddPyTorchEnv},
    {"mxnet", &AddMXNetEnv},
    {"horovod", &AddHorovodEnv},
    {"jax", &AddJaxEnv},
    {"standalone", &AddStandaloneEnv},
};

// Framework names are matched without regard to case: TonY's configuration accepts
// "tensorflow" and "TENSORFLOW" alike.
const Framework* FindFramework(absl::string_view name) {
  for (const Framework& framework : kFrameworks) {
    if (absl::EqualsIgnoreCase(framework.name, name)) return &framework;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<Environment> BuildTaskEnvironment(const TaskContext& ctx) {
  const Framework* framework = FindFramework(ctx.framework);
  if (framework == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown framework '", ctx.framework,
                                                   "'; tony supports ",
                                                   absl::StrJoin(SupportedFrameworks(), ", ")));
  }
  Environment env;
  if (absl::Status status = AddCommonEnv(ctx, &env); !status.ok()) return status;
  if (absl::Status status = framework->add_env(ctx, &env); !status.ok()) return status;
  for (const auto& [name, value] : ctx.container_envs) env[name] = value;
  for (const auto& [name, value] : ctx.execution_envs) env[name] = value;
  return env;
}

const std::vector<std::string>& ScrubbedVariables() {
  static const auto* const kScrubbedVariables = new std::vector<std::string>{"MALLOC_ARENA_MAX"};
  return *kScrubbedVariables;
}

std::vector<std::string> SupportedFrameworks() {
  std::vector<std::string> names;
  for (const Framework& framework : kFrameworks) names.emplace_back(framework.name);
  return names;
}

}  // namespace tony::runtime
