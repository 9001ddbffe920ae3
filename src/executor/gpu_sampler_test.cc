#include "executor/gpu_sampler.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace tony::executor {
namespace {

constexpr char kTwoGpus[] =
    "0, GPU-1111, 40, 1024\n"
    "1, GPU-2222, 80, 3072\n";

TEST(GpuSamplerTest, OnlyTheTasksOwnGpusCount) {
  std::optional<GpuUse> all = ParseGpuQuery(kTwoGpus, "");
  ASSERT_TRUE(all.has_value());
  EXPECT_DOUBLE_EQ(all->utilization, 60);
  EXPECT_EQ(all->memory_bytes, int64_t{4096} << 20);
  std::optional<GpuUse> second = ParseGpuQuery(kTwoGpus, "1");
  ASSERT_TRUE(second.has_value());
  EXPECT_DOUBLE_EQ(second->utilization, 80);
  EXPECT_EQ(second->memory_bytes, int64_t{3072} << 20);
  std::optional<GpuUse> by_uuid = ParseGpuQuery(kTwoGpus, "GPU-1111");
  ASSERT_TRUE(by_uuid.has_value());
  EXPECT_DOUBLE_EQ(by_uuid->utilization, 40);
  EXPECT_FALSE(ParseGpuQuery(kTwoGpus, "3").has_value());
  EXPECT_FALSE(ParseGpuQuery("No devices were found\n", "").has_value());
  EXPECT_FALSE(ParseGpuQuery("0, GPU-1, [N/A], 10\n", "").has_value());
}

TEST(GpuSamplerTest, RunsTheProgramAndSaysOnceWhenItFails) {
  char pattern[] = "/tmp/tony_gpu_XXXXXX";
  const std::string dir = mkdtemp(pattern);
  const std::string program = dir + "/nvidia-smi";
  {
    std::ofstream script(program);
    script << "#!/bin/sh\n[ \"$1\" = --query-gpu=index,uuid,utilization.gpu,memory.used ] || "
              "exit 9\nprintf '"
           << kTwoGpus << "'\n";
  }
  chmod(program.c_str(), 0755);  // a stand-in program: it must be executable, nothing secret in it
  GpuSampler sampler(program, "0", dir + "/scratch");
  std::optional<GpuUse> use = sampler.Sample();
  ASSERT_TRUE(use.has_value());
  EXPECT_DOUBLE_EQ(use->utilization, 40);
  EXPECT_FALSE(std::filesystem::exists(dir + "/scratch")) << "nothing left behind";
  GpuSampler missing(dir + "/no-such-program", "", dir + "/scratch");
  EXPECT_FALSE(missing.Sample().has_value());
  EXPECT_FALSE(missing.Sample().has_value());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tony::executor
