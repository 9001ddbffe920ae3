#pragma once
// What a container asks for, in YARN's units: one type for the job's configuration
// (config::Resources) and the backends (cluster::ResourceAsk), so that nothing converts between
// them by hand.

#include <cstdint>

namespace tony {

struct Resources {
  int64_t memory_mb = 0;
  int vcores = 1;  // YARN's minimum allocation; every job type's tony.<type>.vcores sets its own
  int gpus = 0;
  bool operator==(const Resources&) const = default;
};

}  // namespace tony
