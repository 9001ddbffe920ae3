#include "e2e/tony_runner.h"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "common/files.h"
#include "common/proc_table.h"
#include "common/process.h"

namespace tony::testing {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  return text.ok() ? *text : "";
}

std::string After(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  const size_t start = at + marker.size();
  const size_t end = text.find_first_of(" \n", start);
  return text.substr(start, end - start);
}

}  // namespace

TonyRunner::TonyRunner()
    : TonyRunner(std::getenv("TONY_E2E_BINARY") != nullptr && *std::getenv("TONY_E2E_BINARY")
                     ? std::getenv("TONY_E2E_BINARY")
                     : TONY_BINARY) {}

TonyRunner::TonyRunner(std::string binary) : binary_(std::move(binary)) {
  std::string pattern = (fs::temp_directory_path() / "tony-e2e-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  root_ = pattern;
  home_ = root_ + "/home";
  work_dir_ = root_ + "/work";
  fs::create_directories(home_);
  fs::create_directories(work_dir_);
  out_path_ = root_ + "/tony.out";
  err_path_ = root_ + "/tony.err";
}

TonyRunner::~TonyRunner() {
  // Never leave processes behind, even when a test failed half-way.
  for (pid_t pid : ProcessesWithEnv("TONY_HOME", home_)) SignalTree(pid, SIGKILL);
  if (std::getenv("TONY_E2E_KEEP") == nullptr) {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
}

namespace {

void CollectFiles(const fs::path& dir, const std::string& name, const std::string& path_part,
                  std::string* out) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    const fs::path path = it->path();
    if (it->is_directory(type_ec) && !it->is_symlink(type_ec)) {
      CollectFiles(path, name, path_part, out);
    } else if (path.filename() == name && path.string().find(path_part) != std::string::npos) {
      std::ifstream in(path);
      out->append(std::istreambuf_iterator<char>(in), {});
    }
  }
}

}  // namespace

std::string TonyRunner::ReadFilesBelow(const std::string& root, const std::string& name,
                                       const std::string& path_part) {
  std::string out;
  CollectFiles(root, name, path_part, &out);
  return out;
}

std::string TonyRunner::SourcePath(const std::string& relative) {
  return std::string(TONY_SOURCE_DIR) + "/" + relative;
}

std::string TonyRunner::Script(const std::string& name) {
  return SourcePath("tests/e2e/scripts/" + name);
}

pid_t TonyRunner::Start(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env) {
  std::error_code ec;
  fs::remove(out_path_, ec);
  fs::remove(err_path_, ec);
  SpawnOptions spawn;
  spawn.argv = {binary_};
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  spawn.set_env = env;
  spawn.set_env.emplace("TONY_HOME", home_);  // unless `env` names another runner's
  spawn.unset_env = {"TONY_CONF_DIR"};
  spawn.working_dir = work_dir_;
  spawn.stdout_path = out_path_;
  spawn.stderr_path = err_path_;
  absl::StatusOr<pid_t> pid = Spawn(spawn);
  return pid.ok() ? *pid : -1;
}

TonyResult TonyRunner::Wait(pid_t pid, int timeout_ms) {
  TonyResult result;
  absl::StatusOr<std::optional<ExitStatus>> status = WaitForExitFor(pid, timeout_ms);
  if (status.ok() && !status->has_value()) {
    result.timed_out = true;
    SignalTree(pid, SIGKILL);
    status = WaitForExitFor(pid, 10000);
  }
  if (status.ok() && status->has_value()) result.exit_code = (*status)->ShellCode();
  result.out = Slurp(out_path_);
  result.err = Slurp(err_path_);
  result.app_id = After(result.out, "tony: submitted ");
  if (!result.app_id.empty()) result.job_dir = home_ + "/jobs/" + result.app_id;
  return result;
}

TonyResult TonyRunner::Run(const std::vector<std::string>& args, int timeout_ms,
                           const std::map<std::string, std::string>& env) {
  pid_t pid = Start(args, env);
  if (pid < 0) return {};
  return Wait(pid, timeout_ms);
}

std::string TonyRunner::CurrentOutput() const { return Slurp(out_path_); }

std::string TonyRunner::SubmittedAppId() const {
  return After(Slurp(out_path_), "tony: submitted ");
}

bool TonyRunner::WaitForOutput(const std::string& text, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Slurp(out_path_).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

namespace {

// NUL-separated /proc text as a list of strings.
std::vector<std::string> ProcList(const std::string& path) {
  std::vector<std::string> items;
  std::string text = Slurp(path);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

}  // namespace

std::vector<pid_t> TonyRunner::FindJobProcesses(const std::string& cmdline_pattern,
                                                const std::map<std::string, std::string>& env,
                                                int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::regex pattern(cmdline_pattern);
  std::vector<pid_t> found;
  do {
    for (pid_t pid : ProcessesWithEnv("TONY_HOME", home_)) {
      const std::string proc = "/proc/" + std::to_string(pid);
      std::string cmdline;
      for (const std::string& arg : ProcList(proc + "/cmdline")) cmdline += arg + " ";
      if (!std::regex_search(cmdline, pattern, std::regex_constants::match_continuous)) continue;
      std::vector<std::string> environ = ProcList(proc + "/environ");
      bool all = true;
      for (const auto& [key, value] : env) {
        all = all && std::find(environ.begin(), environ.end(), key + "=" + value) != environ.end();
      }
      if (all) found.push_back(pid);
    }
    if (!found.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  return found;
}

bool TonyRunner::WaitForTaskOutput(const std::string& text, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    for (const auto& job : fs::directory_iterator(home_ + "/jobs", ec)) {
      for (const auto& container : fs::directory_iterator(job.path() / "logs", ec)) {
        if (Slurp((container.path() / "stdout").string()).find(text) != std::string::npos) {
          return true;
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::vector<pid_t> TonyRunner::LeftoverProcesses(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<pid_t> left;
  do {
    left = ProcessesWithEnv("TONY_HOME", home_);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  return left;
}

}  // namespace tony::testing
