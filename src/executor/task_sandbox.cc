#include "executor/task_sandbox.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <utility>

#include "common/strings.h"
#include "rpc/job_credentials.h"

namespace tony::executor {
namespace {

namespace fs = std::filesystem;

// The directory above `path` ("" for "/" or a relative path's top).
std::string Parent(const std::string& path) {
  std::string parent = fs::path(path).lexically_normal().parent_path().string();
  return parent == "/" || parent == path ? "" : parent;
}

std::string Normal(const std::string& path) {
  std::string normal = fs::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

}  // namespace

SandboxInputs SandboxInputsFromEnvironment() {
  SandboxInputs inputs;
  std::error_code ec;
  inputs.working_dir = fs::current_path(ec).string();
  auto get = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
  };
  inputs.job_dir = get("TONY_JOB_DIR");
  const std::string local_dirs = get("LOCAL_DIRS");
  for (std::string_view dir : Split(local_dirs, ',')) {
    if (!dir.empty()) inputs.local_dirs.emplace_back(dir);
  }
  inputs.container_id = get("CONTAINER_ID");
  inputs.tony_home = get("TONY_HOME");
  if (inputs.tony_home.empty() && !get("HOME").empty()) inputs.tony_home = get("HOME") + "/.tony";
  return inputs;
}

absl::StatusOr<SandboxedCommand> SandboxedCommand::Prepare(SpawnOptions* spawn) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::ErrnoToStatus(errno, "cannot create the sandbox's status pipe");
  }
  spawn->sandbox = TaskSandbox(SandboxInputsFromEnvironment());
  spawn->sandbox->status_fd = fds[1];
  std::vector<std::string> paths;
  paths.reserve(spawn->sandbox->covers.size());
  for (const Sandbox::Cover& cover : spawn->sandbox->covers) paths.push_back(cover.path);
  return SandboxedCommand(fds[0], fds[1], Join(paths, ", "));
}

SandboxedCommand::SandboxedCommand(SandboxedCommand&& other) noexcept
    : read_fd_(std::exchange(other.read_fd_, -1)),
      write_fd_(std::exchange(other.write_fd_, -1)),
      hidden_(std::move(other.hidden_)),
      peak_rss_bytes_(other.peak_rss_bytes_) {}

SandboxedCommand::~SandboxedCommand() {
  if (read_fd_ >= 0) close(read_fd_);
  Spawned();
}

void SandboxedCommand::Spawned() {
  if (write_fd_ >= 0) close(write_fd_);
  write_fd_ = -1;
}

int64_t ReapedPeakRss(const SandboxedCommand* sandbox) {
  if (sandbox != nullptr) return sandbox->peak_rss_bytes();
  rusage children{};
  if (getrusage(RUSAGE_CHILDREN, &children) != 0) return 0;
  return static_cast<int64_t>(children.ru_maxrss) * 1024;
}

ExitStatus SandboxedCommand::ExitOf(const ExitStatus& init_status) {
  return ReadSandboxedStatus(read_fd_, init_status, &peak_rss_bytes_);
}

Sandbox TaskSandbox(const SandboxInputs& inputs) {
  Sandbox sandbox;
  sandbox.working_dir = inputs.working_dir;
  std::set<std::string> covered;
  auto cover = [&](const std::string& path, std::vector<std::string> keep = {}) {
    if (path.empty() || path[0] != '/' || !covered.insert(path).second) return;
    sandbox.covers.push_back({path, std::move(keep)});
  };
  if (!inputs.job_dir.empty() && inputs.job_dir[0] == '/') {
    const std::string job_dir = Normal(inputs.job_dir);
    cover(Parent(job_dir), {job_dir});
    for (const char* name : {rpc::kSecretFile, rpc::kAmKeyFile, "am.pid", "secrets"}) {
      cover(StrCat(job_dir, "/", name));
    }
  }
  for (const std::string& local_dir : inputs.local_dirs) {
    if (local_dir.empty() || local_dir[0] != '/') continue;
    const std::string app_dir = Normal(local_dir);
    const std::string appcache = Parent(app_dir);
    std::vector<std::string> keep = {StrCat(app_dir, "/filecache")};
    if (!inputs.container_id.empty()) keep.push_back(StrCat(app_dir, "/", inputs.container_id));
    cover(appcache, std::move(keep));
    // <root>/usercache/<user>/appcache/<app>: the NodeManager's private files are <root>/nmPrivate.
    const std::string root = Parent(Parent(Parent(appcache)));
    if (!root.empty()) cover(StrCat(root, "/nmPrivate"));
  }
  // A client's jobs on this host (YARN; on the local backend they are the job directory's parent,
  // covered above with this job's kept).
  if (inputs.job_dir.empty() && !inputs.tony_home.empty()) {
    cover(StrCat(Normal(inputs.tony_home), "/jobs"));
  }
  return sandbox;
}

}  // namespace tony::executor
