// tony.application.output-dir: which places each backend takes, and the one line that names what
// is wrong with any other.

#include <gtest/gtest.h>

#include "config/job_spec_fixture.h"

namespace tony::config {
namespace {

TEST_F(JobSpecTest, TheOutputDirectoryIsTheBackendsDefaultUnlessSet) {
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->output_dir, "");
}

TEST_F(JobSpecTest, LocallyAnOutputDirectoryIsAPath) {
  for (const auto& [given, read] :
       std::vector<std::pair<std::string, std::string>>{{"/data/run1", "/data/run1"},
                                                        {" runs/1 ", "runs/1"},
                                                        {"file:///data/run1", "/data/run1"}}) {
    Set("tony.application.output-dir", given);
    absl::StatusOr<JobSpec> spec = Build();
    ASSERT_TRUE(spec.ok()) << given << ": " << spec.status();
    EXPECT_EQ(spec->output_dir, read) << given;
  }
  Set("tony.application.output-dir", "hdfs:///user/alice/run1");
  EXPECT_EQ(Error(),
            "tony.application.output-dir = \"hdfs:///user/alice/run1\" (--conf): hdfs:// outputs "
            "need the yarn backend; the local backend writes them to a local path");
}

TEST_F(JobSpecTest, OnYarnAnOutputDirectoryNamesItsFileSystem) {
  Set("tony.application.backend", "yarn");
  for (const auto& [given, read] : std::vector<std::pair<std::string, std::string>>{
           {"hdfs:///user/alice/run1", "hdfs:///user/alice/run1"},
           {"viewfs://c/user/alice/run1", "viewfs://c/user/alice/run1"},
           {"file:///shared/run1", "/shared/run1"}}) {
    Set("tony.application.output-dir", given);
    absl::StatusOr<JobSpec> spec = Build();
    ASSERT_TRUE(spec.ok()) << given << ": " << spec.status();
    EXPECT_EQ(spec->output_dir, read) << given;
  }
  // A bare path could mean HDFS or each node's disk: tony does not guess.
  Set("tony.application.output-dir", "/user/alice/run1");
  EXPECT_EQ(Error(),
            "tony.application.output-dir = \"/user/alice/run1\" (--conf): a path without a scheme "
            "is ambiguous on YARN: name hdfs://<path> (or viewfs://), or file://<path> for a "
            "directory on every node's disk");
}

TEST_F(JobSpecTest, AnOutputDirectoryOfAnotherFileSystemIsRefused) {
  Set("tony.application.backend", "yarn");
  Set("tony.application.output-dir", "s3a://bucket/run1");
  EXPECT_EQ(Error(),
            "tony.application.output-dir = \"s3a://bucket/run1\" (--conf): expected a local path, "
            "or an hdfs:// or viewfs:// URI");
  Set("tony.application.output-dir", "file://relative/run1");
  EXPECT_EQ(Error(),
            "tony.application.output-dir = \"file://relative/run1\" (--conf): expected "
            "file:///<absolute path>");
}

}  // namespace
}  // namespace tony::config
