// WebHdfsClient against a real HDFS: the mini cluster of scripts/hadoop-minicluster, found through
// TONY_TEST_HADOOP_CONF_DIR (its minicluster.env names the NameNode's HTTP address and the user).

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/files.h"
#include "common/strings.h"
#include "hadoop/hdfs/webhdfs.h"

namespace tony::hadoop {
namespace {

using namespace std::literals;

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

struct MiniCluster {
  std::string namenode_http;
  std::string user;
};

// The cluster named by TONY_TEST_HADOOP_CONF_DIR; nullopt (and a test failure) if the variable is
// set but minicluster.env lacks the keys.
std::optional<MiniCluster> ReadMiniCluster(const std::string& conf_dir) {
  absl::StatusOr<std::string> env = ReadFile(StrCat(conf_dir, "/minicluster.env"));
  if (!env.ok()) {
    ADD_FAILURE() << env.status();
    return std::nullopt;
  }
  MiniCluster cluster;
  for (std::string_view line : Split(*env, '\n')) {
    line = StripWhitespace(line);
    size_t equals = line.find('=');
    if (equals == std::string_view::npos) continue;
    std::string_view key = line.substr(0, equals);
    std::string_view value = line.substr(equals + 1);
    if (key == "MINICLUSTER_NN_HTTP") cluster.namenode_http = std::string(value);
    if (key == "MINICLUSTER_USER") cluster.user = std::string(value);
  }
  if (cluster.namenode_http.empty() || cluster.user.empty()) {
    ADD_FAILURE() << conf_dir << "/minicluster.env lacks MINICLUSTER_NN_HTTP or MINICLUSTER_USER";
    return std::nullopt;
  }
  return cluster;
}

std::string RandomBytes(size_t size, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random() & 0xFF);
  return bytes;
}

class WebHdfsIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* conf_dir = std::getenv("TONY_TEST_HADOOP_CONF_DIR");
    if (conf_dir == nullptr || *conf_dir == '\0') {
      GTEST_SKIP() << "TONY_TEST_HADOOP_CONF_DIR is not set: start a cluster with "
                      "scripts/hadoop-minicluster start DIR and set it to DIR";
    }
    std::optional<MiniCluster> cluster = ReadMiniCluster(conf_dir);
    ASSERT_TRUE(cluster.has_value());
    client_.emplace(cluster->namenode_http, cluster->user, /*timeout_ms=*/30000);
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    base_ = StrCat("/tmp/tony-webhdfs-it-", getpid(), "-", test->name());
    ASSERT_TRUE(client_->Mkdirs(base_).ok());
  }

  void TearDown() override {
    if (client_.has_value()) {
      absl::Status deleted = client_->Delete(base_, /*recursive=*/true);
      EXPECT_TRUE(deleted.ok() || absl::IsNotFound(deleted)) << deleted;
    }
  }

  WebHdfsClient& client() { return *client_; }

  std::optional<WebHdfsClient> client_;
  std::string base_;
};

TEST_F(WebHdfsIntegrationTest, MkdirsCreatesParentsAndIsIdempotent) {
  std::string dir = StrCat(base_, "/a/b/c");
  ASSERT_TRUE(client().Mkdirs(dir, 0750).ok());
  ASSERT_TRUE(client().Mkdirs(dir).ok());
  absl::StatusOr<FileStatus> status = client().GetFileStatus(dir);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_TRUE(status->is_directory);
  EXPECT_EQ(status->permission, 0750);
  absl::StatusOr<FileStatus> parent = client().GetFileStatus(StrCat(base_, "/a"));
  ASSERT_TRUE(parent.ok()) << parent.status();
  EXPECT_TRUE(parent->is_directory);
}

TEST_F(WebHdfsIntegrationTest, CreateOpenStatusAndListRoundTrip) {
  const std::string data = RandomBytes(3 * 1024 * 1024 + 17, /*seed=*/1);
  const std::string path = StrCat(base_, "/data.bin");
  auto before = std::chrono::system_clock::now();
  absl::Status created = client().Create(path, data);
  ASSERT_TRUE(created.ok()) << created;

  absl::StatusOr<std::string> read = client().Open(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->size(), data.size());
  EXPECT_TRUE(*read == data) << "the bytes read back differ from the bytes written";

  absl::StatusOr<FileStatus> status = client().GetFileStatus(path);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_FALSE(status->is_directory);
  EXPECT_EQ(status->length, static_cast<int64_t>(data.size()));
  EXPECT_EQ(status->path_suffix, "");
  auto modified = std::chrono::system_clock::time_point(
      std::chrono::milliseconds(status->modification_time_ms));
  EXPECT_LT(modified - before, 1min);
  EXPECT_GT(modified - before, -1min);

  absl::StatusOr<std::vector<FileStatus>> entries = client().ListStatus(base_);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].path_suffix, "data.bin");
  EXPECT_EQ((*entries)[0].length, status->length);
  EXPECT_EQ((*entries)[0].modification_time_ms, status->modification_time_ms);

  absl::StatusOr<std::vector<FileStatus>> of_file = client().ListStatus(path);
  ASSERT_TRUE(of_file.ok()) << of_file.status();
  ASSERT_EQ(of_file->size(), 1u);
  EXPECT_EQ((*of_file)[0].length, status->length);
}

// The history writer appends to its files and `tony logs` reads them in pieces.
TEST_F(WebHdfsIntegrationTest, AppendAndRangedOpen) {
  const std::string path = StrCat(base_, "/log");
  EXPECT_EQ(client().Append(path, "x").code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(client().Create(path, "hello ").ok());
  const std::string big = RandomBytes(200 * 1024, /*seed=*/7);
  ASSERT_TRUE(client().Append(path, "world\n").ok());
  ASSERT_TRUE(client().Append(path, big).ok());
  absl::StatusOr<std::string> whole = client().Open(path);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(*whole, "hello world\n" + big);
  absl::StatusOr<std::string> middle = client().Open(path, 6, 5);
  ASSERT_TRUE(middle.ok()) << middle.status();
  EXPECT_EQ(*middle, "world");
  absl::StatusOr<std::string> tail = client().Open(path, 12 + 1000, -1);
  ASSERT_TRUE(tail.ok()) << tail.status();
  EXPECT_EQ(*tail, big.substr(1000));
  absl::StatusOr<std::string> past = client().Open(path, 12 + big.size(), 10);
  ASSERT_TRUE(past.ok()) << past.status();
  EXPECT_EQ(*past, "");
}

TEST_F(WebHdfsIntegrationTest, NamesThatNeedEncoding) {
  const std::string dir = StrCat(base_, "/dir with space");
  const std::string path = StrCat(dir, "/a+b%c&d=e?#.txt");
  ASSERT_TRUE(client().Create(path, "encoded").ok());
  absl::StatusOr<std::string> read = client().Open(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "encoded");
  absl::StatusOr<std::vector<FileStatus>> entries = client().ListStatus(dir);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].path_suffix, "a+b%c&d=e?#.txt");
}

TEST_F(WebHdfsIntegrationTest, EmptyFile) {
  const std::string path = StrCat(base_, "/empty");
  ASSERT_TRUE(client().Create(path, "").ok());
  EXPECT_EQ(client().Open(path).value_or("not empty"), "");
  EXPECT_EQ(client().GetFileStatus(path)->length, 0);
}

TEST_F(WebHdfsIntegrationTest, OverwriteFalseOnAnExistingFileFails) {
  const std::string path = StrCat(base_, "/once");
  ASSERT_TRUE(client().Create(path, "first").ok());
  absl::Status again = client().Create(path, "second", /*overwrite=*/false);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  EXPECT_NE(Message(again).find(path), std::string::npos) << again;
  EXPECT_NE(Message(again).find("FileAlreadyExistsException"), std::string::npos) << again;
  EXPECT_EQ(Message(again).find("\tat "), std::string::npos) << again;
  EXPECT_EQ(client().Open(path).value_or(""), "first");

  ASSERT_TRUE(client().Create(path, "third", /*overwrite=*/true).ok());
  EXPECT_EQ(client().Open(path).value_or(""), "third");
}

TEST_F(WebHdfsIntegrationTest, DeleteThenNotFound) {
  const std::string dir = StrCat(base_, "/dir");
  const std::string path = StrCat(dir, "/file");
  ASSERT_TRUE(client().Create(path, "x").ok());

  absl::Status not_recursive = client().Delete(dir, /*recursive=*/false);
  EXPECT_EQ(not_recursive.code(), absl::StatusCode::kFailedPrecondition) << not_recursive;
  EXPECT_NE(Message(not_recursive).find(dir), std::string::npos) << not_recursive;

  ASSERT_TRUE(client().Delete(path, /*recursive=*/false).ok());
  absl::StatusOr<FileStatus> status = client().GetFileStatus(path);
  EXPECT_EQ(status.status().code(), absl::StatusCode::kNotFound) << status.status();
  EXPECT_NE(Message(status.status()).find(path), std::string::npos) << status.status();
  EXPECT_EQ(client().Delete(path, false).code(), absl::StatusCode::kNotFound);

  ASSERT_TRUE(client().Delete(dir, /*recursive=*/true).ok());
  EXPECT_EQ(client().GetFileStatus(dir).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(WebHdfsIntegrationTest, OpenOrListMissingIsNotFound) {
  const std::string path = StrCat(base_, "/missing");
  absl::StatusOr<std::string> read = client().Open(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound) << read.status();
  EXPECT_NE(Message(read.status()).find(path), std::string::npos) << read.status();
  EXPECT_NE(Message(read.status()).find("FileNotFoundException"), std::string::npos)
      << read.status();
  EXPECT_EQ(client().ListStatus(path).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(WebHdfsIntegrationTest, CreateFromFileStreamsALocalFile) {
  const std::string data = RandomBytes(5 * 1024 * 1024 + 3, /*seed=*/2);
  const std::string local = StrCat(::testing::TempDir(), "/webhdfs-it-", getpid(), ".bin");
  {
    std::ofstream out(local, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    ASSERT_TRUE(out.good());
  }
  const std::string path = StrCat(base_, "/from-file.bin");
  absl::Status created = client().CreateFromFile(path, local);
  std::remove(local.c_str());
  ASSERT_TRUE(created.ok()) << created;
  EXPECT_EQ(client().GetFileStatus(path)->length, static_cast<int64_t>(data.size()));
  absl::StatusOr<std::string> read = client().Open(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(*read == data) << "the bytes read back differ from the local file";
}

TEST_F(WebHdfsIntegrationTest, ConcurrentCallsFromSeveralThreads) {
  constexpr int kThreads = 4;
  std::vector<absl::Status> results(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([this, i, &results] {
      const std::string path = StrCat(base_, "/thread-", i);
      const std::string data = RandomBytes(size_t{256} * 1024, /*seed=*/100 + i);
      absl::Status status = client().Create(path, data);
      if (status.ok()) {
        absl::StatusOr<std::string> read = client().Open(path);
        if (!read.ok()) {
          status = read.status();
        } else if (*read != data) {
          status = absl::DataLossError(StrCat(path, " read back differently"));
        }
      }
      results[i] = status;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& status : results) EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(client().ListStatus(base_)->size(), static_cast<size_t>(kThreads));
}

}  // namespace
}  // namespace tony::hadoop
