#pragma once
// Writes one job's history (history_format.h) from the AM, on a thread of its own: callers only
// queue, so writing never slows the job, and a failure (a full disk, HDFS unreachable) is a
// warning in the AM's log while the job goes on. Queued data is written about once per
// flush interval, appends to the same file in one call.
//
// A write that fails is kept and tried again at the next flush, in order with what came after it,
// so a NameNode failover or a lease another writer still holds costs the history nothing. Before
// appending again to a file whose append failed, the writer reads the file's length, so bytes that
// did reach it before the failure are not written twice. Close tries again until its deadline
// while the failure looks passing (an unavailable NameNode, a held lease), and gives up at once
// on one that does not (no permission, a file where a directory should be, a full disk).
//
// The files of one batch are written side by side, at most kParallelWrites at once: on HDFS each
// file's write waits for its close (the DataNode tries `complete` again every 400 ms until the
// block is reported), so that a batch of many files, as the last one at a job's end, costs about
// one such wait instead of one per file.
//
// Limits: at most max_pending_bytes wait in the queue, and as many again are kept after failed
// appends; more is dropped (and counted, and said in job.json's "history_dropped_bytes"), as is
// what is still unwritten when the writer stops. Each log file keeps at most max_log_bytes, then a
// line saying the rest is not kept.
//
// Threads: every method may be called from any thread; the AM calls them from its loop.

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "common/mutex.h"
#include "common/worker_pool.h"
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
  // Events are written at once rather than with the next flush (what else is queued goes with
  // them): a later AM attempt takes the job up from them (tony.am.retry-count), and an event
  // still queued when the AM dies would be a task it does not know of.
  bool prompt_events = false;
};

class HistoryWriter {
 public:
  static constexpr int kParallelWrites = 8;

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
  // What the writer thread knows of one file it appends to.
  struct AppendedFile {
    int64_t length = -1;    // bytes known to be in the file; -1 until known
    std::string unwritten;  // bytes for it not yet known to be written, in order
    bool unsure = false;    // an append failed: a prefix of `unwritten` may be in the file
  };
  void Queue(Op op);
  void Loop();
  // Takes a batch in and writes everything not yet written; returns the first error.
  absl::Status WriteBatch(std::deque<Op> batch);
  // Appends a file's unwritten bytes, first learning what an earlier failed append left there;
  // adds to `written` how many of them are now in the file. Touches only `state`: files are
  // written side by side.
  absl::Status WriteAppends(const std::string& file, AppendedFile& state, size_t* written) const;
  bool HasUnwritten() const { return unwritten_bytes_ > 0 || !unreplaced_.empty(); }
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
  bool flush_now_ TONY_GUARDED_BY(mu_) = false;  // an event came (prompt_events)
  std::chrono::steady_clock::time_point close_deadline_ TONY_GUARDED_BY(mu_);
  bool stopping_ TONY_GUARDED_BY(mu_) = false;
  bool done_ TONY_GUARDED_BY(mu_) = false;  // the thread has finished
  absl::Status close_status_ TONY_GUARDED_BY(mu_);
  bool moved_ TONY_GUARDED_BY(mu_) = false;
  // Only the writer thread.
  bool dirs_made_ = false;
  // Whether the job's directory was missing when first looked at: then every file in it is this
  // writer's own and starts empty, and none needs its length read before its first append.
  std::optional<bool> fresh_dir_;
  std::map<std::string, AppendedFile> appended_;
  std::map<std::string, std::string> unreplaced_;  // a Replace() not yet written: its last content
  size_t unwritten_bytes_ = 0;                     // of every AppendedFile::unwritten
  int64_t failures_ = 0;
  std::unique_ptr<WorkerPool> pool_;  // made for the first batch of more than one file
  std::thread thread_;
};

}  // namespace tony::history
