#include "executor/hadoop_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tony::executor {
namespace {

namespace fs = std::filesystem;

// A container's working directory and a stand-in for a node's Hadoop installation, whose
// `bin/hadoop` is the script given (a unit test of the logic around the command, not of Hadoop).
class HadoopEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tony-hadoop-env-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "work");
    fs::create_directories(root_ / "hadoop" / "bin");
    if (const char* home = getenv("HADOOP_HOME")) saved_home_ = home;
    if (const char* cp = getenv("CLASSPATH")) saved_classpath_ = cp;
    unsetenv("CLASSPATH");
  }
  void TearDown() override {
    if (saved_home_)
      setenv("HADOOP_HOME", saved_home_->c_str(), 1);
    else
      unsetenv("HADOOP_HOME");
    if (saved_classpath_)
      setenv("CLASSPATH", saved_classpath_->c_str(), 1);
    else
      unsetenv("CLASSPATH");
    fs::remove_all(root_);
  }
  void InstallHadoop(const std::string& script) {
    const fs::path command = root_ / "hadoop" / "bin" / "hadoop";
    std::ofstream(command) << "#!/bin/sh\n" << script << "\n";
    fs::permissions(command, fs::perms::owner_all);
    setenv("HADOOP_HOME", (root_ / "hadoop").c_str(), 1);
  }
  std::map<std::string, std::string> Env(int timeout_ms = 10000) {
    return HadoopTaskEnvironment((root_ / "work").string(), root_.string(), timeout_ms);
  }

  fs::path root_;
  std::optional<std::string> saved_home_, saved_classpath_;
};

TEST_F(HadoopEnvTest, TheJobsConfigurationIsTheTasksHadoopConfDir) {
  unsetenv("HADOOP_HOME");
  EXPECT_EQ(Env().count("HADOOP_CONF_DIR"), 0u) << "no job configuration, nothing set";
  fs::create_directories(root_ / "work" / "hadoop-conf");
  EXPECT_EQ(Env()["HADOOP_CONF_DIR"], (root_ / "work" / "hadoop-conf").string());
}

TEST_F(HadoopEnvTest, ClasspathComesFromTheNodesHadoopBeforeTheTasksOwn) {
  fs::create_directories(root_ / "work" / "hadoop-conf");
  // The command sees the job's configuration and must be asked for the globbed classpath.
  InstallHadoop(
      "[ \"$1 $2\" = 'classpath --glob' ] || exit 3\n"
      "case \"$HADOOP_CONF_DIR\" in */work/hadoop-conf) ;; *) exit 4;; esac\n"
      "echo '/opt/hadoop/etc/hadoop:/opt/hadoop/share/hadoop/common/a.jar'");
  setenv("CLASSPATH", "/mine.jar", 1);
  EXPECT_EQ(Env()["CLASSPATH"],
            "/opt/hadoop/etc/hadoop:/opt/hadoop/share/hadoop/common/a.jar:/mine.jar");
}

TEST_F(HadoopEnvTest, AFailingOrHangingHadoopLeavesClasspathAlone) {
  InstallHadoop("exit 1");
  EXPECT_EQ(Env().count("CLASSPATH"), 0u);
  InstallHadoop("exec sleep 30");
  EXPECT_EQ(Env(/*timeout_ms=*/300).count("CLASSPATH"), 0u);
  EXPECT_FALSE(fs::exists(root_ / ".hadoop-classpath")) << "its scratch output is removed";
}

}  // namespace
}  // namespace tony::executor
