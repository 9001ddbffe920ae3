// Cases only the YARN backend has, against the real mini cluster (the cases shared with the local
// backend are in tests/e2e/backend_e2e_test.cc): GPUs from the cluster's count, a request larger
// than the cluster, a gang the cluster cannot grant, node-local asks, inputs kept on HDFS, and the
// self-contained binary of scripts/build-static running every role.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "common/archive.h"
#include "e2e/tony_runner.h"
#include "hadoop/hadoop_conf.h"
#include "hadoop/test_cluster.h"
#include "hadoop/webhdfs.h"
#include "hadoop/yarn_client.h"

namespace tony::testing {
namespace {

namespace fs = std::filesystem;

class YarnE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = TestCluster::FromEnvironment();
    if (!cluster_) GTEST_SKIP() << "TONY_TEST_HADOOP_CONF_DIR is not set (no mini cluster)";
    conf_dir_ = cluster_->conf_dir();
  }
  void TearDown() override {
    if (conf_dir_.empty()) return;
    EXPECT_TRUE(runner_.LeftoverProcesses().empty()) << "processes of the job outlived it";
  }

  std::vector<std::string> Submit(const std::vector<std::string>& conf,
                                  const std::string& command = "") {
    std::vector<std::string> args = {"submit",
                                     "--backend",
                                     "yarn",
                                     "--src_dir",
                                     TonyRunner::SourcePath("tests/e2e/scripts"),
                                     "--conf",
                                     "tony.am.memory=256m",
                                     "--conf",
                                     "tony.task.stop-grace-ms=1000"};
    if (!command.empty()) {
      args.push_back("--conf");
      args.push_back("tony.containers.command=" + command);
    }
    std::vector<std::string> all = conf;
    for (const std::string& c : cluster_->SubmitConf()) all.push_back(c);
    for (const std::string& c : all) {
      args.push_back("--conf");
      args.push_back(c);
    }
    return args;
  }
  std::map<std::string, std::string> Env() const {
    return cluster_->ProcessEnv(runner_.work_dir());
  }
  TonyResult Run(const std::vector<std::string>& args) { return runner_.Run(args, 180000, Env()); }

  // What the ResourceManager says of the application.
  hadoop::ApplicationReport RmReport(const std::string& app_id) {
    absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> yarn = cluster_->Yarn();
    EXPECT_TRUE(yarn.ok()) << yarn.status();
    absl::StatusOr<hadoop::ApplicationId> id = hadoop::ApplicationId::Parse(app_id);
    EXPECT_TRUE(id.ok()) << app_id;
    absl::StatusOr<hadoop::ApplicationReport> report = (*yarn)->GetApplicationReport(*id);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : hadoop::ApplicationReport{};
  }
  // The stdout of every container of the application, from the NodeManager's log directories.
  std::string ContainerStdout(const std::string& app_id) {
    return TonyRunner::ReadFilesBelow(conf_dir_ + "/data", "stdout", app_id);
  }
  static bool TaskRow(const std::string& out, const std::string& task, const std::string& state) {
    return std::regex_search(out, std::regex("(^|\\n)" + task + " +" + state + " "));
  }
  static std::string Describe(const TonyResult& r) {
    return "exit " + std::to_string(r.exit_code) + "\n" + r.out + r.err;
  }

  hadoop::WebHdfsClient Hdfs() const {
    absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster_->Hdfs();
    EXPECT_TRUE(hdfs.ok()) << hdfs.status();
    return *std::move(hdfs);
  }
  // A directory of this test's own under the user's HDFS home.
  std::string UserDir(const std::string& name) const {
    return "/user/" + cluster_->user() + "/" + name + "-" +
           fs::path(runner_.work_dir()).filename().string();
  }

  std::string conf_dir_;
  std::optional<TestCluster> cluster_;
  TonyRunner runner_;
};

TEST_F(YarnE2eTest, GpuRequestIsGrantedFromTheClustersGpuCount) {
  TonyResult r =
      Run(Submit({"tony.worker.instances=2", "tony.worker.memory=256m", "tony.worker.gpus=2"},
                 "echo gpu task $TASK_INDEX"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(ContainerStdout(r.app_id).find("gpu task 1"), std::string::npos);
}

TEST_F(YarnE2eTest, RequestLargerThanTheClusterIsBadInputAndNothingIsSubmitted) {
  TonyResult r = Run(Submit({"tony.worker.instances=1", "tony.worker.memory=64g"}, "true"));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(r.app_id.empty()) << r.out;
  EXPECT_NE(r.err.find("job type worker asks for 65536 MB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("8192 MB"), std::string::npos) << r.err;
}

TEST_F(YarnE2eTest, GangLargerThanTheWholeClusterIsBadInput) {
  // Each container fits the 8 GB NodeManager, but the three (and the AM) never fit together.
  TonyResult r = Run(Submit({"tony.worker.instances=3", "tony.worker.memory=3g"}, "true"));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(r.app_id.empty()) << r.out;
  EXPECT_NE(r.err.find("need 9472 MB, 4 vcores and 0 GPUs at once, but the cluster's running "
                       "NodeManagers have 8192 MB"),
            std::string::npos)
      << r.err;
}

TEST_F(YarnE2eTest, GangTheBusyClusterCannotGrantFailsAtTheAllocationTimeout) {
  // A first job holds 6 GB of the 8 GB; the second job's gang (2 x 3 GB) fits the cluster but
  // cannot be granted while the first runs, and the allocation timeout must end it, naming what
  // is missing.
  TonyRunner blocker_runner;
  pid_t blocker = blocker_runner.Start(Submit({"tony.worker.instances=2", "tony.worker.memory=3g"},
                                              "/usr/bin/python3 sleep_forever.py"),
                                       Env());
  ASSERT_TRUE(blocker_runner.WaitForOutput("2 running", 120000));
  TonyResult r = Run(Submit({"tony.worker.instances=2", "tony.worker.memory=3g",
                             "tony.container.allocation.timeout=3000"},
                            "/usr/bin/python3 sleep_forever.py"));
  kill(blocker, SIGINT);
  TonyResult blocked = blocker_runner.Wait(blocker, 120000);
  EXPECT_EQ(blocked.exit_code, 130) << Describe(blocked);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(std::regex_search(
      r.out,
      std::regex(
          R"(not every task registered within 3000 ms \(tony\.container\.allocation\.timeout\); missing: worker:[01] \(no container\))")))
      << r.out;
  EXPECT_EQ(RmReport(r.app_id).final_status, hadoop::FinalApplicationStatus::kFailed);
}

TEST_F(YarnE2eTest, TheRmShowsTheSubmissionsNamePriorityTagsAndType) {
  TonyResult r = Run(Submit(
      {"tony.worker.instances=1", "tony.worker.memory=128m", "tony.application.name=nightly-train",
       "tony.yarn.priority=4", "tony.application.tags=team:ml,nightly"},
      "true"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  hadoop::ApplicationReport report = RmReport(r.app_id);
  EXPECT_EQ(report.name, "nightly-train");
  EXPECT_EQ(report.priority, 4);
  EXPECT_EQ(report.application_type, "TONY");
  EXPECT_TRUE(report.queue == "default" || report.queue == "root.default") << report.queue;
  std::set<std::string> tags(report.tags.begin(), report.tags.end());
  EXPECT_EQ(tags, (std::set<std::string>{"team:ml", "nightly"}));
}

TEST_F(YarnE2eTest, TaskContainersAreGrantedNodeLocal) {
  // The client names the cluster's NodeManagers in the AM's asks, so CapacityScheduler grants
  // the tasks node-local, several per NodeManager heartbeat, instead of one off-switch container
  // per heartbeat. Its own log says which kind each grant was.
  TonyResult r = Run(Submit({"tony.worker.instances=3", "tony.worker.memory=128m"}, "true"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string attempt =
      "appattempt_" + r.app_id.substr(std::string("application_").size()) + "_000001 ";
  std::ifstream log(conf_dir_ + "/minicluster.log");
  std::map<std::string, int> types;
  for (std::string line; std::getline(log, line);) {
    if (line.find("assignedContainer application attempt=" + attempt) == std::string::npos) {
      continue;
    }
    std::smatch type;
    if (std::regex_search(line, type, std::regex(" type=([A-Z_]+)"))) ++types[type[1]];
  }
  // The AM's own container is the RM's ask, anywhere; the three tasks are the AM's.
  EXPECT_EQ(types["NODE_LOCAL"], 3) << r.app_id;
  EXPECT_EQ(types["OFF_SWITCH"], 1) << r.app_id;
  EXPECT_EQ(types["RACK_LOCAL"], 0) << r.app_id;
}

// The shared libraries an ELF file needs (readelf's NEEDED entries).
TEST_F(YarnE2eTest, ConfFileOnHdfsIsReadWithItsLinesNamed) {
  hadoop::WebHdfsClient hdfs = Hdfs();
  const std::string dir =
      "/user/" + hadoop::HadoopUser() + "/conf-" + fs::path(runner_.work_dir()).filename().string();
  ASSERT_TRUE(
      hdfs.Create(dir + "/tony.xml",
                  "<configuration>\n"
                  "<property><name>tony.worker.instances</name><value>3</value></property>\n"
                  "<property><name>tony.containers.command</name><value>true</value>"
                  "</property>\n</configuration>\n")
          .ok());
  ASSERT_TRUE(hdfs.Create(dir + "/bad.xml",
                          "<configuration>\n<property><value>1</value></property>\n"
                          "</configuration>\n")
                  .ok());
  TonyResult r = Run({"config", "--explain", "--conf_file", "hdfs://" + dir + "/tony.xml"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("tony.worker.instances=3 +# hdfs://" + dir + "/tony.xml:2\n")))
      << r.out;

  TonyResult bad = Run({"config", "--conf_file", "hdfs://" + dir + "/bad.xml"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("tony: error: hdfs://" + dir + "/bad.xml:2: <property> has no <name>"),
            std::string::npos)
      << bad.err;
  TonyResult missing = Run({"config", "--conf_file", "hdfs://" + dir + "/nope.xml"});
  EXPECT_EQ(missing.exit_code, 2) << Describe(missing);
  EXPECT_NE(missing.err.find("tony: error: --conf_file hdfs://" + dir + "/nope.xml: no such file"),
            std::string::npos)
      << missing.err;
  (void)hdfs.Delete(dir, /*recursive=*/true);
}

TEST_F(YarnE2eTest, TasksReadAndWriteHdfsWithTheJobsClientConfiguration) {
  ASSERT_TRUE(fs::exists(PyDepsDir() + "/hdfs_native"))
      << "hdfs-native is not in " << PyDepsDir() << ": run scripts/install-pydeps";
  hadoop::WebHdfsClient hdfs = Hdfs();
  const std::string dir = UserDir("io");
  ASSERT_TRUE(hdfs.Create(dir + "/input.txt", "first line\nsecond\nthird\n").ok());
  ASSERT_TRUE(hdfs.Mkdirs(dir + "/out").ok());
  // Nothing of Hadoop in the tasks' environment but what tony gives them.
  std::vector<std::string> args =
      Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
             "/usr/bin/python3 hdfs_io.py " + dir + "/input.txt " + dir + "/out");
  args.insert(args.end(), {"--shell_env", "PYTHONPATH=" + PyDepsDir()});
  TonyResult r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r) << ContainerStdout(r.app_id);
  for (const char* task : {"worker-0", "worker-1"}) {
    absl::StatusOr<std::string> written = hdfs.Open(dir + "/out/" + task);
    ASSERT_TRUE(written.ok()) << task << ": " << written.status();
    EXPECT_EQ(*written, std::string(task) + " read 3 lines: first line");
  }
  // HADOOP_CONF_DIR is the job's own copy, in the container.
  const std::string out = ContainerStdout(r.app_id);
  EXPECT_TRUE(std::regex_search(out, std::regex("HADOOP_CONF_DIR=/\\S+/hadoop-conf\\b"))) << out;
  if (cluster_->secure()) {
    // Delegation tokens alone: no Kerberos ticket reached the tasks, and the files are the
    // token's user's, not the NodeManager's.
    EXPECT_EQ(out.find("ticket cache: FILE"), std::string::npos) << out;
    EXPECT_NE(out.find("ticket cache: none"), std::string::npos) << out;
    absl::StatusOr<hadoop::FileStatus> written = hdfs.GetFileStatus(dir + "/out/worker-0");
    ASSERT_TRUE(written.ok()) << written.status();
    EXPECT_EQ(written->owner, cluster_->user());
  }
  (void)hdfs.Delete(dir, /*recursive=*/true);
}

TEST_F(YarnE2eTest, DigitsExampleReadsItsDataFromHdfsAndWritesTheModelBack) {
  ASSERT_TRUE(fs::exists(PyDepsDir() + "/hdfs_native"))
      << "hdfs-native is not in " << PyDepsDir() << ": run scripts/install-pydeps";
  // The example's own export of the bundled data, put on HDFS as a user would.
  const std::string csv = runner_.work_dir() + "/digits.csv";
  ASSERT_EQ(std::system(("/usr/bin/python3 " +
                         TonyRunner::SourcePath("examples/pytorch-digits/train.py") +
                         " --export_digits " + csv)
                            .c_str()),
            0);
  std::ifstream in(csv);
  const std::string data((std::istreambuf_iterator<char>(in)), {});
  hadoop::WebHdfsClient hdfs = Hdfs();
  const std::string dir = UserDir("digits");
  ASSERT_TRUE(hdfs.Create(dir + "/digits.csv", data).ok());
  TonyResult r = Run({"submit", "--backend", "yarn", "--src_dir",
                      TonyRunner::SourcePath("examples/pytorch-digits"), "--executes", "train.py",
                      "--python_binary_path", "/usr/bin/python3", "--conf_file",
                      TonyRunner::SourcePath("examples/pytorch-digits/tony.xml"), "--conf",
                      "tony.am.memory=256m", "--shell_env", "PYTHONPATH=" + PyDepsDir(),
                      "--task_params=--hdfs_input_path hdfs://" + dir +
                          "/digits.csv --hdfs_output_path hdfs://" + dir + "/model.pt"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r) << ContainerStdout(r.app_id);
  const std::string out = ContainerStdout(r.app_id);
  EXPECT_NE(out.find("read 1797 samples from hdfs://" + dir + "/digits.csv"), std::string::npos)
      << out;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(out, match, std::regex(R"(test accuracy: ([0-9.]+))"))) << out;
  EXPECT_GT(std::stod(match[1].str()), 0.9);
  absl::StatusOr<hadoop::FileStatus> model = hdfs.GetFileStatus(dir + "/model.pt");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_GT(model->length, 10000);
  (void)hdfs.Delete(dir, /*recursive=*/true);
}

TEST_F(YarnE2eTest, HdfsVenvAndResourcesAreLocalizedFromWhereTheyAre) {
  // TonY's hdfs:// inputs: a zipped venv, a file under another name, and a directory
  // (--hdfs_classpath) whose files, not its subdirectories, land in the working directory.
  hadoop::WebHdfsClient hdfs = Hdfs();
  const std::string base = "/user/" + hadoop::HadoopUser() + "/inputs-" +
                           fs::path(runner_.work_dir()).filename().string();
  const fs::path venv = fs::path(runner_.work_dir()) / "venv-tree";
  fs::create_directories(venv / "bin");
  std::ofstream(venv / "bin/python")
      << "#!/bin/sh\nexport FROM_VENV=yes\nexec /usr/bin/python3 \"$@\"\n";
  fs::permissions(venv / "bin/python", fs::perms::owner_all);
  const std::string venv_zip = runner_.work_dir() + "/venv.zip";
  ASSERT_TRUE(CreateZipFromDirectory(venv.string(), venv_zip).ok());
  ASSERT_TRUE(hdfs.CreateFromFile(base + "/venv.zip", venv_zip).ok());
  ASSERT_TRUE(hdfs.Create(base + "/plain.txt", "plain-from-hdfs\n").ok());
  ASSERT_TRUE(hdfs.Create(base + "/lib/a.txt", "a\n").ok());
  ASSERT_TRUE(hdfs.Create(base + "/lib/b.txt", "b\n").ok());
  ASSERT_TRUE(hdfs.Create(base + "/lib/sub/c.txt", "c\n").ok());
  const fs::path src = fs::path(runner_.work_dir()) / "src";
  fs::create_directories(src);
  std::ofstream(src / "main.py")
      << "import os\n"
         "assert os.environ['FROM_VENV'] == 'yes'\n"
         "print('hdfs-inputs', open('renamed.txt').read().strip(), open('a.txt').read().strip(),\n"
         "      open('b.txt').read().strip(), os.path.exists('sub'), os.path.exists('c.txt'))\n";

  TonyResult r = Run({"submit",
                      "--backend",
                      "yarn",
                      "--src_dir",
                      src.string(),
                      "--executes",
                      "main.py",
                      "--python_venv",
                      "hdfs://" + base + "/venv.zip",
                      "--python_binary_path",
                      "bin/python",
                      "--hdfs_classpath",
                      "hdfs://" + base + "/lib",
                      "--conf",
                      "tony.worker.resources=hdfs://" + base + "/plain.txt::renamed.txt",
                      "--conf",
                      "tony.worker.instances=2",
                      "--conf",
                      "tony.worker.memory=256m",
                      "--conf",
                      "tony.am.memory=256m",
                      "--conf",
                      "tony.application.keep-staging=true"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r) << ContainerStdout(r.app_id);
  const std::string out = ContainerStdout(r.app_id);
  size_t count = 0;
  for (size_t at = out.find("hdfs-inputs plain-from-hdfs a b False False"); at != std::string::npos;
       at = out.find("hdfs-inputs plain-from-hdfs a b False False", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 2u) << out;
  // Nothing of it was copied into the job's staging directory.
  const std::string staging = "/user/" + hadoop::HadoopUser() + "/.tony/" + r.app_id;
  EXPECT_TRUE(hdfs.GetFileStatus(staging + "/tony-final.xml").ok());
  EXPECT_EQ(hdfs.GetFileStatus(staging + "/venv.zip").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::vector<hadoop::FileStatus>> staged = hdfs.ListStatus(staging + "/resources");
  EXPECT_TRUE(staged.ok() && staged->empty());
  (void)hdfs.Delete(staging, /*recursive=*/true);

  // A --hdfs_classpath entry that does not exist is left out with a warning, as TonY does.
  // The entry that exists is still there: the task reads a file of it.
  TonyResult dropped =
      Run({"submit", "--backend", "yarn", "--conf", "tony.containers.command=cat a.txt", "--conf",
           "tony.worker.instances=1", "--conf", "tony.worker.memory=256m", "--hdfs_classpath",
           "hdfs://" + base + "/lib,hdfs://" + base + "/nope"});
  EXPECT_EQ(dropped.exit_code, 0) << Describe(dropped) << ContainerStdout(dropped.app_id);
  EXPECT_NE(dropped.err.find("tony: warning: --hdfs_classpath hdfs://" + base +
                             "/nope: no such file or directory; left out of the job"),
            std::string::npos)
      << dropped.err;

  // A directory as the venv, and another namenode: bad input, nothing submitted.
  for (const auto& [flag, value, error] : std::vector<std::array<std::string, 3>>{
           {"--python_venv", "hdfs://" + base + "/lib",
            "--python_venv hdfs://" + base + "/lib: a directory, not a zipped virtualenv"},
           {"--hdfs_classpath", "hdfs://elsewhere:8020/lib", "not on the cluster's file system"}}) {
    TonyResult bad = Run({"submit", "--backend", "yarn", "--src_dir", src.string(), "--executes",
                          "main.py", "--python_binary_path", "/usr/bin/python3", "--conf",
                          "tony.worker.instances=1", flag, value});
    EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
    EXPECT_TRUE(bad.app_id.empty()) << bad.out;
    EXPECT_NE(bad.err.find("tony: error: "), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find(error), std::string::npos) << bad.err;
  }
  (void)hdfs.Delete(base, /*recursive=*/true);
}

// The tony binary is staged once per content, into the user's cache, not with every job: a second
// job reuses the file (same modification time), the staging directory holds no copy, and entries
// a month old go, while a recent one of another binary stays.
TEST_F(YarnE2eTest, TheBinaryIsCachedByContentAndOldEntriesGo) {
  hadoop::WebHdfsClient hdfs = Hdfs();
  const std::string cache = "/user/" + cluster_->user() + "/.tony/cache";
  TonyResult first = Run(Submit(
      {"tony.worker.instances=1", "tony.worker.memory=128m", "tony.application.keep-staging=true"},
      "cmp ./tony " + std::string(TONY_BINARY) + " && echo same"));
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  EXPECT_NE(ContainerStdout(first.app_id).find("same"), std::string::npos);
  const std::string staging = "/user/" + cluster_->user() + "/.tony/" + first.app_id;
  EXPECT_EQ(hdfs.GetFileStatus(staging + "/tony").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::vector<hadoop::FileStatus>> entries = hdfs.ListStatus(cache);
  ASSERT_TRUE(entries.ok()) << entries.status();
  std::optional<hadoop::FileStatus> cached;
  for (const hadoop::FileStatus& entry : *entries) {
    if (entry.path_suffix.starts_with("tony-") && !entry.path_suffix.ends_with(".partial") &&
        entry.length == static_cast<int64_t>(fs::file_size(TONY_BINARY))) {
      cached = entry;
    }
  }
  ASSERT_TRUE(cached.has_value()) << "no cached binary in " << cache;
  (void)hdfs.Delete(staging, /*recursive=*/true);

  // Someone else's old binary and a recent one, as earlier clients left them.
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const std::string old_entry = cache + "/tony-00000000000000000000000000000000";
  const std::string recent_entry = cache + "/tony-11111111111111111111111111111111";
  ASSERT_TRUE(hdfs.Create(old_entry, "old", /*overwrite=*/true).ok());
  ASSERT_TRUE(hdfs.Create(recent_entry, "recent", /*overwrite=*/true).ok());
  ASSERT_TRUE(hdfs.SetModificationTime(old_entry, now_ms - 40LL * 24 * 3600 * 1000).ok());
  ASSERT_TRUE(hdfs.SetModificationTime(recent_entry, now_ms - 2LL * 24 * 3600 * 1000).ok());
  TonyResult second = Run(Submit({"tony.worker.instances=1", "tony.worker.memory=128m"}, "true"));
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  absl::StatusOr<hadoop::FileStatus> again = hdfs.GetFileStatus(cache + "/" + cached->path_suffix);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->modification_time_ms, cached->modification_time_ms) << "uploaded again";
  // Old entries go when a binary is uploaded; this one was cached, so it is still there.
  EXPECT_TRUE(hdfs.GetFileStatus(old_entry).ok());
  (void)hdfs.Delete(cache + "/" + cached->path_suffix, /*recursive=*/false);
  TonyResult third = Run(Submit({"tony.worker.instances=1", "tony.worker.memory=128m"}, "true"));
  ASSERT_EQ(third.exit_code, 0) << Describe(third);
  EXPECT_EQ(hdfs.GetFileStatus(old_entry).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(hdfs.GetFileStatus(recent_entry).ok());
  (void)hdfs.Delete(recent_entry, /*recursive=*/false);
}

TEST_F(YarnE2eTest, KillFromAnotherMachineGoesThroughTheResourceManager) {
  pid_t tony = runner_.Start(Submit({"tony.worker.instances=1", "tony.worker.memory=256m"},
                                    "/usr/bin/python3 sleep_forever.py"),
                             Env());
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(runner_.WaitForOutput("1 running", 120000)) << runner_.CurrentOutput();
  const std::string app_id = runner_.SubmittedAppId();
  ASSERT_FALSE(app_id.empty()) << runner_.CurrentOutput();

  // Another machine: no job directory, so no secret; the cluster's configuration only.
  TonyRunner elsewhere;
  TonyResult status = elsewhere.Run({"status", "--backend", "yarn", app_id}, 60000, Env());
  ASSERT_EQ(status.exit_code, 0) << Describe(status);
  EXPECT_NE(status.out.find(app_id + ": RUNNING"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("/proxy/" + app_id), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("needs the job's secret"), std::string::npos) << status.out;
  TonyResult killed = elsewhere.Run({"kill", "--backend", "yarn", app_id}, 60000, Env());
  ASSERT_EQ(killed.exit_code, 0) << Describe(killed);
  EXPECT_NE(killed.out.find(app_id + " ended: KILLED"), std::string::npos) << killed.out;

  TonyResult r = runner_.Wait(tony, 120000);
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("KILLED"), std::string::npos) << r.out;
  EXPECT_EQ(RmReport(app_id).final_status, hadoop::FinalApplicationStatus::kKilled);
  EXPECT_TRUE(elsewhere.LeftoverProcesses().empty());
}

std::vector<std::string> NeededLibraries(const std::string& binary) {
  std::vector<std::string> needed;
  FILE* pipe = popen(("readelf -d '" + binary + "'").c_str(), "r");
  if (pipe == nullptr) return needed;
  char line[4096];
  const std::regex entry(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  while (fgets(line, sizeof line, pipe) != nullptr) {
    std::cmatch match;
    if (std::regex_search(line, match, entry)) needed.push_back(match[1]);
  }
  pclose(pipe);
  return needed;
}

TEST_F(YarnE2eTest, SelfContainedBinaryNeedsOnlyGlibcBesidesItsListAndRunsEveryRole) {
  const std::string dir = TONY_STATIC_BUILD_DIR;
  const std::string binary = dir + "/tony";
  if (!fs::exists(binary)) {
    if (std::getenv("TONY_REQUIRE_STATIC") != nullptr) {
      FAIL() << binary << " is missing: scripts/build-static builds it";
    }
    GTEST_SKIP() << binary << " is not built (scripts/build-static)";
  }
  // Shared: glibc, and only what build-static/dynamic-libraries.txt lists (libraries Debian
  // ships no usable archive of).
  std::set<std::string> allowed = {"libc.so.6",       "libm.so.6",  "ld-linux-x86-64.so.2",
                                   "libpthread.so.0", "libdl.so.2", "librt.so.1"};
  std::ifstream listed(dir + "/dynamic-libraries.txt");
  ASSERT_TRUE(listed.good()) << dir << "/dynamic-libraries.txt";
  std::vector<std::string> prefixes;
  for (std::string name; std::getline(listed, name);) prefixes.push_back("lib" + name + ".so.");
  const std::vector<std::string> needed = NeededLibraries(binary);
  ASSERT_FALSE(needed.empty()) << "readelf found no NEEDED entries in " << binary;
  for (const std::string& lib : needed) {
    const bool listed_prefix = std::any_of(prefixes.begin(), prefixes.end(),
                                           [&](const auto& p) { return lib.starts_with(p); });
    EXPECT_TRUE(allowed.count(lib) || listed_prefix) << binary << " needs " << lib;
    for (const char* own :
         {"libstdc++", "libgcc_s", "libgrpc", "libprotobuf", "libabsl", "libcurl", "libarchive",
          "libpugixml", "libspdlog", "libfmt", "libssl", "libcrypto"}) {
      EXPECT_FALSE(lib.starts_with(own)) << binary << " links " << lib << " dynamically";
    }
  }

  // Client, AM and executors: the client stages itself, so every task must see this very file.
  TonyRunner runner(binary);
  TonyResult r =
      runner.Run(Submit({"tony.worker.instances=2", "tony.worker.memory=128m"},
                        "cmp ./tony " + binary + " && echo same binary in task $TASK_INDEX"),
                 180000, Env());
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  const std::string out = ContainerStdout(r.app_id);
  EXPECT_NE(out.find("same binary in task 0"), std::string::npos) << out;
  EXPECT_NE(out.find("same binary in task 1"), std::string::npos) << out;
  EXPECT_EQ(RmReport(r.app_id).final_status, hadoop::FinalApplicationStatus::kSucceeded);
  EXPECT_TRUE(runner.LeftoverProcesses().empty()) << "processes of the job outlived it";
}

}  // namespace
}  // namespace tony::testing
