#pragma once
// What the local backend may hand out: the machine's memory, CPUs and GPUs, or the limits set by
// tony.local.memory / tony.local.vcores / tony.local.gpus. Memory and GPUs are hard limits. Vcores
// are one only when tony.local.vcores is set: otherwise the tasks time-share the CPUs, as YARN's
// default scheduler (DefaultResourceCalculator, memory only) and torchrun do, so that a laptop
// runs a 5-task job.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/container_allocator.h"
#include "config/job_spec.h"

namespace tony::cluster {

struct LocalCapacity {
  ResourceAsk total;
  bool enforce_vcores = false;  // tony.local.vcores was set
  std::vector<int> gpu_ids;     // the GPUs containers may get, by index
};

// The capacity `local` sets (tony.local.*), with the machine's own for what it leaves unset.
LocalCapacity ResolveLocalCapacity(const config::LocalBackendSpec& local);

// Why `ask` can never be granted by `capacity`, or OK.
absl::Status CheckFitsLocally(const LocalCapacity& capacity, const std::string& what,
                              const ResourceAsk& ask);

}  // namespace tony::cluster
