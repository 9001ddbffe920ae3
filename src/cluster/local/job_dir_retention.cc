#include "cluster/local/job_dir_retention.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "cluster/local/job_dir_cleanup.h"
#include "cluster/staging.h"
#include "common/files.h"
#include "common/proc_table.h"
#include "common/strings.h"

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

constexpr char kJobDirMarker[] = "TONY_JOB_DIR=";

std::optional<int64_t> ModifiedMs(const std::string& path) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) return std::nullopt;
  return static_cast<int64_t>(info.st_mtim.tv_sec) * 1000 + info.st_mtim.tv_nsec / 1000000;
}

// Whether the environment the process `pid` started with names `job_dir` as its job directory;
// nullopt if it cannot be read (another user's process).
std::optional<bool> IsAmOf(pid_t pid, const std::string& job_dir) {
  absl::StatusOr<std::string> environ = ReadFile(StrCat("/proc/", pid, "/environ"));
  if (!environ.ok()) return std::nullopt;
  for (std::string_view entry : Split(*environ, '\0')) {
    if (!entry.starts_with(kJobDirMarker)) continue;
    std::error_code ec;
    const std::string named(entry.substr(sizeof(kJobDirMarker) - 1));
    // The same directory however it was spelled (a relative or non-canonical TONY_HOME).
    if (named == job_dir || fs::equivalent(named, job_dir, ec)) return true;
  }
  return false;
}

// The (timestamp, sequence) of "application_<timestamp>_<sequence>", or nullopt for any other name.
std::optional<std::pair<int64_t, int64_t>> ApplicationOrder(const std::string& name) {
  std::vector<std::string_view> parts = Split(name, '_');
  if (parts.size() != 3 || parts[0] != "application" || parts[1].empty() || parts[2].empty()) {
    return std::nullopt;
  }
  for (std::string_view part : {parts[1], parts[2]}) {
    if (!std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
  }
  return std::make_pair(std::atoll(std::string(parts[1]).c_str()),
                        std::atoll(std::string(parts[2]).c_str()));
}

// Whether `job_dir` holds nothing but its outputs/ (a directory an earlier run of the retention
// left).
bool OnlyOutputsLeft(const std::string& job_dir) {
  std::error_code ec;
  for (fs::directory_iterator it(job_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() != kOutputsDir) return false;
  }
  return !ec;
}

}  // namespace

std::string AmPidRecord(pid_t pid) {
  std::optional<ProcessInfo> info = ReadProcessInfo(pid);
  return info.has_value() ? StrCat(pid, " ", info->start_ticks, "\n") : "";
}

AmProcess FindAm(const std::string& job_dir) {
  const std::string path = StrCat(job_dir, "/am.pid");
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status()))
      return {AmProcess::State::kGone, 0, "no AM on this machine"};
    return {AmProcess::State::kUnknown, 0,
            StrCat(path, " cannot be read: ", text.status().message())};
  }
  std::vector<std::string_view> fields = Split(StripWhitespace(*text), ' ');
  const pid_t pid =
      fields.empty() ? 0 : static_cast<pid_t>(std::atol(std::string(fields[0]).c_str()));
  if (fields.empty() || fields.size() > 2 || pid <= 0) {
    return {AmProcess::State::kUnknown, 0, StrCat(path, " does not name a process")};
  }
  std::optional<ProcessInfo> info = ReadProcessInfo(pid);
  if (!info.has_value() || info->state == 'Z') {
    return {AmProcess::State::kGone, pid, StrCat("its AM (pid ", pid, ") has exited")};
  }
  // The start time, where recorded (an am.pid of an older tony has the pid alone: the job's
  // marker decides then).
  const bool started_then =
      fields.size() < 2 ||
      info->start_ticks == std::strtoull(std::string(fields[1]).c_str(), nullptr, 10);
  const std::optional<bool> marked = IsAmOf(pid, job_dir);
  if (fields.size() < 2 && !marked.has_value()) {
    return {AmProcess::State::kUnknown, pid,
            StrCat("whether pid ", pid, " in ", path, " is the job's AM cannot be read")};
  }
  if (!started_then || marked != std::optional<bool>(true)) {
    return {AmProcess::State::kGone, pid,
            StrCat("its AM (pid ", pid, ") has exited; the pid is another process's now")};
  }
  return {AmProcess::State::kRunning, pid, ""};
}

bool SignalAm(const std::string& job_dir, pid_t pid, int sig) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return false;
  // Checked after the pidfd was opened: if it is the AM now, the pidfd is the AM's.
  const AmProcess am = FindAm(job_dir);
  const bool sent = am.state == AmProcess::State::kRunning && am.pid == pid &&
                    syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) == 0;
  close(pidfd);
  return sent;
}

std::optional<std::string> JobEndedBecause(const std::string& job_dir) {
  std::error_code ec;
  if (fs::exists(StrCat(job_dir, "/final-status.json"), ec)) return "final status recorded";
  const AmProcess am = FindAm(job_dir);
  if (am.state == AmProcess::State::kGone) return am.reason;
  return std::nullopt;  // running, or cannot tell
}

std::optional<int64_t> NewestChangeMs(const std::string& job_dir) {
  std::optional<int64_t> newest = ModifiedMs(job_dir);
  if (!newest.has_value()) return std::nullopt;
  std::error_code ec;
  for (fs::directory_iterator it(job_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (std::optional<int64_t> entry = ModifiedMs(it->path().string())) {
      newest = std::max(*newest, *entry);
    }
  }
  if (ec) return std::nullopt;
  return newest;
}

JobDirRetention::JobDirRetention(const std::string& tony_home, int64_t retention_sec,
                                 const Clock* clock, bool remove_outputs)
    : jobs_dir_(StrCat(tony_home, "/jobs")),
      retention_sec_(retention_sec),
      clock_(clock),
      remove_outputs_(remove_outputs) {}

std::vector<ExpiredJobDir> JobDirRetention::FindExpired() const {
  std::vector<std::pair<std::pair<int64_t, int64_t>, ExpiredJobDir>> found;
  if (KeepsForever()) return {};
  const int64_t now = clock_->WallMs();
  std::error_code ec;
  for (fs::directory_iterator it(jobs_dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_directory(type_ec) || it->is_symlink(type_ec)) continue;
    const std::string name = it->path().filename().string();
    std::optional<std::pair<int64_t, int64_t>> order = ApplicationOrder(name);
    if (!order.has_value()) continue;
    ExpiredJobDir dir;
    dir.app_id = name;
    dir.path = StrCat(jobs_dir_, "/", name);
    std::optional<int64_t> changed = NewestChangeMs(dir.path);
    if (!changed.has_value()) continue;
    dir.age_ms = now - *changed;
    if (dir.age_ms <= retention_sec_ * 1000) continue;
    std::optional<std::string> ended = JobEndedBecause(dir.path);
    if (!ended.has_value()) continue;
    dir.ended_because = *std::move(ended);
    if (!remove_outputs_) {
      const fs::path outputs = fs::path(dir.path) / kOutputsDir;
      std::error_code outputs_ec;
      dir.keeps_outputs = fs::is_directory(fs::symlink_status(outputs, outputs_ec)) &&
                          !fs::is_empty(outputs, outputs_ec) && !outputs_ec;
      if (dir.keeps_outputs && OnlyOutputsLeft(dir.path)) continue;  // nothing else to remove
    }
    found.emplace_back(*order, std::move(dir));
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<ExpiredJobDir> expired;
  expired.reserve(found.size());
  for (auto& [order, dir] : found) expired.push_back(std::move(dir));
  return expired;
}

absl::Status JobDirRetention::Remove(const ExpiredJobDir& dir) const {
  if (!dir.keeps_outputs) return RemoveTree(dir.path);
  std::error_code ec;
  for (fs::directory_iterator it(dir.path, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == kOutputsDir) continue;
    if (absl::Status removed = RemoveTree(it->path().string()); !removed.ok()) return removed;
  }
  if (ec) return absl::InternalError(StrCat("cannot read ", dir.path, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace tony::cluster
