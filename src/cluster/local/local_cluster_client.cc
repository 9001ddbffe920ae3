#include "cluster/local/local_cluster_client.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "cluster/local/job_dir_retention.h"
#include "cluster/staging.h"
#include "common/files.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "common/strings.h"
#include "config/job_spec.h"
#include "config/key_catalog.h"
#include "nlohmann/json.hpp"
#include "rpc/launch_contract.h"
#include "spdlog/spdlog.h"

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

// Less free space than this, and a missing final-status.json is most likely a full disk's doing.
constexpr uint64_t kAlmostFullBytes = uint64_t{64} * 1024;

}  // namespace

LocalClusterClient::LocalClusterClient(std::string tony_home, const Clock* clock)
    : tony_home_(std::move(tony_home)), clock_(clock) {}

std::string LocalClusterClient::JobDir(const std::string& app_id) const {
  return StrCat(tony_home_, "/jobs/", app_id);
}

absl::StatusOr<std::string> LocalClusterClient::NewApplicationId() {
  // $TONY_HOME (which may be a link to a directory elsewhere) and jobs/ are the user's alone: in
  // a directory others may write, they could replace the files tony writes with links.
  if (absl::Status home = EnsurePrivateDir(tony_home_, /*follow_link=*/true); !home.ok()) {
    return home;
  }
  if (absl::Status jobs = EnsurePrivateDir(StrCat(tony_home_, "/jobs")); !jobs.ok()) return jobs;
  // A counter shared by concurrent clients on this machine, under an exclusive lock. Never
  // written through a link, and only if it is this user's own regular file.
  const std::string path = StrCat(tony_home_, "/application-sequence");
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno == ELOOP) {
    return absl::FailedPreconditionError(
        StrCat("'", path, "' is a symbolic link; tony writes only its own file there"));
  }
  if (fd < 0) return absl::InternalError(StrCat(path, ": ", std::strerror(errno)));
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != geteuid() ||
      (info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    close(fd);
    return absl::FailedPreconditionError(
        StrCat("'", path, "' is not a regular file of this user's that only it may write"));
  }
  flock(fd, LOCK_EX);
  char buffer[32] = {};
  const ssize_t n = pread(fd, buffer, sizeof(buffer) - 1, 0);
  const long previous = n > 0 ? std::strtol(buffer, nullptr, 10) : 0;
  const long next = previous + 1;
  const std::string text = std::to_string(next) + "\n";
  const bool ok = ftruncate(fd, 0) == 0 &&
                  pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
  flock(fd, LOCK_UN);
  close(fd);
  if (!ok) return absl::InternalError(StrCat(path, ": cannot update the sequence"));
  std::string sequence = std::to_string(next);
  if (sequence.size() < 4) sequence.insert(0, 4 - sequence.size(), '0');
  return StrCat("application_", clock_->WallMs(), "_", sequence);
}

absl::Status LocalClusterClient::Submit(const AmSubmission& submission) {
  Submitted& submitted = submitted_[submission.app_id];
  submitted = {submission, 1};
  return SpawnAm(submitted);
}

absl::Status LocalClusterClient::SpawnAm(const Submitted& submitted) {
  const AmSubmission& submission = submitted.submission;
  SpawnOptions spawn;
  spawn.argv = submission.argv;
  spawn.set_env = submission.env;
  rpc::AmLaunch launch;
  launch.app_id = submission.app_id;
  launch.am_attempt = submitted.attempt;
  launch.submitted_ms = submission.submitted_ms;
  for (auto& [name, value] : launch.ToEnv()) spawn.set_env[name] = std::move(value);
  // Inherited by every executor and user process: how the client finds what is left of the job.
  spawn.set_env["TONY_JOB_DIR"] = submission.job_dir;
  spawn.working_dir = submission.job_dir;
  spawn.stdout_path = StrCat(submission.job_dir, "/am.log");
  spawn.stderr_path = spawn.stdout_path;
  // Its own session: a Ctrl-C at the terminal reaches the client, which then stops the job in
  // order, rather than every process at once.
  spawn.new_session = true;
  absl::StatusOr<pid_t> pid = Spawn(spawn);
  if (!pid.ok()) return pid.status();
  // Without am.pid nothing outside this client could find the AM (tony kill, tony gc): an AM
  // that cannot be recorded (a full disk) is stopped at once.
  const std::string record = AmPidRecord(*pid);
  if (absl::Status recorded =
          record.empty() ? absl::InternalError(StrCat("the AM (pid ", *pid, ") exited at once"))
                         : WriteFile(StrCat(submission.job_dir, "/am.pid"), record, 0600);
      !recorded.ok()) {
    SignalTree(*pid, SIGKILL);
    (void)WaitForExit(*pid);
    return recorded;
  }
  children_[submission.app_id] = *pid;
  return absl::OkStatus();
}

pid_t LocalClusterClient::AmPid(const std::string& app_id) const {
  if (auto it = children_.find(app_id); it != children_.end()) return it->second;
  const AmProcess am = FindAm(JobDir(app_id));
  return am.state == AmProcess::State::kRunning ? am.pid : 0;
}

absl::StatusOr<AppReport> LocalClusterClient::GetReport(const std::string& app_id) {
  const std::string dir = JobDir(app_id);
  std::error_code ec;
  const bool found = fs::is_directory(dir, ec);
  if (!found && ec != std::errc::permission_denied) {
    return absl::NotFoundError(StrCat("no application ", app_id, " under ", tony_home_));
  }
  if (!found || (access(dir.c_str(), R_OK | X_OK) != 0 && errno == EACCES)) {
    // Another user's job: what is missing cannot be told from what is hidden.
    return absl::PermissionDeniedError(StrCat("cannot read the job directory ", dir,
                                              " (another user's job?): ", strerror(EACCES)));
  }
  AppReport report;
  if (absl::StatusOr<std::string> address = ReadFile(dir + "/am.address"); address.ok()) {
    report.am_address = std::string(StripWhitespace(*address));
    report.state = AppState::kRunning;
    if (absl::StatusOr<std::string> url = ReadFile(dir + "/am.tracking-url"); url.ok()) {
      report.tracking_url = std::string(StripWhitespace(*url));
    }
  }
  if (absl::StatusOr<std::string> final = ReadFile(dir + "/final-status.json"); final.ok()) {
    nlohmann::json record = nlohmann::json::parse(*final, nullptr, false);
    if (record.is_object()) {
      report.final_state = record.value("final_state", "");
      report.diagnostics = record.value("diagnostics", "");
      if (record.contains("job_status")) report.status_json = record["job_status"].dump();
    }
  }
  // Whether the AM process still runs: reap it if it is ours, else ask the kernel.
  bool am_gone = false;
  std::string am_exit;
  if (auto it = children_.find(app_id); it != children_.end()) {
    if (auto done = exits_.find(app_id); done != exits_.end()) {
      am_gone = true;
      am_exit = done->second;
    } else {
      absl::StatusOr<std::optional<ExitStatus>> status = PollExit(it->second);
      if (status.ok() && status->has_value()) {
        am_gone = true;
        am_exit = (*status)->ToString();
        exits_[app_id] = am_exit;
      }
    }
  } else {
    const AmProcess am = FindAm(dir);
    if (am.state == AmProcess::State::kUnknown && report.final_state.empty()) {
      // Not this user's job directory, or not one tony wrote: say so rather than guess.
      return absl::PermissionDeniedError(
          StrCat("cannot tell whether the AM of ", app_id, " runs: ", am.reason));
    }
    am_gone = am.state != AmProcess::State::kRunning;
    am_exit = "exited";
  }
  if (am_gone) {
    report.tracking_url.clear();  // the status page went with the AM
  } else {
    // A short job can end before its client first saw the address; the AM then waits there
    // for the client's acknowledgement, as on YARN.
    report.last_am_address = report.am_address;
  }
  const auto kept = [&] {
    auto it = submitted_.find(app_id);
    return it != submitted_.end() && it->second.submission.keep_containers;
  };
  if (!report.final_state.empty()) {
    // Containers kept for another attempt go with the AM that recorded the end (one that died
    // before its shutdown stopped them would leave them to their executors' recovery time).
    if (am_gone && kept()) KillLeftovers(JobDir(app_id));
    report.state = report.final_state == "SUCCEEDED" ? AppState::kFinished
                   : report.final_state == "KILLED"  ? AppState::kKilled
                                                     : AppState::kFailed;
  } else if (am_gone && RetryAm(app_id)) {
    report = AppReport{};  // the new attempt has no address yet
    report.state = AppState::kSubmitted;
  } else if (am_gone) {
    // Containers kept for an attempt that will not come go now.
    if (kept()) KillLeftovers(JobDir(app_id));
    report.state = AppState::kFailed;
    report.final_state = "FAILED";
    report.diagnostics = StrCat("the AM ", am_exit.empty() ? "exited" : am_exit,
                                " before it recorded a final status; see ", dir, "/am.log");
    if (struct statvfs fs_info{}; statvfs(dir.c_str(), &fs_info) == 0 &&
                                  fs_info.f_bavail * fs_info.f_frsize < kAlmostFullBytes) {
      report.diagnostics += StrCat(" (the file system of ", dir,
                                   " is full: ", fs_info.f_bavail * fs_info.f_frsize / 1024,
                                   " KiB free; the AM may have been unable to write it)");
    }
    if (absl::StatusOr<std::vector<std::string>> tail = ReadTailLines(dir + "/am.log", 5);
        tail.ok() && !tail->empty()) {
      report.diagnostics += StrCat(":\n  ", Join(*tail, "\n  "));
    }
  }
  if (auto it = submitted_.find(app_id); it != submitted_.end()) {
    report.attempt = it->second.attempt;
  }
  report.app_id = app_id;
  return report;
}

bool LocalClusterClient::RetryAm(const std::string& app_id) {
  auto it = submitted_.find(app_id);
  if (it == submitted_.end() || it->second.attempt >= it->second.submission.max_attempts) {
    return false;
  }
  // Nothing of the failed attempt may run beside the next one (YARN kills its containers too),
  // unless the next attempt adopts its containers.
  if (!it->second.submission.keep_containers) KillLeftovers(it->second.submission.job_dir);
  std::error_code ec;
  fs::remove(it->second.submission.job_dir + "/am.address", ec);
  fs::remove(it->second.submission.job_dir + "/am.tracking-url", ec);
  const std::string previous_exit = exits_[app_id];
  exits_.erase(app_id);
  it->second.attempt += 1;
  if (absl::Status spawned = SpawnAm(it->second); !spawned.ok()) {
    it->second.attempt = it->second.submission.max_attempts;  // no further tries
    exits_[app_id] = previous_exit;  // the reaped AM is still the one this client knows
    return false;
  }
  return true;
}

absl::Status LocalClusterClient::Kill(const std::string& app_id, bool force) {
  const pid_t pid = AmPid(app_id);
  if (force) {
    const bool am_running = pid > 0 && !exits_.count(app_id) && kill(pid, 0) == 0;
    if (am_running) SignalTree(pid, SIGKILL);
    KillLeftovers(JobDir(app_id));
    if (am_running && children_.count(app_id)) {
      if (absl::StatusOr<ExitStatus> status = WaitForExit(pid); status.ok()) {
        exits_[app_id] = status->ToString();
      }
    }
    return absl::OkStatus();
  }
  const bool ours = children_.count(app_id) != 0;
  if (pid <= 0 || !(ours ? kill(pid, SIGTERM) == 0 : SignalAm(JobDir(app_id), pid, SIGTERM))) {
    return absl::NotFoundError(StrCat("the AM of ", app_id, " is not running"));
  }
  return absl::OkStatus();
}

absl::Status LocalClusterClient::AwaitAmExit(const std::string& app_id, int64_t timeout_ms) {
  auto it = children_.find(app_id);
  if (it == children_.end()) return absl::OkStatus();
  if (!exits_.count(app_id)) {
    absl::StatusOr<std::optional<ExitStatus>> status =
        WaitForExitFor(it->second, static_cast<int>(timeout_ms));
    if (!status.ok()) return status.status();
    if (!status->has_value()) {
      return absl::DeadlineExceededError(
          StrCat("the AM of ", app_id, " still runs ", timeout_ms, " ms after the job ended"));
    }
    exits_[app_id] = (*status)->ToString();
  }
  // The AM is reaped: its pid may be anyone's from now on.
  std::error_code ec;
  fs::remove(StrCat(JobDir(app_id), "/am.pid"), ec);
  return absl::OkStatus();
}

int LocalClusterClient::KillLeftovers(const std::string& job_dir) {
  int killed = 0;
  // Repeat: a process may fork while the previous pass runs.
  for (int pass = 0; pass < 10; ++pass) {
    std::vector<pid_t> pids = ProcessesWithEnv("TONY_JOB_DIR", job_dir);
    std::erase(pids, getpid());
    if (pids.empty()) break;
    for (pid_t pid : pids) {
      SignalTree(pid, SIGKILL);
      ++killed;
    }
  }
  return killed;
}

absl::StatusOr<RemoteFileInfo> LocalClusterClient::StatRemote(const std::string& uri) {
  return absl::InvalidArgumentError(StrCat(uri, ": hdfs:// paths need --backend yarn"));
}

absl::StatusOr<std::string> LocalClusterClient::OutputDir(const std::string& app_id,
                                                          const std::string& requested) {
  if (requested.empty()) return StrCat(JobDir(app_id), "/", kOutputsDir);
  if (!requested.starts_with('/')) {
    return absl::InvalidArgumentError(StrCat("output directory '", requested, "' is not absolute"));
  }
  return requested;
}

absl::Status LocalClusterClient::MakeOutputDir(const std::string& dir) {
  return EnsureOutputDir(dir);
}

absl::StatusOr<std::vector<AppReport>> LocalClusterClient::ListApplications(
    const std::string& application_type, bool include_ended) {
  std::vector<std::pair<std::pair<int64_t, int64_t>, std::string>> ids;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(tony_home_ + "/jobs", ec)) {
    const std::string name = entry.path().filename().string();
    // application_<cluster timestamp>_<sequence>, listed in that order.
    std::vector<std::string_view> parts = Split(name, '_');
    if (parts.size() != 3 || parts[0] != "application") continue;
    ids.push_back(
        {{std::atoll(std::string(parts[1]).c_str()), std::atoll(std::string(parts[2]).c_str())},
         name});
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return absl::InternalError(StrCat("cannot list ", tony_home_, "/jobs: ", ec.message()));
  }
  std::sort(ids.begin(), ids.end());
  std::vector<AppReport> reports;
  std::vector<std::string> unreadable;
  for (const auto& [order, app_id] : ids) {
    if (access(JobDir(app_id).c_str(), R_OK | X_OK) != 0 && errno == EACCES) {
      unreadable.push_back(app_id);  // another user's job: say so instead of leaving it out
      continue;
    }
    // Only this backend's jobs of that type: a YARN job's client keeps its directory here too.
    config::Configuration conf = config::KeyCatalog::BuiltIn().Defaults();
    if (!conf.LoadXmlFile(StrCat(JobDir(app_id), "/", kFinalConfFile),
                          config::SourceKind::kConfFile)
             .ok()) {
      continue;
    }
    absl::StatusOr<config::JobControlSpec> control = config::BuildJobControlSpec(conf);
    if (!control.ok() || control->backend != "local" ||
        control->application_type != application_type) {
      continue;
    }
    absl::StatusOr<AppReport> report = GetReport(app_id);
    if (!report.ok() || (!include_ended && !report->final_state.empty())) continue;
    report->app_id = app_id;
    report->name = control->name;
    struct stat info {};
    if (stat(JobDir(app_id).c_str(), &info) == 0) {
      if (const passwd* owner = getpwuid(info.st_uid); owner != nullptr)
        report->user = owner->pw_name;
    }
    reports.push_back(*std::move(report));
  }
  if (!unreadable.empty()) {
    spdlog::warn(
        "cannot read the job directories of {} under {}/jobs (another user's jobs?): {}",
        unreadable.size() == 1 ? "1 application" : StrCat(unreadable.size(), " applications"),
        tony_home_, Join(unreadable, ", "));
  }
  return reports;
}

}  // namespace tony::cluster
