// Bad input through the real binary: one line naming what is wrong, exit code 2, nothing
// started (no job directory).

#include <gtest/gtest.h>
#include <sys/stat.h>

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

TEST_F(CliTest, AnOutputDirectoryTonyCannotUseIsRefusedBeforeAnythingIsStaged) {
  std::ofstream(runner_.work_dir() + "/train.py") << "print('x')\n";
  std::ofstream(runner_.work_dir() + "/a-file") << "x";
  const std::vector<std::string> submit = {"submit", "--executes", "train.py",
                                           "--python_binary_path", "/usr/bin/python3"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = submit;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  EXPECT_EQ(ExpectBadInput(with({"--output_dir", "a-file/run1"})),
            "tony: error: --output_dir a-file/run1: " + runner_.work_dir() +
                "/a-file is not a directory");
  EXPECT_EQ(ExpectBadInput(with({"--output_dir", "hdfs:///user/a/run1"})),
            "tony: error: tony.application.output-dir = \"hdfs:///user/a/run1\" (--output_dir): "
            "hdfs:// outputs need the yarn backend; the local backend writes them to a local path");
  EXPECT_EQ(ExpectBadInput(with({"--output_dir", "s3a://bucket/run1"})),
            "tony: error: tony.application.output-dir = \"s3a://bucket/run1\" (--output_dir): "
            "expected a local path, or an hdfs:// or viewfs:// URI");
  EXPECT_EQ(ExpectBadInput(with({"--backend", "yarn", "--output_dir", "/user/a/run1"})),
            "tony: error: tony.application.output-dir = \"/user/a/run1\" (--output_dir): a path "
            "without a scheme is ambiguous on YARN: name hdfs://<path> (or viewfs://), or "
            "file://<path> for a directory on every node's disk");
}

TEST_F(CliTest, KerberizedClusterWithoutATicketIsRefusedBeforeAnythingIsAsked) {
  // The cluster's own configuration says Kerberos; its addresses lead nowhere, and nothing may
  // try them. No ticket cache, no keytab: the one line says how to log in.
  const std::string conf_dir = runner_.work_dir() + "/hadoop-conf";
  fs::create_directories(conf_dir);
  std::ofstream(conf_dir + "/core-site.xml")
      << "<configuration>\n"
         "<property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:1</value></property>\n"
         "<property><name>hadoop.security.authentication</name><value>kerberos</value>"
         "</property>\n</configuration>\n";
  std::ofstream(conf_dir + "/yarn-site.xml")
      << "<configuration><property><name>yarn.resourcemanager.address</name>"
         "<value>127.0.0.1:1</value></property></configuration>\n";
  std::ofstream(runner_.work_dir() + "/train.py") << "print('x')\n";
  const std::map<std::string, std::string> env = {
      {"HADOOP_CONF_DIR", conf_dir},
      {"KRB5CCNAME", "FILE:" + runner_.work_dir() + "/no-ticket-cache"}};
  const std::string error = ExpectBadInput({"submit", "--backend", "yarn", "--executes", "train.py",
                                            "--python_binary_path", "/usr/bin/python3"},
                                           env);
  EXPECT_NE(
      error.find("hadoop.security.authentication = kerberos, " + conf_dir + "/core-site.xml:3"),
      std::string::npos)
      << error;
  EXPECT_NE(error.find("no Kerberos ticket"), std::string::npos) << error;
  EXPECT_NE(error.find("run kinit"), std::string::npos) << error;

  // A keytab that is not there, and security turned off against such a cluster: each one line.
  const std::string missing = runner_.work_dir() + "/missing.keytab";
  EXPECT_NE(ExpectBadInput(
                {"submit", "--backend", "yarn", "--executes", "train.py", "--python_binary_path",
                 "/usr/bin/python3", "--conf", "tony.kerberos.keytab=" + missing},
                env)
                .find("cannot read the keytab " + missing + " (tony.kerberos.keytab)"),
            std::string::npos);
  EXPECT_NE(ExpectBadInput(
                {"submit", "--backend", "yarn", "--executes", "train.py", "--python_binary_path",
                 "/usr/bin/python3", "--conf", "tony.application.security.enabled=false"},
                env)
                .find("tony.application.security.enabled = false"),
            std::string::npos);
  EXPECT_NE(ExpectBadInput(
                {"submit", "--backend", "yarn", "--executes", "train.py", "--python_binary_path",
                 "/usr/bin/python3", "--conf", "tony.other.namenodes=http://nn:50070"},
                env)
                .find("tony.other.namenodes = \"http://nn:50070\""),
            std::string::npos);
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

TEST_F(CliTest, UnknownCommandsAndLogsOfNoSuchJob) {
  EXPECT_EQ(ExpectBadInput({"frobnicate", "application_1700000000000_0042"}),
            "tony: error: unknown command 'frobnicate' (commands: config, submit, cluster, list, "
            "status, kill, logs, history, gc; tony --help)");
  EXPECT_NE(ExpectBadInput({"logs", "application_1700000000000_0042"})
                .find("no history of application_1700000000000_0042 in " + runner_.home() +
                      "/history/finished"),
            std::string::npos);
  EXPECT_NE(ExpectBadInput({"logs", "application_1700000000000_0042", "--task", "worker"})
                .find("--task 'worker': expected TYPE:INDEX"),
            std::string::npos);
  EXPECT_NE(ExpectBadInput({"logs", "application_1700000000000_0042", "--stderr", "--all"})
                .find("--stderr and --all"),
            std::string::npos);
  EXPECT_NE(ExpectBadInput({"history", "--conf", "tony.history.location=hdfs:///h"})
                .find("tony.history.location 'hdfs:///h' is not a local directory"),
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

// Hostile configuration files: each is one error line naming the file and line, exit code 2,
// never a crash or a hang (issue #11).
TEST_F(CliTest, HostileConfigurationFiles) {
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = runner_.work_dir() + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  };
  // A 60 KB job-type name overflowed the stack in std::regex (SIGSEGV).
  const std::string long_name =
      write("long.xml", "<configuration>\n<property>\n<name>tony." + std::string(60000, 'a') +
                            ".instances</name>\n<value>1</value>\n</property>\n</configuration>\n");
  std::string error = ExpectBadInput({"submit", "--executes", "true", "--conf_file", long_name});
  EXPECT_TRUE(error.starts_with("tony: error: tony.aaaa")) << error.substr(0, 300);
  EXPECT_NE(error.find("(" + long_name +
                       ":2): the job type name is 60000 characters long; at most 128 are allowed"),
            std::string::npos)
      << error.substr(0, 300);
  EXPECT_LT(error.size(), 600u);

  const std::string nul =
      write("nul.xml", std::string("<configuration>\n<property><name>a</name><value>1") + '\0' +
                           "2</value></property>\n</configuration>\n");
  EXPECT_EQ(ExpectBadInput({"config", "--conf_file", nul}),
            "tony: error: " + nul + ":2: NUL byte (a configuration file must be UTF-8 text)");

  const std::string doctype =
      write("doctype.xml",
            "<?xml version=\"1.0\"?>\n<!DOCTYPE configuration [\n<!ENTITY a \"aaaaaaaaaa\">\n"
            "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
            "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n]>\n"
            "<configuration><property><name>tony.application.name</name><value>&c;</value>"
            "</property></configuration>\n");
  EXPECT_EQ(ExpectBadInput({"config", "--conf_file", doctype}),
            "tony: error: " + doctype +
                ":2: <!DOCTYPE> is not allowed in a configuration file (tony reads no DTD and "
                "expands no entities)");
}

TEST_F(CliTest, ConfFileThatIsNoRegularFile) {
  const std::string fifo = runner_.work_dir() + "/fifo.xml";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero"), runner_.work_dir()}) {
    EXPECT_EQ(ExpectBadInput({"config", "--conf_file", path}),
              "tony: error: " + path +
                  ": not a regular file (a configuration file must be a plain XML file)");
  }
  const std::string big = runner_.work_dir() + "/big.xml";
  std::ofstream(big) << "<configuration/>";
  fs::resize_file(big, (64 << 20) + 1);  // sparse: not written, and must not be read
  EXPECT_EQ(ExpectBadInput({"config", "--conf_file", big}),
            "tony: error: " + big +
                ": the configuration file is 67108865 bytes; tony reads at most 64 MiB");
}

TEST_F(CliTest, HugeConfFlag) {
  std::string error = ExpectBadInput(
      {"config", "--executes", "x", "--conf", "tony." + std::string(100000, 'b') + ".instances=1"});
  EXPECT_NE(error.find("(--conf): the job type name is 100000 characters long"), std::string::npos)
      << error.substr(0, 300);
  TonyResult r = runner_.Run(
      {"config", "--executes", "x", "--conf", "tony.application.name=" + std::string(100000, 'n')},
      30000);
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 300);
}

TEST_F(CliTest, ArchivesThatWouldWriteOutsideTheTaskAreRefusedAtSubmit) {
  const std::string zip = runner_.work_dir() + "/escape.zip";
  const std::string make = "python3 -c \"import zipfile; z = zipfile.ZipFile('" + zip +
                           "', 'w'); z.writestr('../../escaped.txt', 'x'); z.close()\"";
  ASSERT_EQ(std::system(make.c_str()), 0);
  const std::string script = runner_.work_dir() + "/train.py";
  std::ofstream(script) << "print('x')\n";
  const std::string resource =
      ExpectBadInput({"submit", "--executes", "train.py", "--python_binary_path",
                      "/usr/bin/python3", "--conf", "tony.worker.resources=" + zip + "#archive"});
  EXPECT_NE(resource.find("tony.worker.resources: "), std::string::npos) << resource;
  EXPECT_NE(resource.find("../../escaped.txt"), std::string::npos) << resource;
  const std::string src = ExpectBadInput({"submit", "--src_dir", zip, "--executes", "train.py",
                                          "--python_binary_path", "/usr/bin/python3"});
  EXPECT_NE(src.find("--src_dir " + zip + ": "), std::string::npos) << src;
}

TEST_F(CliTest, TonyHomeIsPrivateWhateverTheUmaskAndNeverWrittenThroughALink) {
  auto mode = [](const std::string& path) {
    struct stat info {};
    return lstat(path.c_str(), &info) == 0 ? info.st_mode & 07777 : 0u;
  };
  const std::vector<std::string> submit = {"submit", "--executes", "true"};
  const mode_t old = umask(0);
  TonyResult r = runner_.Run(submit, 60000);
  umask(old);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(mode(runner_.home() + "/jobs"), 0700u);
  EXPECT_EQ(mode(runner_.home() + "/jobs/" + r.app_id), 0700u);

  // A jobs/ that others may write is refused: they could plant links in it.
  const std::string jobs = runner_.home() + "/jobs";
  ASSERT_EQ(chmod(jobs.c_str(), 0777), 0);
  TonyResult open = runner_.Run(submit, 60000);
  EXPECT_EQ(open.exit_code, 2) << open.out << open.err;
  EXPECT_NE(open.err.find("tony: error: '" + jobs + "' is writable by others (mode 0777)"),
            std::string::npos)
      << open.err;
  EXPECT_TRUE(open.app_id.empty()) << open.out;
  ASSERT_EQ(chmod(jobs.c_str(), 0700), 0);

  // The application sequence replaced by a link to a file of the user's: refused, and the file
  // keeps its content.
  const std::string victim = runner_.home() + "/victim";
  { std::ofstream(victim) << "VICTIM"; }
  const std::string sequence = runner_.home() + "/application-sequence";
  ASSERT_EQ(unlink(sequence.c_str()), 0);
  ASSERT_EQ(symlink(victim.c_str(), sequence.c_str()), 0);
  TonyResult linked = runner_.Run(submit, 60000);
  EXPECT_EQ(linked.exit_code, 2) << linked.out << linked.err;
  EXPECT_NE(linked.err.find("tony: error: '" + sequence + "' is a symbolic link"),
            std::string::npos)
      << linked.err;
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "VICTIM");
}

}  // namespace
}  // namespace tony::testing
