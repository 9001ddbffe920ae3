#include "am/am_process.h"

#include <malloc.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/process.h"
#include "common/strings.h"
#include "spdlog/spdlog.h"

namespace tony::am {
namespace {

// What the AM raises its soft limit on open files to, at most (the hard limit permitting).
constexpr int64_t kAmMaxOpenFiles = 65536;

}  // namespace

void LimitMallocArenas() {
  // glibc gives each thread that allocates while another holds an arena's lock an arena of its
  // own, up to 8 per core, and memory freed in one is not reused by the others: gRPC's threads
  // and the loop hand every call's buffers between them. Two arenas keep the AM of a 4,096-task
  // job about 8 MB smaller at its peak, at no measurable cost to its calls (bench/am_scale.py);
  // Hadoop's daemons are run with MALLOC_ARENA_MAX for the same reason. glibc fixes the number
  // the first time a second arena is needed, hence before any thread.
  mallopt(M_ARENA_MAX, 2);
}

void RaiseOpenFileLimitForTasks(const std::string& app_id, int tasks) {
  // A connection per task: a job of thousands needs more descriptors than the usual soft limit
  // of 1024.
  if (absl::StatusOr<int64_t> files = RaiseOpenFileLimit(kAmMaxOpenFiles); !files.ok()) {
    spdlog::warn("[{}] {}", app_id, ToStd(files.status().message()));
  } else if (*files < 2 * static_cast<int64_t>(tasks) + 256) {
    spdlog::warn(
        "[{}] this AM may open at most {} files (ulimit -Hn) and holds a connection per task: a "
        "job of {} tasks may run out",
        app_id, *files, tasks);
  }
}

}  // namespace tony::am
