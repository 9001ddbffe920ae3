#include "cluster/local/local_capacity.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/strings.h"

namespace tony::cluster {
namespace {

int64_t MachineMemoryMb() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemTotal:") return kib / 1024;
  }
  return 0;
}

// NVIDIA's driver lists one directory per GPU; no need to run nvidia-smi for a count.
int MachineGpus() {
  std::error_code ec;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    (void)entry;
    ++count;
  }
  return count;
}

std::string Mb(int64_t mb) { return mb % 1024 == 0 ? StrCat(mb / 1024, "g") : StrCat(mb, "m"); }

}  // namespace

LocalCapacity ResolveLocalCapacity(const config::LocalBackendSpec& local) {
  LocalCapacity capacity;
  // Detected only where the configuration leaves it unset.
  capacity.total.memory_mb = local.memory_mb ? *local.memory_mb : MachineMemoryMb();
  capacity.enforce_vcores = local.vcores.has_value();
  capacity.total.vcores = local.vcores
                              ? *local.vcores
                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int gpus = local.gpus ? *local.gpus : MachineGpus();
  capacity.total.gpus = gpus;
  for (int i = 0; i < gpus; ++i) capacity.gpu_ids.push_back(i);
  return capacity;
}

absl::Status CheckFitsLocally(const LocalCapacity& capacity, const std::string& what,
                              const ResourceAsk& ask) {
  const ResourceAsk& total = capacity.total;
  if (ask.memory_mb > total.memory_mb) {
    return absl::ResourceExhaustedError(StrCat(what, " asks for ", Mb(ask.memory_mb),
                                               " of memory, but this machine offers ",
                                               Mb(total.memory_mb), " in all (tony.local.memory)"));
  }
  if (capacity.enforce_vcores && ask.vcores > total.vcores) {
    return absl::ResourceExhaustedError(StrCat(what, " asks for ", ask.vcores,
                                               " vcores, but this machine offers ", total.vcores,
                                               " in all (tony.local.vcores)"));
  }
  if (ask.gpus > total.gpus) {
    return absl::ResourceExhaustedError(StrCat(what, " asks for ", ask.gpus,
                                               " GPUs, but this machine offers ", total.gpus,
                                               " (tony.local.gpus)"));
  }
  return absl::OkStatus();
}

}  // namespace tony::cluster
