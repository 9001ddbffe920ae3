#pragma once
// Writes one job's history (history_format.h) from the AM, on a thread of its own: callers only
// queue, so writing never slows the job, and a failure (a full disk, HDFS unreachable) is a
// warning in the AM's log while the job goes on. Queued data is written about once per
// flush interval, appends to the same file in one call.
//
// Limits: at most max_pending_bytes wait to be written; more is dropped (and counted, and said in
// job.json's "history_dropped_bytes"). Each log file keeps at most max_log_bytes, then a line
// saying the rest is not kept.
//
// Threads: every method may be called from any thread; the AM calls them from its loop.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "common/mutex.h"
#include "history/history_format.h"
#include "history/history_fs.h"

namespace tony::history {

struct HistoryWriterOptions {
  std::shared_ptr<HistoryFs> fs;
  HistoryDirs dirs;
  std::string app_id;
  int64_t flush_interval_ms = 1000;
  size_t max_pending_bytes = size_t{32} << 20;
  int64_t max_log_bytes = int64_t{64} << 20;
};

class HistoryWriter {
 public:
  explicit HistoryWriter(HistoryWriterOptions options);
  // Writes what is queued (as Close, without moving the job) and stops.
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  // One line of events.jsonl / metrics.jsonl: a JSON object without a newline.
  void Event(std::string json_object);
  void Metric(std::string json_object);
  // Output of a task attempt, appended to logs/<file>.
  void Log(const std::string& file, std::string_view bytes);
  // Replaces a whole file of the job's directory (job.json, config.json).
  void Replace(const std::string& file, std::string content);

  // Writes `job_json` as job.json, everything queued before it, and moves the job's directory to
  // the finished one. Later calls queue nothing. Waits at most `timeout_ms`; an error says what
  // could not be written (the history may then be partial or stay in the intermediate directory).
  absl::Status Close(std::string job_json, int64_t timeout_ms);

  // The job's history directory: the intermediate one, or the finished one once moved.
  std::string dir() const;
  int64_t dropped_bytes() const;

 private:
  struct Op {
    bool replace = false;
    std::string file;  // relative to the job's directory
    std::string data;
  };
  void Queue(Op op);
  void Loop();
  // Writes one batch; returns the first error.
  absl::Status WriteBatch(std::deque<Op> batch);
  absl::Status Move();
  void Warn(const absl::Status& error);

  const HistoryWriterOptions options_;
  const std::string intermediate_dir_;
  const std::string finished_dir_;
  mutable Mutex mu_;
  CondVar wake_;
  CondVar idle_;
  std::deque<Op> pending_ TONY_GUARDED_BY(mu_);
  size_t pending_bytes_ TONY_GUARDED_BY(mu_) = 0;
  int64_t dropped_bytes_ TONY_GUARDED_BY(mu_) = 0;
  std::map<std::string, int64_t> log_bytes_ TONY_GUARDED_BY(mu_);  // queued per log file
  bool closing_ TONY_GUARDED_BY(mu_) = false;
  bool stopping_ TONY_GUARDED_BY(mu_) = false;
  bool done_ TONY_GUARDED_BY(mu_) = false;  // the thread has finished
  absl::Status close_status_ TONY_GUARDED_BY(mu_);
  bool moved_ TONY_GUARDED_BY(mu_) = false;
  // Only the writer thread.
  bool dirs_made_ = false;
  int64_t failures_ = 0;
  std::thread thread_;
};

}  // namespace tony::history
