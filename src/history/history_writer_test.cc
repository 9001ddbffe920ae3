#include "history/history_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "common/files.h"
#include "common/mutex.h"

namespace tony::history {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/tony_history_XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Read(const std::string& path) {
  absl::StatusOr<std::string> data = ReadFile(path);
  return data.ok() ? *data : "<" + std::string(data.status().message()) + ">";
}

// Waits (at most 30 s) until `done` holds; says whether it did.
template <typename Done>
bool Eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

HistoryWriterOptions Options(std::shared_ptr<HistoryFs> fs, const std::string& root) {
  HistoryWriterOptions options;
  options.fs = std::move(fs);
  options.dirs = {root + "/intermediate", root + "/finished"};
  options.app_id = "app_1";
  options.flush_interval_ms = 10;
  return options;
}

TEST(HistoryWriterTest, WritesEveryFileInOrderAndMovesTheJobWhenClosed) {
  TempDir tmp;
  HistoryWriter writer(Options(LocalHistoryFs(), tmp.path()));
  EXPECT_EQ(writer.dir(), tmp.path() + "/intermediate/app_1");
  writer.Replace(kConfigFile, "[]");
  writer.Event(R"({"kind":"A"})");
  writer.Log("worker-0-0.stdout", "hello ");
  writer.Metric(R"({"rss_bytes":1})");
  writer.Event(R"({"kind":"B"})");
  writer.Log("worker-0-0.stdout", "world\n");
  ASSERT_TRUE(writer.Close(R"({"state":"SUCCEEDED"})", 10000).ok());
  const std::string dir = tmp.path() + "/finished/app_1";
  EXPECT_EQ(writer.dir(), dir);
  EXPECT_FALSE(fs::exists(tmp.path() + "/intermediate/app_1"));
  EXPECT_EQ(Read(dir + "/events.jsonl"), "{\"kind\":\"A\"}\n{\"kind\":\"B\"}\n");
  EXPECT_TRUE(Eventually([&] { return Read(dir + "/metrics.jsonl") == "{\"rss_bytes\":1}\n"; }))
      << Read(dir + "/metrics.jsonl");
  EXPECT_EQ(Read(dir + "/logs/worker-0-0.stdout"), "hello world\n");
  EXPECT_EQ(Read(dir + "/config.json"), "[]");
  EXPECT_EQ(Read(dir + "/job.json"), R"({"state":"SUCCEEDED"})");
  // Private to the user: the directories 0700, the files 0600.
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(dir + "/events.jsonl").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  // Nothing is queued once closed.
  writer.Event(R"({"kind":"late"})");
  EXPECT_EQ(Read(dir + "/events.jsonl"), "{\"kind\":\"A\"}\n{\"kind\":\"B\"}\n");
}

// With prompt_events an event does not wait for the flush interval (an hour here), and what was
// queued before it goes with it; without, the same event waits.
TEST(HistoryWriterTest, PromptEventsAreWrittenAtOnceWithWhatWasQueuedBefore) {
  TempDir tmp;
  HistoryWriterOptions options = Options(LocalHistoryFs(), tmp.path());
  options.flush_interval_ms = int64_t{3600} * 1000;
  options.prompt_events = true;
  HistoryWriter writer(options);
  const std::string dir = tmp.path() + "/intermediate/app_1";
  writer.Metric(R"({"rss_bytes":1})");
  writer.Event(R"({"kind":"A"})");
  EXPECT_TRUE(Eventually([&] { return Read(dir + "/events.jsonl") == "{\"kind\":\"A\"}\n"; }))
      << Read(dir + "/events.jsonl");
  EXPECT_TRUE(Eventually([&] { return Read(dir + "/metrics.jsonl") == "{\"rss_bytes\":1}\n"; }))
      << Read(dir + "/metrics.jsonl");

  TempDir other;
  options = Options(LocalHistoryFs(), other.path());
  options.flush_interval_ms = int64_t{3600} * 1000;
  HistoryWriter batched(options);
  batched.Event(R"({"kind":"A"})");
  // Written with the first flush, which comes only at Close: nothing may be there before.
  writer.Event(R"({"kind":"B"})");  // a prompt write of the other writer, to let time pass
  EXPECT_TRUE(
      Eventually([&] { return Read(dir + "/events.jsonl").find(R"("B")") != std::string::npos; }));
  EXPECT_FALSE(fs::exists(other.path() + "/intermediate/app_1/events.jsonl"));
}

TEST(HistoryWriterTest, ALogPastItsLimitIsCutWithANote) {
  TempDir tmp;
  HistoryWriterOptions options = Options(LocalHistoryFs(), tmp.path());
  options.max_log_bytes = 8;
  HistoryWriter writer(options);
  writer.Log("w.stdout", "12345");
  writer.Log("w.stdout", "67890");
  writer.Log("w.stdout", "more");
  ASSERT_TRUE(writer.Close("{}", 10000).ok());
  const std::string log = Read(tmp.path() + "/finished/app_1/logs/w.stdout");
  EXPECT_TRUE(log.starts_with("12345678\n[tony: this output is longer than 8 bytes")) << log;
  EXPECT_EQ(writer.dropped_bytes(), 2 + 4);
}

// A file system that does what `real` does; the fakes below change what they need.
class ForwardingFs : public HistoryFs {
 public:
  explicit ForwardingFs(std::shared_ptr<HistoryFs> real) : real_(std::move(real)) {}
  absl::Status MakeDirs(const std::string& path) override { return real_->MakeDirs(path); }
  absl::Status Write(const std::string& path, std::string_view data) override {
    return real_->Write(path, data);
  }
  absl::Status Append(const std::string& path, std::string_view data) override {
    return real_->Append(path, data);
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    return real_->Rename(from, to);
  }
  absl::StatusOr<std::vector<HistoryEntry>> List(const std::string& dir) override {
    return real_->List(dir);
  }
  absl::StatusOr<std::string> Read(const std::string& path, int64_t offset,
                                   int64_t length) override {
    return real_->Read(path, offset, length);
  }
  absl::StatusOr<HistoryEntry> Stat(const std::string& path) override { return real_->Stat(path); }
  absl::Status Remove(const std::string& path) override { return real_->Remove(path); }

 protected:
  HistoryFs& real() { return *real_; }

 private:
  std::shared_ptr<HistoryFs> real_;
};

// A file system that fails or blocks as the test says.
class FaultyFs final : public ForwardingFs {
 public:
  explicit FaultyFs(std::shared_ptr<HistoryFs> real) : ForwardingFs(std::move(real)) {}
  std::atomic<bool> fail{false};
  std::promise<void> release;
  std::shared_future<void> gate;  // Append waits for it when valid
  std::atomic<int> appends{0};
  std::atomic<int> failures{0};
  // The next `failing_appends` appends fail with `append_error`, after writing what `landed` says
  // of their data (as a connection lost mid-write, or an answer lost after the write).
  enum class Landed { kNothing, kHalf, kAll };
  std::atomic<int> failing_appends{0};
  std::atomic<Landed> landed{Landed::kNothing};
  absl::Status append_error = absl::UnavailableError("Operation category WRITE is not supported");

  absl::Status MakeDirs(const std::string& path) override {
    if (fail) return Failed();
    return real().MakeDirs(path);
  }
  absl::Status Write(const std::string& path, std::string_view data) override {
    if (fail) return Failed();
    return real().Write(path, data);
  }
  absl::Status Append(const std::string& path, std::string_view data) override {
    ++appends;
    if (gate.valid()) gate.wait();
    if (fail) return Failed();
    // Taken in one step: the files of a batch are appended side by side.
    int left = failing_appends.load();
    while (left > 0 && !failing_appends.compare_exchange_weak(left, left - 1)) {
    }
    if (left > 0) {
      ++failures;
      const size_t size = landed == Landed::kAll    ? data.size()
                          : landed == Landed::kHalf ? data.size() / 2
                                                    : 0;
      if (size > 0) {
        EXPECT_TRUE(real().Append(path, data.substr(0, size)).ok());
      }
      return append_error;
    }
    return real().Append(path, data);
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    if (fail) return Failed();
    return real().Rename(from, to);
  }

 private:
  absl::Status Failed() {
    ++failures;
    return absl::ResourceExhaustedError("No space left on device");
  }
};

TEST(HistoryWriterTest, WhatAFailingFileSystemRefusedIsWrittenOnceItRecovers) {
  TempDir tmp;
  auto faulty = std::make_shared<FaultyFs>(LocalHistoryFs());
  faulty->fail = true;
  HistoryWriter writer(Options(faulty, tmp.path()));
  writer.Event(R"({"kind":"first"})");
  // The disk is full for the first batches, then has room again.
  ASSERT_TRUE(Eventually([&] { return faulty->failures >= 3; }));
  faulty->fail = false;
  writer.Event(R"({"kind":"second"})");
  ASSERT_TRUE(writer.Close("{}", 10000).ok());
  EXPECT_EQ(Read(tmp.path() + "/finished/app_1/events.jsonl"),
            "{\"kind\":\"first\"}\n{\"kind\":\"second\"}\n");
  EXPECT_EQ(writer.dropped_bytes(), 0);
}

// An append that fails may have written some or all of its bytes first (a NameNode failing over
// mid-write, an answer lost on the way back): the next try writes only what is missing.
TEST(HistoryWriterTest, AFailedAppendIsTriedAgainWithoutWritingAnyByteTwice) {
  for (const FaultyFs::Landed landed :
       {FaultyFs::Landed::kNothing, FaultyFs::Landed::kHalf, FaultyFs::Landed::kAll}) {
    TempDir tmp;
    auto faulty = std::make_shared<FaultyFs>(LocalHistoryFs());
    faulty->landed = landed;
    faulty->failing_appends = 1;
    HistoryWriter writer(Options(faulty, tmp.path()));
    writer.Event(R"({"kind":"A"})");
    writer.Event(R"({"kind":"B"})");
    ASSERT_TRUE(Eventually([&] { return faulty->failures >= 1; }));
    writer.Event(R"({"kind":"C"})");
    ASSERT_TRUE(writer.Close("{}", 10000).ok());
    EXPECT_EQ(Read(tmp.path() + "/finished/app_1/events.jsonl"),
              "{\"kind\":\"A\"}\n{\"kind\":\"B\"}\n{\"kind\":\"C\"}\n")
        << static_cast<int>(landed);
    EXPECT_EQ(writer.dropped_bytes(), 0);
  }
}

// A job's directory that is already there (an earlier AM attempt wrote to it): the writer learns
// each file's length before appending, so what the earlier attempt wrote stays and nothing repeats.
TEST(HistoryWriterTest, AppendsToAnEarlierAttemptsFilesWithoutRepeatingAfterAFailure) {
  TempDir tmp;
  ASSERT_TRUE(LocalHistoryFs()->MakeDirs(tmp.path() + "/intermediate/app_1/logs").ok());
  ASSERT_TRUE(WriteFile(tmp.path() + "/intermediate/app_1/events.jsonl", "{\"attempt\":1}\n").ok());
  auto faulty = std::make_shared<FaultyFs>(LocalHistoryFs());
  faulty->landed = FaultyFs::Landed::kHalf;
  faulty->failing_appends = 1;
  HistoryWriter writer(Options(faulty, tmp.path()));
  writer.Event(R"({"attempt":2})");
  ASSERT_TRUE(writer.Close("{}", 10000).ok());
  EXPECT_EQ(Read(tmp.path() + "/finished/app_1/events.jsonl"),
            "{\"attempt\":1}\n{\"attempt\":2}\n");
}

// Close waits out a failure that passes (a lease still held after a failover) until its deadline.
TEST(HistoryWriterTest, CloseTriesAgainWhileAFailureMayPass) {
  TempDir tmp;
  auto faulty = std::make_shared<FaultyFs>(LocalHistoryFs());
  HistoryWriterOptions options = Options(faulty, tmp.path());
  options.flush_interval_ms = 60000;  // nothing is written before Close
  HistoryWriter writer(options);
  faulty->append_error = absl::UnavailableError("AlreadyBeingCreatedException: lease held");
  faulty->failing_appends = 3;
  writer.Event(R"({"kind":"A"})");
  ASSERT_TRUE(writer.Close("{}", 30000).ok());
  EXPECT_EQ(faulty->failures, 3);
  EXPECT_EQ(Read(tmp.path() + "/finished/app_1/events.jsonl"), "{\"kind\":\"A\"}\n");
}

// One that does not pass ends Close at once, and one that outlasts the deadline ends it then; what
// was never written is counted as dropped.
TEST(HistoryWriterTest, CloseGivesUpOnAFailureThatStaysAndCountsWhatIsLost) {
  TempDir tmp;
  auto faulty = std::make_shared<FaultyFs>(LocalHistoryFs());
  HistoryWriterOptions options = Options(faulty, tmp.path());
  options.flush_interval_ms = 60000;
  {
    HistoryWriter writer(options);
    faulty->append_error = absl::PermissionDeniedError("Permission denied");
    faulty->failing_appends = 1000;
    writer.Event("{}");  // 3 bytes with its newline
    EXPECT_EQ(writer.Close("{}", 60000).code(), absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(faulty->failures, 1);
    EXPECT_EQ(writer.dropped_bytes(), 3);
  }
  {
    auto stuck = std::make_shared<FaultyFs>(LocalHistoryFs());
    HistoryWriterOptions stuck_options = Options(stuck, tmp.path() + "/stuck");
    stuck_options.flush_interval_ms = 60000;
    HistoryWriter writer(stuck_options);
    stuck->append_error = absl::UnavailableError("no active NameNode");
    stuck->failing_appends = 1000;
    writer.Event("{}");
    EXPECT_FALSE(writer.Close("{}", 1200).ok());
    EXPECT_GE(stuck->failures, 2) << "tried again before the deadline";
    EXPECT_EQ(writer.dropped_bytes(), 3);
  }
}

TEST(HistoryWriterTest, AStuckFileSystemNeverBlocksTheCallerAndBoundsWhatWaits) {
  TempDir tmp;
  auto faulty = std::make_shared<FaultyFs>(LocalHistoryFs());
  faulty->gate = faulty->release.get_future().share();
  HistoryWriterOptions options = Options(faulty, tmp.path());
  options.max_pending_bytes = 1000;
  HistoryWriter writer(options);
  writer.Event(R"({"kind":"first"})");
  // The writer is stuck in Append.
  ASSERT_TRUE(Eventually([&] { return faulty->appends > 0; }));
  const std::string line(99, 'x');
  for (int i = 0; i < 100; ++i) writer.Event(line);  // 10,000 bytes: returns at once
  EXPECT_EQ(writer.dropped_bytes(), 9000);
  absl::Status closed = writer.Close("{}", 50);
  EXPECT_EQ(closed.code(), absl::StatusCode::kDeadlineExceeded) << closed;
  faulty->release.set_value();
}

// A file system whose writes and appends each wait, at most 10 s, until `together` of them are in
// flight at once, and which counts the most that were.
class TogetherFs final : public ForwardingFs {
 public:
  TogetherFs(std::shared_ptr<HistoryFs> real, int together)
      : ForwardingFs(std::move(real)), together_(together) {}
  int most() {
    MutexLock lock(mu_);
    return most_;
  }
  int gave_up() {
    MutexLock lock(mu_);
    return gave_up_;
  }

  absl::Status Write(const std::string& path, std::string_view data) override {
    Meet();
    return real().Write(path, data);
  }
  absl::Status Append(const std::string& path, std::string_view data) override {
    Meet();
    return real().Append(path, data);
  }

 private:
  void Meet() {
    MutexLock lock(mu_);
    ++in_flight_;
    most_ = std::max(most_, in_flight_);
    met_.NotifyAll();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (most_ < together_) {
      if (!met_.WaitUntil(mu_, deadline)) {
        if (most_ < together_) ++gave_up_;
        break;
      }
    }
    --in_flight_;
  }

  const int together_;
  Mutex mu_;
  CondVar met_;
  int in_flight_ TONY_GUARDED_BY(mu_) = 0;
  int most_ TONY_GUARDED_BY(mu_) = 0;
  int gave_up_ TONY_GUARDED_BY(mu_) = 0;  // calls that stopped waiting for the others
};

// On HDFS every file's write waits for its close: the files of a batch go side by side, so that
// the last batch of a job (its events, metrics, logs, config and job.json) costs about one wait.
TEST(HistoryWriterTest, TheFilesOfOneBatchAreWrittenSideBySide) {
  TempDir tmp;
  auto together = std::make_shared<TogetherFs>(LocalHistoryFs(), 5);
  HistoryWriterOptions options = Options(together, tmp.path());
  options.flush_interval_ms = 3'600'000;  // one batch: Close's
  HistoryWriter writer(options);
  writer.Replace(kConfigFile, "[]");
  writer.Event(R"({"kind":"A"})");
  writer.Metric(R"({"rss_bytes":1})");
  writer.Log("worker-0-0.stdout", "out\n");
  ASSERT_TRUE(writer.Close(R"({"state":"SUCCEEDED"})", 60000).ok());
  EXPECT_EQ(together->most(), 5) << "five files, one at a time";
  EXPECT_EQ(together->gave_up(), 0) << "a write waited for the others in vain";
  const std::string dir = tmp.path() + "/finished/app_1";
  EXPECT_EQ(Read(dir + "/config.json"), "[]");
  EXPECT_EQ(Read(dir + "/events.jsonl"), "{\"kind\":\"A\"}\n");
  EXPECT_EQ(Read(dir + "/metrics.jsonl"), "{\"rss_bytes\":1}\n");
  EXPECT_EQ(Read(dir + "/logs/worker-0-0.stdout"), "out\n");
  EXPECT_EQ(Read(dir + "/job.json"), R"({"state":"SUCCEEDED"})");
}

TEST(HistoryWriterTest, AFinishedDirectoryThatCannotBeMadeLeavesTheJobWhereItWas) {
  TempDir tmp;
  HistoryWriterOptions options = Options(LocalHistoryFs(), tmp.path());
  ASSERT_TRUE(WriteFile(tmp.path() + "/finished", "a file, not a directory").ok());
  HistoryWriter writer(options);
  writer.Event("{}");
  absl::Status closed = writer.Close("{}", 10000);
  EXPECT_FALSE(closed.ok());
  EXPECT_EQ(writer.dir(), tmp.path() + "/intermediate/app_1");
  EXPECT_EQ(Read(tmp.path() + "/intermediate/app_1/job.json"), "{}");
}

}  // namespace
}  // namespace tony::history
