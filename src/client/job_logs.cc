#include "client/job_logs.h"

#include <chrono>
#include <limits>
#include <map>
#include <thread>

#include "client/job_report.h"
#include "client/tony_client.h"
#include "common/strings.h"
#include "config/key_names.h"
#include "history/history_reader.h"

namespace tony::client {
namespace {

// A read of one log file past what was printed: at most this much at a time.
constexpr int64_t kReadBytes = 1 << 20;

bool Wanted(const history::LogFile& file, const LogsOptions& options) {
  if (options.task && (file.type != options.task->type || file.index != options.task->index)) {
    return false;
  }
  return file.stream == "stdout" ? options.stdout_stream : options.stderr_stream;
}

// --follow: "[worker:1] ", "[worker:1#2 stderr] " (attempt 2's stderr).
std::string Prefix(const history::LogFile& file) {
  return StrCat("[", file.Task(), file.attempt > 0 ? StrCat("#", file.attempt) : "",
                file.stream == "stderr" ? " stderr" : "", "] ");
}

std::string Header(const history::LogFile& file) {
  return StrCat("==> ", file.Task(), " attempt ", file.attempt, " ", file.stream, " <==\n");
}

}  // namespace

absl::StatusOr<config::TaskRef> ParseTaskFlag(const std::string& text) {
  const size_t colon = text.rfind(':');
  int index = -1;
  if (colon != std::string::npos && colon > 0) {
    const std::string digits = text.substr(colon + 1);
    if (!digits.empty() && digits.size() < 9 &&
        digits.find_first_not_of("0123456789") == std::string::npos) {
      index = std::stoi(digits);
    }
  }
  if (index < 0) {
    return absl::InvalidArgumentError(
        StrCat("--task '", config::ForMessage(text), "': expected TYPE:INDEX, e.g. worker:0"));
  }
  return config::TaskRef{text.substr(0, colon), index};
}

int ShowLogs(history::HistoryFs& fs, const history::HistoryDirs& dirs, const LogsOptions& options,
             std::ostream& out, std::ostream& err, const std::function<bool()>& interrupted) {
  absl::StatusOr<history::JobLocation> where = history::FindJob(fs, dirs, options.app_id);
  while (options.wait_for_history && !where.ok() && !interrupted()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options.poll_ms));
    where = history::FindJob(fs, dirs, options.app_id);
  }
  if (!where.ok()) {
    err << "tony: error: " << where.status().message() << "\n";
    return absl::IsNotFound(where.status()) ? kExitBadInput : kExitJobFailed;
  }
  // What was printed of each file, and (--follow) the part of a line not printed yet.
  std::map<std::string, int64_t> printed;
  std::map<std::string, std::string> partial;
  bool any = false;
  while (true) {
    const bool finished = where->finished;
    absl::StatusOr<std::vector<history::LogFile>> files = history::ListLogs(fs, where->dir);
    if (!files.ok() && !options.follow) {
      err << "tony: error: " << files.status().message() << "\n";
      return kExitJobFailed;
    }
    for (const history::LogFile& file : files.ok() ? *files : std::vector<history::LogFile>()) {
      if (!Wanted(file, options)) continue;
      int64_t& done = printed[file.name];
      while (done < file.size) {
        absl::StatusOr<std::string> data =
            fs.Read(StrCat(where->dir, "/", history::kLogsDir, "/", file.name), done,
                    std::min(kReadBytes, file.size - done));
        if (!data.ok() || data->empty()) break;  // moved meanwhile: found again below
        if (!options.follow) {
          if (done == 0) out << (any ? "\n" : "") << Header(file);
          any = true;
          done += static_cast<int64_t>(data->size());
          out << TerminalSafe(*data, std::numeric_limits<size_t>::max());
          if (done == file.size && !data->ends_with('\n')) out << "\n";
          continue;
        }
        done += static_cast<int64_t>(data->size());
        any = true;
        // Whole lines only, each with its task, so that tasks' lines never mix.
        std::string& rest = partial[file.name];
        rest += *data;
        const size_t last = rest.rfind('\n');
        if (last == std::string::npos) continue;
        for (std::string_view line : Split(std::string_view(rest).substr(0, last), '\n')) {
          // One write per line: another thread's lines (the client's progress) never cut in.
          out << StrCat(Prefix(file), TerminalSafe(line, options.max_line), "\n");
        }
        rest.erase(0, last + 1);
      }
    }
    out << std::flush;
    if (!options.follow || finished || interrupted()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(options.poll_ms));
    // The AM moves the job's history when the job ends: look for it again.
    absl::StatusOr<history::JobLocation> again = history::FindJob(fs, dirs, options.app_id);
    if (again.ok()) where = *again;
  }
  for (const auto& [name, rest] : partial) {
    if (rest.empty()) continue;
    std::optional<history::LogFile> file = history::ParseLogName(name);
    out << StrCat(file ? Prefix(*file) : StrCat("[", name, "] "),
                  TerminalSafe(rest, options.max_line), "\n");
  }
  if (!any && options.wait_for_history) return kExitSucceeded;  // --tee of a silent job
  if (!any) {
    err << "tony: error: " << options.app_id << " has no "
        << (options.stdout_stream && options.stderr_stream ? "output"
            : options.stderr_stream                        ? "stderr output"
                                                           : "stdout output")
        << (options.task ? StrCat(" of ", options.task->ToString()) : std::string())
        << " in its history"
        << (options.stderr_stream ? "" : " (--stderr or --all show its stderr)") << "\n";
    return kExitBadInput;
  }
  return kExitSucceeded;
}

}  // namespace tony::client
