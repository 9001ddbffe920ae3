#pragma once
// The GPU use of a task's own GPUs, from nvidia-smi (tony.gpu-exec-path), as TonY samples it:
// utilization and memory used. The task's GPUs are those its container was given
// (CUDA_VISIBLE_DEVICES or NVIDIA_VISIBLE_DEVICES: indexes or UUIDs), else every GPU listed.
//
// Thread: the executor's supervision loop. Each Sample runs the program once, for at most
// kTimeoutMs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tony::executor {

struct GpuUse {
  double utilization = 0;    // percent, averaged over the task's GPUs
  int64_t memory_bytes = 0;  // used, summed over them
};

// nvidia-smi --query-gpu=index,uuid,utilization.gpu,memory.used --format=csv,noheader,nounits
// output, for the GPUs `visible` names ("0,2", "GPU-xxxx"; "" or "all" for every one). nullopt when
// no line of a visible GPU could be read.
std::optional<GpuUse> ParseGpuQuery(std::string_view csv, std::string_view visible);

class GpuSampler {
 public:
  static constexpr int kTimeoutMs = 5000;
  // `program`: tony.gpu-exec-path; `scratch`: a file the program's output may go to.
  GpuSampler(std::string program, std::string visible, std::string scratch);
  // Runs the program; nullopt (with a warning once) when it fails or lists none of the GPUs.
  std::optional<GpuUse> Sample();

 private:
  const std::string program_;
  const std::string visible_;
  const std::string scratch_;
  bool warned_ = false;
};

}  // namespace tony::executor
