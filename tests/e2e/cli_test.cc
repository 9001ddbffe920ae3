// Bad input through the real binary: one line naming what is wrong, exit code 2, nothing
// started (no job directory).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "e2e/tony_runner.h"

namespace tony::testing {
namespace {

namespace fs = std::filesystem;

class CliTest : public ::testing::Test {
 protected:
  // Runs tony and checks the bad-input contract; returns the error line.
  std::string ExpectBadInput(const std::vector<std::string>& args,
                             const std::map<std::string, std::string>& env = {}) {
    TonyResult r = runner_.Run(args, 30000, env);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(r.app_id.empty()) << "a job was started:\n" << r.out;
    EXPECT_FALSE(fs::exists(runner_.home() + "/jobs")) << "something was staged";
    std::string error;
    for (size_t start = 0; start < r.err.size();) {
      size_t end = r.err.find('\n', start);
      std::string line = r.err.substr(start, end - start);
      if (line.starts_with("tony: error: ")) {
        EXPECT_TRUE(error.empty()) << "more than one error line:\n" << r.err;
        error = line;
      }
      start = end == std::string::npos ? r.err.size() : end + 1;
    }
    EXPECT_FALSE(error.empty()) << r.err;
    return error;
  }

  TonyRunner runner_;
};

TEST_F(CliTest, ConfigPrintsTheResolvedConfigurationWithSources) {
  TonyResult r = runner_.Run(
      {"config", "--explain", "--executes", "train.py", "--conf", "tony.worker.instances=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tony.worker.instances=2"), std::string::npos);
  EXPECT_NE(r.out.find("# --conf"), std::string::npos);
  EXPECT_NE(r.out.find("tony.containers.command=train.py"), std::string::npos);
  EXPECT_NE(r.out.find("tony.am.memory=2g"), std::string::npos);
}

TEST_F(CliTest, BadConfigurationValues) {
  EXPECT_EQ(
      ExpectBadInput({"config", "--conf", "tony.worker.instances=-1"}),
      "tony: error: tony.worker.instances = \"-1\" (--conf): expected a non-negative integer");
  EXPECT_EQ(ExpectBadInput({"submit", "--executes", "x", "--conf", "tony.worker.instances=1.5"}),
            "tony: error: tony.worker.instances = \"1.5\" (--conf): expected an integer, got "
            "\"1.5\"");
  EXPECT_NE(ExpectBadInput({"config", "--conf", "tony.worker.instances=1", "--conf",
                            "tony.worker.memory=lots"})
                .find("tony.worker.memory = \"lots\""),
            std::string::npos);
  EXPECT_NE(ExpectBadInput({"config", "--conf", "tony.application.framework=caffe"})
                .find("expected one of tensorflow, pytorch, mxnet, horovod, jax, standalone"),
            std::string::npos);
  EXPECT_EQ(ExpectBadInput({"config", "--conf", "novalue"}),
            "tony: error: --conf \"novalue\": expected key=value");
  EXPECT_NE(
      ExpectBadInput({"submit", "--executes", "x", "--conf",
                      "tony.application.framework=standalone", "--conf", "tony.worker.instances=2"})
          .find("standalone runs exactly one task"),
      std::string::npos);
}

TEST_F(CliTest, BadFiles) {
  EXPECT_EQ(ExpectBadInput({"config", "--conf_file", runner_.work_dir() + "/missing.xml"}),
            "tony: error: --conf_file " + runner_.work_dir() + "/missing.xml: no such file");
  const std::string bad_xml = runner_.work_dir() + "/bad.xml";
  std::ofstream(bad_xml) << "<configuration>\n  <property><name>a</name>\n</configuration>\n";
  EXPECT_NE(ExpectBadInput({"config", "--conf_file", bad_xml}).find(bad_xml + ":3: malformed XML"),
            std::string::npos);
}

TEST_F(CliTest, MissingEntryPointInterpreterOrVenv) {
  EXPECT_NE(ExpectBadInput(
                {"submit", "--executes", "nope.py", "--python_binary_path", "/usr/bin/python3"})
                .find("--executes nope.py: no such file"),
            std::string::npos);
  const std::string script = runner_.work_dir() + "/train.py";
  std::ofstream(script) << "print('x')\n";
  EXPECT_NE(ExpectBadInput(
                {"submit", "--executes", "train.py", "--python_binary_path", "/no/such/python"})
                .find("--python_binary_path /no/such/python: no such executable"),
            std::string::npos);
  const std::string venv = runner_.work_dir() + "/venv.zip";
  std::ofstream(venv) << "this is not a zip file";
  EXPECT_NE(ExpectBadInput({"submit", "--executes", "train.py", "--python_venv", venv,
                            "--python_binary_path", "bin/python"})
                .find("--python_venv " + venv + ":"),
            std::string::npos);
}

TEST_F(CliTest, HdfsInputsNeedTheYarnBackend) {
  std::ofstream(runner_.work_dir() + "/train.py") << "print('x')\n";
  EXPECT_EQ(
      ExpectBadInput({"submit", "--executes", "train.py", "--python_venv",
                      "hdfs:///user/a/venv.zip", "--python_binary_path", "bin/python"}),
      "tony: error: --python_venv hdfs:///user/a/venv.zip: hdfs:// paths need --backend yarn");
  EXPECT_EQ(ExpectBadInput({"submit", "--executes", "train.py", "--python_binary_path",
                            "/usr/bin/python3", "--hdfs_classpath", "hdfs:///user/a/lib"}),
            "tony: error: tony.worker.resources: hdfs:///user/a/lib: hdfs:// paths need --backend "
            "yarn");
}

TEST_F(CliTest, StatusAndKillOfNoSuchJob) {
  EXPECT_EQ(ExpectBadInput({"status", "job-42"}),
            "tony: error: 'job-42' is not an application id (application_<cluster timestamp>_"
            "<number>)");
  EXPECT_NE(ExpectBadInput({"kill", "application_1700000000000_0042"})
                .find("no application application_1700000000000_0042 under " + runner_.home()),
            std::string::npos);
  EXPECT_NE(ExpectBadInput({"status", "application_1700000000000_0042", "--backend", "mesos"})
                .find("mesos"),
            std::string::npos);
}

TEST_F(CliTest, ListWithNoJobsAndWithNoCluster) {
  TonyResult r = runner_.Run({"list"}, 30000);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "no running tony applications (--all lists ended ones too)\n");
  EXPECT_NE(ExpectBadInput({"list", "--backend", "yarn"},
                           {{"HADOOP_CONF_DIR", ""}, {"YARN_CONF_DIR", ""}})
                .find("HADOOP_CONF_DIR"),
            std::string::npos);
}

TEST_F(CliTest, JobThatCanNeverFitThisMachine) {
  EXPECT_NE(ExpectBadInput({"submit", "--executes", "true", "--conf", "tony.worker.instances=1",
                            "--conf", "tony.worker.memory=4096g"})
                .find("asks for 4096g of memory, but this machine offers"),
            std::string::npos);
  EXPECT_NE(ExpectBadInput({"submit", "--executes", "true", "--conf", "tony.worker.instances=4",
                            "--conf", "tony.local.vcores=2"})
                .find("GANG mode"),
            std::string::npos);
}

TEST_F(CliTest, MisspelledKeyWarnsWithTheIntendedKey) {
  TonyResult r =
      runner_.Run({"config", "--executes", "x", "--conf", "tony.application.framwork=pytorch"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("did you mean tony.application.framework?"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tony::testing
