#include "history/history_reader.h"

#include <algorithm>
#include <charconv>
#include <tuple>

namespace tony::history {
namespace {

std::optional<int> ParseNumber(std::string_view text) {
  int value = 0;
  if (text.empty() || text.size() > 9) return std::nullopt;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

absl::StatusOr<JobLocation> FindJob(HistoryFs& fs, const HistoryDirs& dirs,
                                    const std::string& app_id) {
  for (const auto& [root, finished] :
       {std::pair{dirs.finished, true}, std::pair{dirs.intermediate, false}}) {
    const std::string dir = StrCat(root, "/", app_id);
    absl::StatusOr<HistoryEntry> entry = fs.Stat(dir);
    if (entry.ok() && entry->is_directory) return JobLocation{dir, finished};
    if (!entry.ok() && !absl::IsNotFound(entry.status())) return entry.status();
  }
  return absl::NotFoundError(StrCat("no history of ", app_id, " in ", fs.Describe(dirs.finished),
                                    " or ", fs.Describe(dirs.intermediate),
                                    " (tony.history.location)"));
}

std::optional<LogFile> ParseLogName(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  LogFile file;
  file.stream = std::string(name.substr(dot + 1));
  if (file.stream != "stdout" && file.stream != "stderr") return std::nullopt;
  std::string_view rest = name.substr(0, dot);
  const size_t second = rest.rfind('-');
  if (second == std::string_view::npos) return std::nullopt;
  const size_t first = rest.rfind('-', second == 0 ? 0 : second - 1);
  if (first == std::string_view::npos || first == 0 || first >= second) return std::nullopt;
  std::optional<int> index = ParseNumber(rest.substr(first + 1, second - first - 1));
  std::optional<int> attempt = ParseNumber(rest.substr(second + 1));
  if (!index || !attempt) return std::nullopt;
  file.type = std::string(rest.substr(0, first));
  file.index = *index;
  file.attempt = *attempt;
  file.name = std::string(name);
  return file;
}

absl::StatusOr<std::vector<LogFile>> ListLogs(HistoryFs& fs, const std::string& job_dir) {
  absl::StatusOr<std::vector<HistoryEntry>> entries = fs.List(StrCat(job_dir, "/", kLogsDir));
  if (absl::IsNotFound(entries.status())) return std::vector<LogFile>();
  if (!entries.ok()) return entries.status();
  std::vector<LogFile> files;
  for (const HistoryEntry& entry : *entries) {
    if (entry.is_directory) continue;
    if (std::optional<LogFile> file = ParseLogName(entry.name)) {
      file->size = entry.size;
      files.push_back(*std::move(file));
    }
  }
  std::sort(files.begin(), files.end(), [](const LogFile& a, const LogFile& b) {
    const bool a_err = a.stream != "stdout";
    const bool b_err = b.stream != "stdout";
    return std::tie(a.type, a.index, a.attempt, a_err) < std::tie(b.type, b.index, b.attempt, b_err);
  });
  return files;
}

}  // namespace tony::history
