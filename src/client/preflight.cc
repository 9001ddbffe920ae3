#include "client/preflight.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "cluster/staging.h"
#include "common/archive.h"
#include "common/strings.h"
#include "config/value_parsers.h"

namespace tony::client {
namespace {

namespace fs = std::filesystem;

std::string FirstWord(const std::string& command) {
  std::string_view trimmed = StripWhitespace(command);
  const size_t end = trimmed.find_first_of(" \t");
  return std::string(trimmed.substr(0, end));
}

bool IsExecutableFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

bool IsScript(const std::string& word) {
  return word.ends_with(".py") || word.ends_with(".sh") || word.find('/') != std::string::npos;
}

}  // namespace

std::filesystem::path ResolveInputPath(const std::string& working_dir, const std::string& path) {
  std::filesystem::path p(path);
  return p.is_absolute() ? p : std::filesystem::path(working_dir) / p;
}

std::string FindInPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return IsExecutableFile(program) ? program : "";
  const char* path = std::getenv("PATH");
  for (std::string_view dir : Split(path ? path : "/usr/bin:/bin", ':')) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(std::string(dir)) / program;
    if (IsExecutableFile(candidate)) return candidate.string();
  }
  return "";
}

std::vector<std::string> DropMissingHdfsClasspath(config::JobSpec* spec,
                                                  config::Configuration* conf,
                                                  cluster::ClusterClient& cluster) {
  std::vector<std::string> warnings;
  for (const std::string& entry : spec->hdfs_classpath) {
    absl::StatusOr<cluster::ResourceSpec> resource = cluster::ParseResourceSpec(entry);
    if (!resource.ok() || !cluster::IsRemotePath(resource->path)) continue;
    absl::StatusOr<cluster::RemoteFileInfo> remote = cluster.StatRemote(resource->path);
    if (remote.status().code() != absl::StatusCode::kNotFound) continue;  // CheckInputs says more
    for (auto& [name, type] : spec->job_types) std::erase(type.localized_resources, entry);
    std::vector<std::string> kept = config::SplitList(conf->Get("tony.containers.resources"));
    std::erase(kept, entry);
    conf->Replace("tony.containers.resources", Join(kept, ","),
                  config::ValueSource::Flag("--hdfs_classpath"));
    warnings.push_back(StrCat("--hdfs_classpath ", entry,
                              ": no such file or directory; left out of the job, as TonY does"));
  }
  return warnings;
}

absl::Status CheckInputs(const config::JobSpec& spec, const std::string& working_dir,
                         cluster::ClusterClient& cluster) {
  std::error_code ec;
  const std::string& src_dir = spec.src_dir;
  if (!src_dir.empty() && !fs::exists(ResolveInputPath(working_dir, src_dir), ec)) {
    return absl::NotFoundError(StrCat("--src_dir ", src_dir, ": no such file or directory"));
  }
  if (!src_dir.empty() && !fs::is_directory(ResolveInputPath(working_dir, src_dir), ec)) {
    if (absl::Status readable =
            CheckArchiveReadable(ResolveInputPath(working_dir, src_dir).string());
        !readable.ok()) {
      return absl::InvalidArgumentError(
          StrCat("--src_dir ", src_dir, ": ", ToStd(readable.message())));
    }
  }
  const std::string& venv = spec.python_venv;
  if (!venv.empty()) {
    if (cluster::IsRemotePath(venv)) {
      absl::StatusOr<cluster::RemoteFileInfo> remote = cluster.StatRemote(venv);
      if (!remote.ok()) {
        return absl::Status(remote.status().code(),
                            StrCat("--python_venv ", ToStd(remote.status().message())));
      }
      if (remote->is_directory) {
        return absl::InvalidArgumentError(
            StrCat("--python_venv ", venv, ": a directory, not a zipped virtualenv"));
      }
    } else if (absl::Status readable =
                   CheckArchiveReadable(ResolveInputPath(working_dir, venv).string());
               !readable.ok()) {
      return absl::InvalidArgumentError(
          StrCat("--python_venv ", venv, ": ", ToStd(readable.message())));
    }
  }
  // A local output directory on the local backend (on YARN it is each node's): one that exists
  // must be a directory the user can write, one that does not must be one the user can make.
  if (const std::string& outputs = spec.output_dir;
      !outputs.empty() && outputs.find("://") == std::string::npos && spec.backend == "local") {
    fs::path dir = ResolveInputPath(working_dir, outputs);
    while (!fs::exists(dir, ec) && dir.has_relative_path()) dir = dir.parent_path();
    if (!fs::is_directory(dir, ec)) {
      return absl::InvalidArgumentError(
          StrCat("--output_dir ", outputs, ": ", dir.string(), " is not a directory"));
    }
    if (access(dir.c_str(), W_OK | X_OK) != 0) {
      return absl::InvalidArgumentError(
          StrCat("--output_dir ", outputs, ": ", dir.string(), " is not writable by this user"));
    }
  }
  const std::string& python = spec.python_exec_path;
  if (!python.empty() && venv.empty()) {
    const bool found = python.find('/') != std::string::npos
                           ? IsExecutableFile(ResolveInputPath(working_dir, python))
                           : !FindInPath(python).empty();
    if (!found) {
      return absl::NotFoundError(StrCat("--python_binary_path ", python, ": no such executable"));
    }
  }
  const std::string& executes = spec.executes;
  if (!executes.empty()) {
    const std::string word = FirstWord(executes);
    const fs::path base = src_dir.empty() ? fs::path(working_dir)
                          : fs::is_directory(ResolveInputPath(working_dir, src_dir), ec)
                              ? ResolveInputPath(working_dir, src_dir)
                              : fs::path();
    bool found = true;
    if (!base.empty()) {
      const bool as_file =
          fs::exists(fs::path(word).is_absolute() ? fs::path(word) : base / word, ec);
      found = as_file || (!IsScript(word) && python.empty() && !FindInPath(word).empty());
    }
    if (!found) {
      return absl::NotFoundError(StrCat(
          "--executes ", word, ": no such file",
          src_dir.empty() ? StrCat(" in ", working_dir) : StrCat(" in --src_dir ", src_dir)));
    }
  }
  for (const auto& [name, type] : spec.job_types) {
    for (const std::string& text : type.localized_resources) {
      absl::StatusOr<cluster::ResourceSpec> resource = cluster::ParseResourceSpec(text);
      if (!resource.ok()) {
        return absl::InvalidArgumentError(
            StrCat("tony.", name, ".resources: ", ToStd(resource.status().message())));
      }
      if (cluster::IsRemotePath(resource->path)) {
        absl::StatusOr<cluster::RemoteFileInfo> remote = cluster.StatRemote(resource->path);
        if (!remote.ok()) {
          return absl::Status(
              remote.status().code(),
              StrCat("tony.", name, ".resources: ", ToStd(remote.status().message())));
        }
        if (remote->is_directory && resource->is_archive) {
          return absl::InvalidArgumentError(StrCat("tony.", name, ".resources: ", resource->path,
                                                   ": a directory cannot be an #archive"));
        }
        continue;
      }
      const fs::path local = ResolveInputPath(working_dir, resource->path);
      if (!fs::exists(local, ec)) {
        return absl::NotFoundError(
            StrCat("tony.", name, ".resources: ", resource->path, ": no such file or directory"));
      }
      // An archive whose entries would land outside the task's directory is refused now, not
      // when a task unpacks it.
      if (resource->is_archive && !fs::is_directory(local, ec)) {
        if (absl::Status readable = CheckArchiveReadable(local.string()); !readable.ok()) {
          return absl::InvalidArgumentError(
              StrCat("tony.", name, ".resources: ", ToStd(readable.message())));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace tony::client
