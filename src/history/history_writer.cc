#include "history/history_writer.h"

#include <chrono>
#include <utility>

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
  wake_.NotifyAll();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
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

void HistoryWriter::Loop() {
  mu_.lock();
  while (true) {
    const auto flush_at =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.flush_interval_ms);
    while (!closing_ && !stopping_) {
      if (!wake_.WaitUntil(mu_, flush_at)) break;
    }
    std::deque<Op> batch;
    batch.swap(pending_);
    pending_bytes_ = 0;
    const bool closing = closing_;
    const bool ending = closing_ || stopping_;
    mu_.unlock();
    absl::Status written = batch.empty() ? absl::OkStatus() : WriteBatch(std::move(batch));
    absl::Status moved = closing && written.ok() ? Move() : absl::OkStatus();
    mu_.lock();
    if (ending) {
      close_status_ = written.ok() ? moved : written;
      moved_ = closing && written.ok() && moved.ok();
      done_ = true;
      idle_.NotifyAll();
      mu_.unlock();
      return;
    }
  }
}

absl::Status HistoryWriter::WriteBatch(std::deque<Op> batch) {
  // Appends to one file in one call, in their order; a replaced file's last version wins.
  std::map<std::string, std::string> appends;
  std::map<std::string, std::string> replaces;
  for (Op& op : batch) {
    if (op.replace) {
      replaces[op.file] = std::move(op.data);
    } else {
      appends[op.file] += op.data;
    }
  }
  absl::Status first;
  const auto failed = [&](const absl::Status& error, size_t bytes) {
    Warn(error);
    MutexLock lock(mu_);
    dropped_bytes_ += static_cast<int64_t>(bytes);
    if (first.ok()) first = error;
  };
  if (!dirs_made_) {
    absl::Status made = options_.fs->MakeDirs(StrCat(intermediate_dir_, "/", kLogsDir));
    if (!made.ok()) {
      size_t bytes = 0;
      for (const auto& [file, data] : appends) bytes += data.size();
      for (const auto& [file, data] : replaces) bytes += data.size();
      failed(made, bytes);
      return first;
    }
    dirs_made_ = true;
  }
  for (const auto& [file, data] : appends) {
    if (absl::Status s = options_.fs->Append(StrCat(intermediate_dir_, "/", file), data); !s.ok()) {
      failed(s, data.size());
    }
  }
  for (const auto& [file, data] : replaces) {
    if (absl::Status s = options_.fs->Write(StrCat(intermediate_dir_, "/", file), data); !s.ok()) {
      failed(s, data.size());
    }
  }
  return first;
}

absl::Status HistoryWriter::Move() {
  if (absl::Status made = options_.fs->MakeDirs(options_.dirs.finished); !made.ok()) {
    Warn(made);
    return made;
  }
  if (absl::Status renamed = options_.fs->Rename(intermediate_dir_, finished_dir_); !renamed.ok()) {
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
