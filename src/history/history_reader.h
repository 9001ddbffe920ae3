#pragma once
// Reads jobs' histories (history_format.h) for `tony logs` and `tony history`. Every file may be
// partial (a job whose AM was killed mid-write) or damaged: readers skip what they cannot parse
// and say so, and never fail on it.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "history/history_format.h"
#include "history/history_fs.h"

namespace tony::history {

struct JobLocation {
  std::string dir;        // the job's history directory
  bool finished = false;  // in the finished directory: the AM recorded the job's end
};

// Where `app_id`'s history is: the finished directory first. kNotFound names both directories.
absl::StatusOr<JobLocation> FindJob(HistoryFs& fs, const HistoryDirs& dirs,
                                    const std::string& app_id);

// One task attempt's log file.
struct LogFile {
  std::string type;
  int index = 0;
  int attempt = 0;
  std::string stream;  // "stdout" or "stderr"
  std::string name;    // LogFileName(type, index, attempt, stream)
  int64_t size = 0;
  std::string Task() const { return type + ":" + std::to_string(index); }
};

// "worker-1-0.stdout" as a LogFile (size 0); nullopt for any other name. Task types may hold
// '-': the index and attempt are the last two fields.
std::optional<LogFile> ParseLogName(std::string_view name);

// The job's log files, by task type, index, attempt, then stdout before stderr. A job that has
// printed nothing yet has none.
absl::StatusOr<std::vector<LogFile>> ListLogs(HistoryFs& fs, const std::string& job_dir);

}  // namespace tony::history
