// What a YARN job stages from its local directory, and the Hadoop configuration's zip. Stage
// itself runs against a real HDFS in yarn_hdfs_e2e_test and yarn_e2e_test.

#include "cluster/yarn/yarn_job_staging.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "cluster/staging.h"
#include "common/files.h"

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/tony_staging_XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  ASSERT_TRUE(WriteFile(path, text, 0600).ok()) << path;
}

TEST(FilesToStageTest, TheJobsFilesButItsLogsItsConfigurationAndWhatStaysLocal) {
  TempDir job;
  for (const char* file :
       {"src.zip", "venv.zip", "resources/data.csv", "resources/deep/model.bin", "logs/client.log",
        "tony-final.xml", "hadoop-conf.zip", "secret", "am-tls.key"}) {
    Write(job.path() + "/" + file, "x");
  }
  absl::StatusOr<std::vector<std::string>> files =
      FilesToStage(job.path(), {"secret", "am-tls.key"});
  ASSERT_TRUE(files.ok()) << files.status();
  std::vector<std::string> sorted = *files;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"resources/data.csv", "resources/deep/model.bin",
                                              "src.zip", "venv.zip"}));
}

TEST(FilesToStageTest, AJobDirectoryThatCannotBeReadIsNamed) {
  TempDir tmp;
  absl::StatusOr<std::vector<std::string>> files = FilesToStage(tmp.path() + "/missing", {});
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find(tmp.path() + "/missing"), std::string::npos)
      << files.status();
}

// The cache finds the zip by its digest: the same configuration must zip to the same bytes, zipped
// again later, so the zip keeps each file's own time, not its copy's.
TEST(ZipHadoopConfTest, TheSameConfigurationZipsToTheSameBytes) {
  TempDir conf;
  const std::string core = conf.path() + "/core-site.xml";
  const std::string hdfs = conf.path() + "/hdfs-site.xml";
  Write(core, "<configuration/>");
  Write(hdfs, "<configuration><property/></configuration>");
  const auto long_ago = fs::file_time_type::clock::now() - std::chrono::hours(24 * 400);
  fs::last_write_time(core, long_ago);
  fs::last_write_time(hdfs, long_ago);
  const std::map<std::string, std::string> files = {{"core-site.xml", core},
                                                    {"hdfs-site.xml", hdfs}};
  auto zip = [&](const TempDir& job) {
    EXPECT_TRUE(ZipHadoopConf(files, job.path()).ok());
    absl::StatusOr<std::string> bytes = ReadFile(job.path() + "/" + kHadoopConfZip);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_FALSE(fs::exists(job.path() + "/.hadoop-conf")) << "the scratch copy is removed";
    return bytes.ok() ? *bytes : std::string();
  };
  TempDir first;
  TempDir second;
  const std::string a = zip(first);
  EXPECT_EQ(zip(second), a);
  // The zip carries the source's time (copies made now would all carry the same one).
  fs::last_write_time(core, long_ago + std::chrono::hours(24));
  TempDir third;
  EXPECT_NE(zip(third), a);
  fs::last_write_time(core, long_ago);
  Write(hdfs, "<configuration><property/><property/></configuration>");
  fs::last_write_time(hdfs, long_ago);
  TempDir fourth;
  EXPECT_NE(zip(fourth), a) << "another configuration";
}

TEST(ZipHadoopConfTest, NoSiteFilesNoZip) {
  TempDir job;
  ASSERT_TRUE(ZipHadoopConf({}, job.path()).ok());
  EXPECT_FALSE(fs::exists(job.path() + "/" + kHadoopConfZip));
}

}  // namespace
}  // namespace tony::cluster
