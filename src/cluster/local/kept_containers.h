#pragma once
// The records by which a later AM attempt adopts the containers of an earlier one on the local
// backend (tony.am.retry-count above 0): one file per running container in the job directory's
// running/, written when it is launched and removed when it ends. A record names the process
// (pid and start time, which together name it uniquely) and the container as it was granted.
//
// Threads: plain functions.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cluster/container_allocator.h"

namespace tony::cluster {

struct KeptContainer {
  pid_t pid = 0;             // the container's guard
  uint64_t start_ticks = 0;  // its start time (/proc/<pid>/stat), 0: unknown
  Container container;
  std::vector<int> gpus;  // the GPUs it holds
};

// <job_dir>/running/<container id>.json
std::string KeptContainerPath(const std::string& job_dir, const std::string& container_id);

// Writes `kept`'s record (running/ is made private to the user first).
absl::Status WriteKeptContainer(const std::string& job_dir, const KeptContainer& kept);

// Every record in the job directory's running/; a file that is no record is removed (logged
// with `app_id`) and left out. Whether each process still runs is the caller's to check.
std::vector<KeptContainer> ReadKeptContainers(const std::string& job_dir,
                                              const std::string& app_id);

}  // namespace tony::cluster
