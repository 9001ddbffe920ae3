#include "executor/gpu_sampler.h"

#include <signal.h>

#include <charconv>
#include <cstdio>
#include <filesystem>

#include "common/files.h"
#include "common/process.h"
#include "common/strings.h"
#include "spdlog/spdlog.h"

namespace tony::executor {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

std::optional<double> Number(std::string_view text) {
  text = Trim(text);
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

std::optional<GpuUse> ParseGpuQuery(std::string_view csv, std::string_view visible) {
  std::vector<std::string_view> wanted;
  visible = Trim(visible);
  if (!visible.empty() && visible != "all") {
    for (std::string_view item : Split(visible, ',')) wanted.push_back(Trim(item));
  }
  GpuUse use;
  int gpus = 0;
  for (std::string_view line : Split(csv, '\n')) {
    std::vector<std::string_view> fields = Split(line, ',');
    if (fields.size() != 4) continue;
    const std::string_view index = Trim(fields[0]);
    const std::string_view uuid = Trim(fields[1]);
    if (!wanted.empty() && std::find_if(wanted.begin(), wanted.end(), [&](std::string_view w) {
                             return w == index || w == uuid;
                           }) == wanted.end()) {
      continue;
    }
    std::optional<double> utilization = Number(fields[2]);
    std::optional<double> memory_mib = Number(fields[3]);
    if (!utilization || !memory_mib) continue;
    use.utilization += *utilization;
    use.memory_bytes += static_cast<int64_t>(*memory_mib * 1024 * 1024);
    ++gpus;
  }
  if (gpus == 0) return std::nullopt;
  use.utilization /= gpus;
  return use;
}

GpuSampler::GpuSampler(std::string program, std::string visible, std::string scratch)
    : program_(std::move(program)), visible_(std::move(visible)), scratch_(std::move(scratch)) {}

std::optional<GpuUse> GpuSampler::Sample() {
  std::error_code ec;
  std::filesystem::remove(scratch_, ec);
  SpawnOptions spawn;
  spawn.argv = {program_, "--query-gpu=index,uuid,utilization.gpu,memory.used",
                "--format=csv,noheader,nounits"};
  spawn.stdout_path = scratch_;
  spawn.stderr_path = "/dev/null";
  spawn.output_mode = 0600;
  absl::StatusOr<pid_t> pid = Spawn(spawn);
  std::optional<GpuUse> use;
  std::string why;
  if (!pid.ok()) {
    why = std::string(ToStd(pid.status().message()));
  } else {
    absl::StatusOr<std::optional<ExitStatus>> exit = WaitForExitFor(*pid, kTimeoutMs);
    if (exit.ok() && !exit->has_value()) {
      kill(*pid, SIGKILL);
      (void)WaitForExit(*pid);
      why = StrCat("it ran longer than ", kTimeoutMs, " ms");
    } else if (!exit.ok() || (*exit)->ShellCode() != 0) {
      why = exit.ok() ? (*exit)->ToString() : std::string(ToStd(exit.status().message()));
    } else {
      absl::StatusOr<std::string> out = ReadFile(scratch_);
      if (out.ok()) use = ParseGpuQuery(*out, visible_);
      if (!use) why = StrCat("it listed none of the task's GPUs (", visible_, ")");
    }
  }
  std::filesystem::remove(scratch_, ec);
  if (!use && !warned_) {
    warned_ = true;
    spdlog::warn("no GPU metrics from {}: {} (tony.gpu-exec-path)", program_, why);
  }
  return use;
}

}  // namespace tony::executor
