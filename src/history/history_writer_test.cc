#include "history/history_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <future>

#include "common/files.h"

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
  EXPECT_EQ(Read(dir + "/metrics.jsonl"), "{\"rss_bytes\":1}\n");
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

// A file system that fails or blocks as the test says.
class FaultyFs final : public HistoryFs {
 public:
  explicit FaultyFs(std::shared_ptr<HistoryFs> real) : real_(std::move(real)) {}
  std::atomic<bool> fail{false};
  std::promise<void> release;
  std::shared_future<void> gate;  // Append waits for it when valid
  std::atomic<int> appends{0};

  absl::Status MakeDirs(const std::string& path) override {
    if (fail) return absl::ResourceExhaustedError("No space left on device");
    return real_->MakeDirs(path);
  }
  absl::Status Write(const std::string& path, std::string_view data) override {
    if (fail) return absl::ResourceExhaustedError("No space left on device");
    return real_->Write(path, data);
  }
  absl::Status Append(const std::string& path, std::string_view data) override {
    ++appends;
    if (gate.valid()) gate.wait();
    if (fail) return absl::ResourceExhaustedError("No space left on device");
    return real_->Append(path, data);
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    if (fail) return absl::ResourceExhaustedError("No space left on device");
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

 private:
  std::shared_ptr<HistoryFs> real_;
};

TEST(HistoryWriterTest, AFailingFileSystemIsAWarningAndTheRestIsStillWritten) {
  TempDir tmp;
  auto faulty = std::make_shared<FaultyFs>(LocalHistoryFs());
  faulty->fail = true;
  HistoryWriter writer(Options(faulty, tmp.path()));
  writer.Event(R"({"kind":"lost"})");
  // The disk is full for the first batch, then has room again.
  while (writer.dropped_bytes() == 0) std::this_thread::yield();
  faulty->fail = false;
  writer.Event(R"({"kind":"kept"})");
  ASSERT_TRUE(writer.Close("{}", 10000).ok());
  EXPECT_EQ(Read(tmp.path() + "/finished/app_1/events.jsonl"), "{\"kind\":\"kept\"}\n");
  EXPECT_EQ(writer.dropped_bytes(),
            static_cast<int64_t>(std::string(R"({"kind":"lost"})").size() + 1));
}

TEST(HistoryWriterTest, AStuckFileSystemNeverBlocksTheCallerAndBoundsWhatWaits) {
  TempDir tmp;
  auto faulty = std::make_shared<FaultyFs>(LocalHistoryFs());
  faulty->gate = faulty->release.get_future().share();
  HistoryWriterOptions options = Options(faulty, tmp.path());
  options.max_pending_bytes = 1000;
  HistoryWriter writer(options);
  writer.Event(R"({"kind":"first"})");
  while (faulty->appends == 0) std::this_thread::yield();  // the writer is stuck in Append
  const std::string line(99, 'x');
  for (int i = 0; i < 100; ++i) writer.Event(line);  // 10,000 bytes: returns at once
  EXPECT_EQ(writer.dropped_bytes(), 9000);
  absl::Status closed = writer.Close("{}", 50);
  EXPECT_EQ(closed.code(), absl::StatusCode::kDeadlineExceeded) << closed;
  faulty->release.set_value();
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
