#include "executor/task_sandbox.h"

#include <cstdlib>
#include <filesystem>
#include <set>

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
