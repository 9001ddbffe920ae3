#pragma once
// tony.history.retention-sec for the job directories under $TONY_HOME/jobs/: a directory whose
// job has ended and that nothing has changed for longer than the retention is removed, by
// `tony gc` and by each local `tony submit`. A job has ended when its final-status.json exists,
// or when its am.pid names no process, or a process that is not that job's AM (FindAm). A directory
// with neither file (the copy a YARN job's client keeps) has ended as far as this machine can tell.
// A directory whose AM may still run is never touched.
//
// Threads: any thread; no state beyond the options.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/clock.h"

namespace tony::cluster {

struct ExpiredJobDir {
  std::string app_id;
  std::string path;
  int64_t age_ms = 0;         // since the newest change of the directory or its top-level entries
  std::string ended_because;  // e.g. "final status recorded", "its AM (pid 4242) has exited"
  // Its outputs/ holds something and stays: Remove takes the rest.
  bool keeps_outputs = false;
};

// The AM of a job directory, as its am.pid ("<pid> <start time in clock ticks>") and the process
// table tell. A pid counts as the AM only while the process of that pid started at that time and
// carries the job's marker (TONY_JOB_DIR=<job_dir>): a reused pid or a hand-made am.pid names no
// AM, so nothing is ever signalled on its word alone.
struct AmProcess {
  enum class State { kRunning, kGone, kUnknown };
  State state = State::kUnknown;
  pid_t pid = 0;       // kRunning: the AM's pid
  std::string reason;  // kGone, kUnknown: why, for messages ("am.pid cannot be read: ...")
};
[[nodiscard]] AmProcess FindAm(const std::string& job_dir);

// What am.pid holds for the AM `pid`; "" if the process cannot be read (it has exited).
[[nodiscard]] std::string AmPidRecord(pid_t pid);

// Sends `sig` to `pid` only if it is still the AM FindAm found (checked through a pidfd, so that
// the pid cannot be reused between the check and the signal). False if it is not, or is gone.
bool SignalAm(const std::string& job_dir, pid_t pid, int sig);

// How we know that the job of `job_dir` has ended; nullopt while its AM may still run.
std::optional<std::string> JobEndedBecause(const std::string& job_dir);

// Milliseconds since the epoch of the newest modification of `job_dir` or of an entry directly
// in it (links not followed); nullopt if the directory cannot be read.
std::optional<int64_t> NewestChangeMs(const std::string& job_dir);

// A job's outputs (tony.application.output-dir's default, <job dir>/outputs) outlive its
// directory: an expired directory loses everything else, unless `remove_outputs` (tony gc
// --outputs) or its outputs/ is empty; one that holds nothing but its outputs is not expired.
class JobDirRetention {
 public:
  // `retention_sec` <= 0 keeps every directory forever.
  JobDirRetention(const std::string& tony_home, int64_t retention_sec, const Clock* clock,
                  bool remove_outputs = false);

  bool KeepsForever() const { return retention_sec_ <= 0; }
  const std::string& jobs_dir() const { return jobs_dir_; }

  // The ended job directories (named application_<timestamp>_<n>) older than the retention, in
  // the order of their application ids. Nothing if the retention keeps them forever or there is
  // no jobs directory.
  std::vector<ExpiredJobDir> FindExpired() const;

  // Removes one directory FindExpired returned; the error names it and the reason.
  [[nodiscard]] absl::Status Remove(const ExpiredJobDir& dir) const;

 private:
  const std::string jobs_dir_;
  const int64_t retention_sec_;
  const Clock* const clock_;
  const bool remove_outputs_;
};

}  // namespace tony::cluster
