#include "runtime/framework_env.h"

namespace tony::runtime {

// A standalone job is one program on its own (the configuration allows exactly one task), so it
// has no peers to tell about: the common variables are all it gets.
absl::Status AddStandaloneEnv(const TaskContext& /*ctx*/, Environment* /*env*/) {
  return absl::OkStatus();
}

}  // namespace tony::runtime
