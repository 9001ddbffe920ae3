// `tony cluster` against the real mini cluster, through the real binary.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "e2e/tony_runner.h"

namespace tony::testing {
namespace {

TEST(ClusterCliTest, ListsTheNodeManagerWithItsGpus) {
  const char* dir = std::getenv("TONY_TEST_HADOOP_CONF_DIR");
  if (dir == nullptr) GTEST_SKIP() << "TONY_TEST_HADOOP_CONF_DIR is not set (no mini cluster)";
  TonyRunner runner;
  TonyResult r = runner.Run({"cluster"}, 60000, {{"HADOOP_CONF_DIR", dir}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("RUNNING"))) << r.out;
  EXPECT_NE(r.out.find("8192"), std::string::npos) << r.out;  // the NodeManager's memory
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\b4\b)"))) << r.out;  // its GPUs
}

TEST(ClusterCliTest, NoConfigurationIsBadInput) {
  TonyRunner runner;
  TonyResult r = runner.Run({"cluster"}, 30000, {{"HADOOP_CONF_DIR", ""}, {"YARN_CONF_DIR", ""}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("set HADOOP_CONF_DIR"), std::string::npos) << r.err;
}

TEST(ClusterCliTest, UnreachableResourceManagerIsOneClearError) {
  TonyRunner runner;
  const std::string conf = runner.work_dir() + "/conf";
  std::filesystem::create_directories(conf);
  std::ofstream(conf + "/yarn-site.xml")
      << "<configuration><property><name>yarn.resourcemanager.address</name>"
         "<value>127.0.0.1:1</value></property></configuration>\n";
  TonyResult r = runner.Run({"cluster"}, 60000, {{"HADOOP_CONF_DIR", conf}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tony::testing
