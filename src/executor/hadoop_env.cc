#include "executor/hadoop_env.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/files.h"
#include "common/process.h"
#include "common/strings.h"
#include "spdlog/spdlog.h"

namespace tony::executor {
namespace {

namespace fs = std::filesystem;

constexpr char kJobHadoopConf[] = "hadoop-conf";  // cluster::kHadoopConfDir

// The node's `hadoop` command, or "".
std::string FindHadoopCommand() {
  std::error_code ec;
  for (const char* home : {"HADOOP_HOME", "HADOOP_COMMON_HOME", "HADOOP_PREFIX"}) {
    const char* dir = std::getenv(home);
    if (dir == nullptr || *dir == '\0') continue;
    const std::string command = StrCat(dir, "/bin/hadoop");
    if (access(command.c_str(), X_OK) == 0) return command;
  }
  const char* path = std::getenv("PATH");
  for (std::string_view dir : Split(path != nullptr ? path : "", ':')) {
    if (dir.empty()) continue;
    const std::string command = StrCat(dir, "/hadoop");
    if (access(command.c_str(), X_OK) == 0 && !fs::is_directory(command, ec)) return command;
  }
  return "";
}

// `hadoop classpath --glob`, or "" (with a warning) when it fails.
std::string HadoopClasspath(const std::string& command, const std::string& scratch_dir,
                            const std::string& conf_dir, int timeout_ms) {
  const std::string out = StrCat(scratch_dir, "/.hadoop-classpath");
  SpawnOptions spawn;
  spawn.argv = {command, "classpath", "--glob"};
  if (!conf_dir.empty()) spawn.set_env["HADOOP_CONF_DIR"] = conf_dir;
  spawn.stdout_path = out;
  spawn.stderr_path = StrCat(scratch_dir, "/.hadoop-classpath.err");
  spawn.new_process_group = true;
  absl::StatusOr<pid_t> pid = Spawn(spawn);
  if (!pid.ok()) {
    spdlog::warn("no CLASSPATH for the task: {}", ToStd(pid.status().message()));
    return "";
  }
  absl::StatusOr<std::optional<ExitStatus>> exit = WaitForExitFor(*pid, timeout_ms);
  if (exit.ok() && !exit->has_value()) {
    kill(-*pid, SIGKILL);
    (void)WaitForExit(*pid);
  }
  absl::StatusOr<std::string> text = ReadFile(out);
  std::error_code ec;
  fs::remove(out, ec);
  fs::remove(spawn.stderr_path, ec);
  if (!exit.ok() || !exit->has_value() || (*exit)->ShellCode() != 0 || !text.ok()) {
    spdlog::warn("no CLASSPATH for the task: `{} classpath --glob` {}", command,
                 exit.ok() && exit->has_value() ? (*exit)->ToString() : "did not finish in time");
    return "";
  }
  return std::string(StripWhitespace(*text));
}

}  // namespace

std::map<std::string, std::string> HadoopTaskEnvironment(const std::string& working_dir,
                                                         const std::string& scratch_dir,
                                                         int timeout_ms) {
  std::map<std::string, std::string> env;
  std::error_code ec;
  const fs::path job_conf = fs::path(working_dir) / kJobHadoopConf;
  std::string conf_dir;
  if (fs::is_directory(job_conf, ec)) {
    conf_dir = fs::absolute(job_conf, ec).string();
    env["HADOOP_CONF_DIR"] = conf_dir;
  }
  const std::string command = FindHadoopCommand();
  if (command.empty()) return env;
  std::string classpath = HadoopClasspath(command, scratch_dir, conf_dir, timeout_ms);
  if (classpath.empty()) return env;
  if (const char* existing = std::getenv("CLASSPATH"); existing != nullptr && *existing) {
    classpath = StrCat(classpath, ":", existing);
  }
  env["CLASSPATH"] = classpath;
  return env;
}

}  // namespace tony::executor
