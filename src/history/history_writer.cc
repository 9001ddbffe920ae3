#include "history/history_writer.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "spdlog/spdlog.h"

namespace tony::history {

HistoryWriter::HistoryWriter(HistoryWriterOptions options)
    : options_(std::move(options)),
      intermediate_dir_(StrCat(options_.dirs.intermediate, "/", options_.app_id)),
      finished_dir_(StrCat(options_.dirs.finished, "/", options_.app_id)) {
  thread_ = std::thread([this] { Loop(); });
}

HistoryWriter::~HistoryWriter() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  thread_.join();
}

void HistoryWriter::Queue(Op op) {
  MutexLock lock(mu_);
  if (closing_ || stopping_) return;
  if (pending_bytes_ + op.data.size() > options_.max_pending_bytes) {
    dropped_bytes_ += static_cast<int64_t>(op.data.size());
    return;
  }
  pending_bytes_ += op.data.size();
  pending_.push_back(std::move(op));
}

void HistoryWriter::Event(std::string json_object) {
  json_object.push_back('\n');
  Queue({false, kEventsFile, std::move(json_object)});
  if (options_.prompt_events) {
    MutexLock lock(mu_);
    flush_now_ = true;
    wake_.NotifyAll();
  }
}

void HistoryWriter::Metric(std::string json_object) {
  json_object.push_back('\n');
  Queue({false, kMetricsFile, std::move(json_object)});
}

void HistoryWriter::Log(const std::string& file, std::string_view bytes) {
  if (bytes.empty()) return;
  std::string data;
  {
    MutexLock lock(mu_);
    int64_t& kept = log_bytes_[file];
    const int64_t room = options_.max_log_bytes - kept;
    if (room <= 0) {
      dropped_bytes_ += static_cast<int64_t>(bytes.size());
      return;
    }
    if (static_cast<int64_t>(bytes.size()) <= room) {
      data.assign(bytes);
    } else {
      data.assign(bytes.substr(0, static_cast<size_t>(room)));
      data += StrCat("\n[tony: this output is longer than ", options_.max_log_bytes,
                     " bytes (tony.history.max-log-bytes); the rest is not kept in the history]\n");
      dropped_bytes_ += static_cast<int64_t>(bytes.size()) - room;
    }
    kept += static_cast<int64_t>(std::min<size_t>(bytes.size(), static_cast<size_t>(room)));
  }
  Queue({false, StrCat(kLogsDir, "/", file), std::move(data)});
}

void HistoryWriter::Replace(const std::string& file, std::string content) {
  Queue({true, file, std::move(content)});
}

absl::Status HistoryWriter::Close(std::string job_json, int64_t timeout_ms) {
  MutexLock lock(mu_);
  if (closing_ || stopping_) return absl::FailedPreconditionError("the history is closed");
  pending_.push_back({true, kJobFile, std::move(job_json)});
  closing_ = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  close_deadline_ = deadline;
  wake_.NotifyAll();
  while (!done_) {
    if (!idle_.WaitUntil(mu_, deadline) && !done_) break;
  }
  if (!done_) {
    return absl::DeadlineExceededError(StrCat("the job's history at ",
                                              options_.fs->Describe(intermediate_dir_),
                                              " was not written within ", timeout_ms, " ms"));
  }
  return close_status_;
}

std::string HistoryWriter::dir() const {
  MutexLock lock(mu_);
  return moved_ ? finished_dir_ : intermediate_dir_;
}

int64_t HistoryWriter::dropped_bytes() const {
  MutexLock lock(mu_);
  return dropped_bytes_;
}

namespace {

// A failure that may pass while Close waits: an unavailable or failing-over NameNode, a lease
// still held, a timeout. A missing permission, a file where a directory should be or a full disk
// does not.
bool Passing(const absl::Status& error) {
  switch (error.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
      return true;
    default:
      return false;
  }
}

// How long Close waits between tries of what failed.
constexpr std::chrono::milliseconds kCloseRetryPause(500);

}  // namespace

void HistoryWriter::Loop() {
  mu_.lock();
  bool retrying = false;  // closing, and the last try failed in a way that may pass
  while (true) {
    const auto wake_at =
        std::chrono::steady_clock::now() +
        (retrying ? kCloseRetryPause : std::chrono::milliseconds(options_.flush_interval_ms));
    // A flush interval, cut short by Close or the destructor; a retry's pause, only by the latter.
    while (!stopping_ && (retrying || !closing_) && !(flush_now_ && !retrying)) {
      if (!wake_.WaitUntil(mu_, wake_at)) break;
    }
    flush_now_ = false;
    std::deque<Op> batch;
    batch.swap(pending_);
    pending_bytes_ = 0;
    const bool closing = closing_;
    const bool ending = closing_ || stopping_;
    const auto deadline = close_deadline_;
    mu_.unlock();
    absl::Status written =
        batch.empty() && !HasUnwritten() ? absl::OkStatus() : WriteBatch(std::move(batch));
    absl::Status moved = closing && written.ok() ? Move() : absl::OkStatus();
    const absl::Status result = written.ok() ? moved : written;
    mu_.lock();
    if (!ending) continue;
    retrying = closing && !stopping_ && !result.ok() && Passing(result) &&
               std::chrono::steady_clock::now() + kCloseRetryPause < deadline;
    if (retrying) continue;
    // What is still unwritten is lost now: say so in the count.
    dropped_bytes_ += static_cast<int64_t>(unwritten_bytes_);
    for (const auto& [file, data] : unreplaced_)
      dropped_bytes_ += static_cast<int64_t>(data.size());
    close_status_ = result;
    moved_ = closing && result.ok();
    done_ = true;
    idle_.NotifyAll();
    mu_.unlock();
    return;
  }
}

absl::Status HistoryWriter::WriteBatch(std::deque<Op> batch) {
  // Appends to one file go in one call, in their order, after what earlier failed for it; a
  // replaced file's last version wins.
  std::map<std::string, std::string> appends;
  for (Op& op : batch) {
    if (op.replace) {
      unreplaced_[op.file] = std::move(op.data);
    } else {
      appends[op.file] += op.data;
    }
  }
  for (auto& [file, data] : appends) {
    if (unwritten_bytes_ + data.size() > options_.max_pending_bytes) {
      MutexLock lock(mu_);
      dropped_bytes_ += static_cast<int64_t>(data.size());
      continue;
    }
    unwritten_bytes_ += data.size();
    appended_[file].unwritten += data;
  }
  absl::Status first;
  const auto failed = [&](const absl::Status& error) {
    Warn(error);
    if (first.ok()) first = error;
  };
  if (!fresh_dir_.has_value()) {
    absl::StatusOr<HistoryEntry> dir = options_.fs->Stat(intermediate_dir_);
    if (!dir.ok() && dir.status().code() != absl::StatusCode::kNotFound) {
      failed(dir.status());
      return first;
    }
    fresh_dir_ = !dir.ok();
  }
  if (!dirs_made_) {
    if (absl::Status made = options_.fs->MakeDirs(StrCat(intermediate_dir_, "/", kLogsDir));
        !made.ok()) {
      failed(made);
      return first;
    }
    dirs_made_ = true;
  }
  // Every file with something to write, side by side (the header says why).
  struct Outcome {
    absl::Status status;
    size_t written = 0;  // appended bytes now in the file
  };
  std::vector<std::function<Outcome()>> work;
  for (auto& entry : appended_) {
    const std::string& file = entry.first;
    AppendedFile& state = entry.second;
    if (state.unwritten.empty()) continue;
    work.emplace_back([this, &file, &state] {
      Outcome outcome;
      outcome.status = WriteAppends(file, state, &outcome.written);
      return outcome;
    });
  }
  const size_t appended = work.size();
  std::vector<std::string> replaced;
  for (const auto& entry : unreplaced_) {
    const std::string& file = entry.first;
    const std::string& content = entry.second;
    replaced.push_back(file);
    work.emplace_back([this, &file, &content] {
      return Outcome{options_.fs->Write(StrCat(intermediate_dir_, "/", file), content)};
    });
  }
  std::vector<Outcome> outcomes(work.size());
  if (work.size() == 1) {
    outcomes[0] = work[0]();
  } else if (!work.empty()) {
    if (pool_ == nullptr) pool_ = std::make_unique<WorkerPool>(kParallelWrites);
    std::vector<std::future<Outcome>> futures;
    futures.reserve(work.size());
    for (std::function<Outcome()>& one : work) futures.push_back(pool_->Submit(std::move(one)));
    for (size_t i = 0; i < futures.size(); ++i) outcomes[i] = futures[i].get();
  }
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (i < appended) unwritten_bytes_ -= outcomes[i].written;
    if (!outcomes[i].status.ok()) {
      failed(outcomes[i].status);
    } else if (i >= appended) {
      unreplaced_.erase(replaced[i - appended]);
    }
  }
  return first;
}

absl::Status HistoryWriter::WriteAppends(const std::string& file, AppendedFile& state,
                                         size_t* written) const {
  const std::string path = StrCat(intermediate_dir_, "/", file);
  if (state.length < 0 && *fresh_dir_) state.length = 0;
  if (state.length < 0 || state.unsure) {
    absl::StatusOr<HistoryEntry> entry = options_.fs->Stat(path);
    if (!entry.ok() && entry.status().code() != absl::StatusCode::kNotFound) return entry.status();
    const int64_t length = entry.ok() ? entry->size : 0;
    if (state.unsure && state.length >= 0) {
      // The failed append may have left a prefix of what it was to write.
      const auto landed = static_cast<size_t>(
          std::clamp<int64_t>(length - state.length, 0, std::ssize(state.unwritten)));
      state.unwritten.erase(0, landed);
      *written += landed;
    }
    state.length = length;
    state.unsure = false;
    if (state.unwritten.empty()) return absl::OkStatus();
  }
  if (absl::Status appended = options_.fs->Append(path, state.unwritten); !appended.ok()) {
    state.unsure = true;
    return appended;
  }
  state.length += std::ssize(state.unwritten);
  *written += state.unwritten.size();
  state.unwritten.clear();
  return absl::OkStatus();
}

absl::Status HistoryWriter::Move() {
  if (absl::Status made = options_.fs->MakeDirs(options_.dirs.finished); !made.ok()) {
    Warn(made);
    return made;
  }
  if (absl::Status renamed = options_.fs->Rename(intermediate_dir_, finished_dir_); !renamed.ok()) {
    // A rename whose answer was lost (a failover mid-call) is found done when tried again.
    if (renamed.code() == absl::StatusCode::kNotFound && options_.fs->Stat(finished_dir_).ok()) {
      return absl::OkStatus();
    }
    Warn(renamed);
    return renamed;
  }
  return absl::OkStatus();
}

void HistoryWriter::Warn(const absl::Status& error) {
  ++failures_;
  // The first failure, then every hundredth: a full disk must not flood the AM's log.
  if (failures_ == 1 || failures_ % 100 == 0) {
    spdlog::warn(
        "[{}] the job's history is incomplete ({} failed writes so far), the job goes "
        "on: {}",
        options_.app_id, failures_, ToStd(error.message()));
  }
}

}  // namespace tony::history
