#include "config/config_loader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace tony::config {
namespace {

namespace fs = std::filesystem;

class ConfigLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tony-config-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fs::create_directories(dir_ / "confdir");
    fs::create_directories(dir_ / "cwd");
    request_.working_dir = (dir_ / "cwd").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& relative, const std::string& properties) {
    fs::path path = dir_ / relative;
    std::ofstream(path) << "<?xml version=\"1.0\"?>\n<configuration>\n"
                        << properties << "</configuration>\n";
    return path.string();
  }
  static std::string Prop(const std::string& name, const std::string& value) {
    return "  <property><name>" + name + "</name><value>" + value + "</value></property>\n";
  }

  fs::path dir_;
  ConfigRequest request_;
};

TEST_F(ConfigLoaderTest, PrecedenceDefaultsFileSiteConfFlags) {
  request_.conf_file =
      Write("job.xml", Prop("tony.am.memory", "3g") + Prop("tony.am.vcores", "2") +
                           Prop("tony.yarn.queue", "file") + Prop("tony.application.name", "file"));
  Write("confdir/tony-site.xml", Prop("tony.am.vcores", "3") + Prop("tony.yarn.queue", "site") +
                                     Prop("tony.application.name", "site"));
  request_.tony_conf_dir = (dir_ / "confdir").string();
  request_.conf = {"tony.yarn.queue=conf", "tony.application.name=conf",
                   "tony.application.backend=yarn"};
  request_.flags.backend = "local";

  absl::StatusOr<ResolvedConfig> resolved = ResolveConfiguration(request_);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const Configuration& conf = resolved->conf;
  EXPECT_EQ(conf.Get("tony.am.gpus"), "0");
  EXPECT_EQ(conf.Find("tony.am.gpus")->source.ToString(), "default");
  EXPECT_EQ(conf.Get("tony.am.memory"), "3g");
  EXPECT_EQ(conf.Find("tony.am.memory")->source.ToString(), *request_.conf_file + ":3");
  EXPECT_EQ(conf.Get("tony.am.vcores"), "3");
  EXPECT_EQ(conf.Find("tony.am.vcores")->source.ToString(),
            (dir_ / "confdir/tony-site.xml").string() + ":3");
  EXPECT_EQ(conf.Get("tony.yarn.queue"), "conf");
  EXPECT_EQ(conf.Find("tony.yarn.queue")->source.ToString(), "--conf");
  EXPECT_EQ(conf.Get("tony.application.backend"), "local");
  EXPECT_EQ(conf.Find("tony.application.backend")->source.ToString(), "--backend");
  EXPECT_TRUE(resolved->warnings.empty());
}

TEST_F(ConfigLoaderTest, TonyXmlInWorkingDirIsUsedWhenNoConfFileIsGiven) {
  Write("cwd/tony.xml", Prop("tony.worker.instances", "3"));
  absl::StatusOr<ResolvedConfig> resolved = ResolveConfiguration(request_);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->conf.Get("tony.worker.instances"), "3");

  // An explicit --conf_file replaces ./tony.xml rather than adding to it.
  request_.conf_file = Write("other.xml", Prop("tony.ps.instances", "1"));
  resolved = ResolveConfiguration(request_);
  ASSERT_TRUE(resolved.ok());
  EXPECT_FALSE(resolved->conf.Has("tony.worker.instances"));
  EXPECT_EQ(resolved->conf.Get("tony.ps.instances"), "1");
}

TEST_F(ConfigLoaderTest, FetchedConfFileIsNamedByWhereItCameFrom) {
  Write("cwd/tony.xml", Prop("tony.worker.instances", "3"));
  request_.conf_file = "hdfs:///user/a/job.xml";
  request_.conf_file_text =
      "<configuration>\n" + Prop("tony.ps.instances", "2") + "</configuration>\n";
  absl::StatusOr<ResolvedConfig> resolved = ResolveConfiguration(request_);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->conf.Get("tony.ps.instances"), "2");
  EXPECT_EQ(resolved->conf.Find("tony.ps.instances")->source.ToString(),
            "hdfs:///user/a/job.xml:2");
  EXPECT_FALSE(resolved->conf.Has("tony.worker.instances")) << "it replaces ./tony.xml";

  request_.conf_file_text = "<configuration><property>";
  resolved = ResolveConfiguration(request_);
  ASSERT_FALSE(resolved.ok());
  EXPECT_TRUE(std::string(resolved.status().message()).starts_with("hdfs:///user/a/job.xml:"))
      << resolved.status();
}

TEST_F(ConfigLoaderTest, MultiValuedKeysAppendAcrossLevels) {
  request_.conf_file = Write(
      "job.xml", Prop("tony.execution.envs", "A=1") + Prop("tony.containers.resources", "a.zip"));
  Write("confdir/tony-site.xml", Prop("tony.execution.envs", "B=2"));
  request_.tony_conf_dir = (dir_ / "confdir").string();
  request_.conf = {"tony.execution.envs=C=3"};
  request_.flags.shell_env = {"D=4", "E=5"};
  request_.flags.container_env = {"X=9"};
  request_.flags.hdfs_classpath = "hdfs:///lib";
  absl::StatusOr<ResolvedConfig> resolved = ResolveConfiguration(request_);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->conf.Get("tony.execution.envs"), "A=1,B=2,C=3,D=4,E=5");
  EXPECT_EQ(resolved->conf.Find("tony.execution.envs")->appended.size(), 4u);
  EXPECT_EQ(resolved->conf.Get("tony.containers.envs"), "X=9");
  EXPECT_EQ(resolved->conf.Get("tony.containers.resources"), "a.zip,hdfs:///lib");
}

TEST_F(ConfigLoaderTest, SubmitFlagsBuildTheTaskCommand) {
  request_.flags.executes = "train.py";
  request_.flags.task_params = "--epochs 3";
  request_.flags.python_binary_path = "bin/python3";
  request_.flags.python_venv = "venv.zip";
  absl::StatusOr<ResolvedConfig> resolved = ResolveConfiguration(request_);
  ASSERT_TRUE(resolved.ok());
  EXPECT_EQ(resolved->conf.Get("tony.containers.command"), "venv/bin/python3 train.py --epochs 3");
  EXPECT_EQ(resolved->conf.Find("tony.containers.command")->source.ToString(), "--executes");
  EXPECT_EQ(resolved->conf.Get("tony.python-exec-path"), "venv/bin/python3");
  EXPECT_EQ(resolved->conf.Get("tony.application.python-venv"), "venv.zip");

  SubmitFlags absolute;
  absolute.executes = "train.py";
  absolute.python_binary_path = "/usr/bin/python3";
  absolute.python_venv = "venv.zip";
  EXPECT_EQ(BuildTaskCommand(absolute), "/usr/bin/python3 train.py");
  SubmitFlags no_venv;
  no_venv.executes = "train.py";
  no_venv.python_binary_path = "python3";
  EXPECT_EQ(BuildTaskCommand(no_venv), "python3 train.py");
  SubmitFlags bare;
  bare.executes = "./run.sh";
  EXPECT_EQ(BuildTaskCommand(bare), "./run.sh");
}

TEST_F(ConfigLoaderTest, BadInputs) {
  ConfigRequest missing = request_;
  missing.conf_file = (dir_ / "nope.xml").string();
  absl::StatusOr<ResolvedConfig> resolved = ResolveConfiguration(missing);
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(std::string(resolved.status().message()),
            "--conf_file " + *missing.conf_file + ": no such file");

  ConfigRequest no_equals = request_;
  no_equals.conf = {"tony.worker.instances"};
  resolved = ResolveConfiguration(no_equals);
  EXPECT_EQ(std::string(resolved.status().message()),
            "--conf \"tony.worker.instances\": expected key=value");

  ConfigRequest bad_env = request_;
  bad_env.flags.shell_env = {"JUSTNAME"};
  resolved = ResolveConfiguration(bad_env);
  EXPECT_EQ(std::string(resolved.status().message()),
            "--shell_env \"JUSTNAME\": expected NAME=VALUE");

  ConfigRequest malformed = request_;
  malformed.conf_file = (dir_ / "bad.xml").string();
  std::ofstream(*malformed.conf_file) << "<configuration>\n<property>\n</configuration>\n";
  resolved = ResolveConfiguration(malformed);
  ASSERT_FALSE(resolved.ok());
  EXPECT_TRUE(std::string(resolved.status().message()).starts_with(*malformed.conf_file + ":3:"))
      << resolved.status();
}

TEST_F(ConfigLoaderTest, MisspelledKeyWarnsWithTheIntendedKey) {
  request_.conf = {"tony.application.framwork=pytorch"};
  absl::StatusOr<ResolvedConfig> resolved = ResolveConfiguration(request_);
  ASSERT_TRUE(resolved.ok());
  ASSERT_EQ(resolved->warnings.size(), 1u);
  EXPECT_EQ(resolved->warnings[0],
            "unknown key tony.application.framwork (--conf); did you mean "
            "tony.application.framework?");
}

TEST_F(ConfigLoaderTest, ConfFileThatIsNoRegularFileIsAnErrorNotAHang) {
  for (const std::string& path : {(dir_ / "confdir").string(), std::string("/dev/zero")}) {
    ConfigRequest request = request_;
    request.conf_file = path;
    absl::StatusOr<ResolvedConfig> resolved = ResolveConfiguration(request);
    ASSERT_FALSE(resolved.ok()) << path;
    EXPECT_EQ(std::string(resolved.status().message()),
              path + ": not a regular file (a configuration file must be a plain XML file)");
  }
}

TEST_F(ConfigLoaderTest, HugeConfFlagsWork) {
  request_.conf = {"tony.application.name=" + std::string(1 << 20, 'n'),
                   "tony.x" + std::string(1 << 20, 'x') + "=1"};
  absl::StatusOr<ResolvedConfig> resolved = ResolveConfiguration(request_);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->conf.Get("tony.application.name").size(), 1u << 20);
  ASSERT_EQ(resolved->warnings.size(), 1u);
  EXPECT_TRUE(resolved->warnings[0].starts_with("unknown key tony.xxx"));
  EXPECT_TRUE(resolved->warnings[0].ends_with("... (1048582 bytes) (--conf) is ignored"))
      << resolved->warnings[0];
}

}  // namespace
}  // namespace tony::config
