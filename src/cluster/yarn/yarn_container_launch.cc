// YarnContainerAllocator's launches: what a task container localizes, and the launcher threads
// that start containers through their NodeManagers (yarn_container_allocator.h).

#include <string>

#include "cluster/staging.h"
#include "cluster/yarn/yarn_container_allocator.h"
#include "common/strings.h"
#include "spdlog/spdlog.h"

namespace tony::cluster {
namespace {

// The AM's own command line is a list joined by the NodeManager into one shell command.
std::string ShellQuote(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,") ==
          std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

absl::StatusOr<YarnContainerAllocator::SourceFiles> YarnContainerAllocator::LookUp(
    const std::string& source) {
  {
    MutexLock lock(mu_);
    if (auto it = sources_.find(source); it != sources_.end()) return it->second;
  }
  // Staged files are paths under the staging directory; the user's own are hdfs:// URIs, on
  // fs.defaultFS or another NameNode (resolved as the client did).
  absl::StatusOr<hadoop::YarnUrl> url = IsRemotePath(source)
                                            ? namenodes_.Resolve(source)
                                            : hadoop::YarnUrl::Parse(options_.default_fs);
  if (!url.ok()) return url.status();
  if (!IsRemotePath(source)) url->file = source;
  hadoop::WebHdfsClient* hdfs = &hdfs_;
  if (IsRemotePath(source)) {
    absl::StatusOr<hadoop::WebHdfsClient*> client = namenodes_.ClientFor(*url);
    if (!client.ok()) return client.status();
    hdfs = *client;
  }
  absl::StatusOr<hadoop::FileStatus> status = hdfs->GetFileStatus(url->file);
  if (!status.ok()) return status.status();
  SourceFiles files{*url, {}};
  if (!status->is_directory) {
    files.entries.push_back(*status);
  } else {
    // A directory on HDFS (TonY's --hdfs_classpath): its files, each under its own name in the
    // working directory; subdirectories are not descended into.
    absl::StatusOr<std::vector<hadoop::FileStatus>> entries = hdfs->ListStatus(url->file);
    if (!entries.ok()) return entries.status();
    std::string dir = url->file;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    for (hadoop::FileStatus& entry : *entries) {
      if (entry.is_directory) continue;
      entry.path_suffix = StrCat(dir == "/" ? "" : dir, "/", entry.path_suffix);
      files.entries.push_back(std::move(entry));
    }
  }
  MutexLock lock(mu_);
  return sources_.emplace(source, std::move(files)).first->second;
}

absl::Status YarnContainerAllocator::Localize(
    const LocalResource& file, const std::string& name,
    std::map<std::string, hadoop::LocalResource>& resources) {
  absl::StatusOr<SourceFiles> files = LookUp(file.source);
  if (!files.ok()) return files.status();
  for (const hadoop::FileStatus& entry : files->entries) {
    hadoop::LocalResource resource;
    resource.url = files->url;
    // A plain file keeps its path and takes `name`; a directory's files keep their own names.
    const bool whole = entry.path_suffix.empty();
    if (!whole) resource.url.file = entry.path_suffix;
    resource.size = entry.length;
    resource.timestamp_ms = entry.modification_time_ms;
    resource.type =
        file.is_archive ? hadoop::LocalResourceType::kArchive : hadoop::LocalResourceType::kFile;
    // As the client asks for the AM's copy of the same file (HdfsJobFiles::Cached), so that the
    // NodeManager has one copy for both.
    resource.visibility = file.reusable ? hadoop::LocalResourceVisibility::kPrivate
                                        : hadoop::LocalResourceVisibility::kApplication;
    resources[whole ? name : entry.path_suffix.substr(entry.path_suffix.rfind('/') + 1)] = resource;
  }
  return absl::OkStatus();
}

absl::Status YarnContainerAllocator::Launch(const Container& container, const LaunchSpec& spec) {
  {
    MutexLock lock(mu_);
    if (!granted_.count(container.id)) {
      return absl::FailedPreconditionError(StrCat(container.id, " is not a granted container"));
    }
    if (stopping_) return absl::UnavailableError("the allocator is shutting down");
    launched_.insert(container.id);
    launches_.push_back({container.id, spec});
  }
  launch_wake_.NotifyOne();
  return absl::OkStatus();
}

void YarnContainerAllocator::LauncherLoop() {
  while (true) {
    PendingLaunch next;
    hadoop::Container yarn;
    {
      MutexLock lock(mu_);
      while (!stopping_ && launches_.empty()) launch_wake_.Wait(mu_);
      if (stopping_) return;
      next = std::move(launches_.front());
      launches_.pop_front();
      auto it = granted_.find(next.container_id);
      if (it == granted_.end()) continue;  // it ended while queued
      yarn = it->second;
    }
    absl::Status started = StartOnNode(yarn, next.spec);
    if (started.ok()) continue;
    spdlog::warn("starting {} on {}: {}", next.container_id, yarn.node_host,
                 ToStd(started.message()));
    {
      MutexLock lock(mu_);
      if (!granted_.count(next.container_id)) continue;  // its end came meanwhile
      launched_.erase(next.container_id);
      granted_.erase(next.container_id);
      stop_at_.erase(next.container_id);
      failed_starts_.insert(next.container_id);
      releases_.push_back(yarn.id);
    }
    wake_.NotifyAll();
    callbacks_.on_completed({next.container_id, kExitLaunchFailed,
                             std::string(ToStd(started.message())),
                             ContainerExit::Cause::kLaunchFailed});
  }
}

absl::Status YarnContainerAllocator::StartOnNode(const hadoop::Container& yarn,
                                                 const LaunchSpec& spec) {
  hadoop::ContainerLaunchContext launch;
  for (const LocalResource& file : options_.common_files) {
    if (absl::Status s = Localize(file, file.name, launch.local_resources); !s.ok()) return s;
  }
  int unpacked = 0;
  for (const LocalResource& file : spec.resources) {
    // YARN unpacks an archive into a directory of its name; the source zip (name "") is reached
    // through a link the executor's command line unpacks it from.
    std::string name = file.name.empty() ? StrCat("tony-unpack-", unpacked++) : file.name;
    if (absl::Status s = Localize(file, name, launch.local_resources); !s.ok()) {
      return absl::Status(s.code(), StrCat("localizing ", file.source, ": ", ToStd(s.message())));
    }
  }
  std::string command;
  for (int i = 0; i < unpacked; ++i) {
    // Archives meant for the working directory itself: copy their contents in.
    command += StrCat("cp -a tony-unpack-", i, "/. . && ");
  }
  for (const std::string& word : spec.argv) command += ShellQuote(word) + " ";
  command += "1>><LOG_DIR>/executor.log 2>&1";
  launch.commands = {command};
  launch.environment = spec.env;
  hadoop::Credentials credentials;
  for (const auto& [alias, secret] : spec.secrets) credentials.AddSecret(alias, secret);
  for (const auto& [alias, secret] : options_.task_secrets) credentials.AddSecret(alias, secret);
  // The NodeManager localizes the task's files with them, and the task reads HDFS with them.
  {
    MutexLock lock(mu_);
    for (const hadoop::Token& token : hdfs_tokens_) credentials.AddToken(token.service, token);
    for (const hadoop::Token& token : kms_tokens_) credentials.AddToken(token.service, token);
  }
  launch.tokens = credentials.Serialize(hadoop::Credentials::Format::kWritable);
  return nm_.StartContainer(yarn, launch);
}

}  // namespace tony::cluster
