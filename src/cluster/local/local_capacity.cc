#include "cluster/local/local_capacity.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/strings.h"
#include "config/value_parsers.h"

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

absl::StatusOr<LocalCapacity> ResolveLocalCapacity(const config::Configuration& conf) {
  LocalCapacity capacity;
  auto key_error = [&](const char* key, const absl::Status& status) {
    return absl::InvalidArgumentError(
        StrCat(key, " = \"", conf.Get(key), "\": ", ToStd(status.message())));
  };
  if (std::string memory = conf.Get("tony.local.memory"); !memory.empty()) {
    absl::StatusOr<int64_t> mb = config::ParseMemoryMb(memory);
    if (!mb.ok()) return key_error("tony.local.memory", mb.status());
    capacity.total.memory_mb = *mb;
  } else {
    capacity.total.memory_mb = MachineMemoryMb();
  }
  if (std::string vcores = conf.Get("tony.local.vcores"); !vcores.empty()) {
    absl::StatusOr<int64_t> n = config::ParseInt(vcores);
    if (!n.ok()) return key_error("tony.local.vcores", n.status());
    capacity.total.vcores = static_cast<int>(*n);
  } else {
    capacity.total.vcores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  int gpus = 0;
  if (std::string configured = conf.Get("tony.local.gpus"); !configured.empty()) {
    absl::StatusOr<int64_t> n = config::ParseInt(configured);
    if (!n.ok()) return key_error("tony.local.gpus", n.status());
    gpus = static_cast<int>(*n);
  } else {
    gpus = MachineGpus();
  }
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
  if (ask.vcores > total.vcores) {
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
