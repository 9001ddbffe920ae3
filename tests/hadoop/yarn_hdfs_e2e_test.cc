// The YARN backend and HDFS, against the real mini cluster: a configuration file on HDFS, tasks
// that read and write HDFS with the job's client configuration, the digits example's data and
// model on HDFS, a venv and resources localized from where they are, and the tony binary staged
// once per content.

#include "hadoop/yarn_e2e_fixture.h"

namespace tony::testing {
namespace {

namespace fs = std::filesystem;

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
  absl::StatusOr<hadoop::FileStatus> kept = hdfs.GetFileStatus(staging);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_TRUE(kept->is_directory);
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

  // A directory as the venv: bad input, nothing submitted.
  TonyResult bad = Run({"submit", "--backend", "yarn", "--src_dir", src.string(), "--executes",
                        "main.py", "--python_binary_path", "/usr/bin/python3", "--conf",
                        "tony.worker.instances=1", "--python_venv", "hdfs://" + base + "/lib"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_TRUE(bad.app_id.empty()) << bad.out;
  EXPECT_NE(bad.err.find("tony: error: --python_venv hdfs://" + base +
                         "/lib: a directory, not a zipped virtualenv"),
            std::string::npos)
      << bad.err;
  // A file on another NameNode is looked up there (its WebHDFS at its own host). With Kerberos
  // the job must get a token of that NameNode first (tony.other.namenodes): bad input, exit 2.
  // Without, one that cannot be reached stops the job before anything is submitted, naming the
  // URI and the host (an unreachable file system is not the user's input to fix: exit 1).
  TonyResult elsewhere =
      Run({"submit", "--backend", "yarn", "--conf", "tony.containers.command=true", "--conf",
           "tony.worker.instances=1", "--hdfs_classpath", "hdfs://elsewhere.invalid:8020/lib"});
  EXPECT_TRUE(elsewhere.app_id.empty()) << elsewhere.out;
  if (cluster_->secure()) {
    EXPECT_EQ(elsewhere.exit_code, 2) << Describe(elsewhere);
    EXPECT_NE(elsewhere.err.find("tony: error: tony.worker.resources: "
                                 "hdfs://elsewhere.invalid:8020/lib: the job gets no delegation "
                                 "token of hdfs://elsewhere.invalid:8020"),
              std::string::npos)
        << elsewhere.err;
  } else {
    EXPECT_EQ(elsewhere.exit_code, 1) << Describe(elsewhere);
    EXPECT_NE(elsewhere.err.find("tony: error: tony.worker.resources: "
                                 "hdfs://elsewhere.invalid:8020/lib: WebHDFS GETFILESTATUS /lib: "
                                 "elsewhere.invalid:"),
              std::string::npos)
        << elsewhere.err;
  }
  (void)hdfs.Delete(base, /*recursive=*/true);
}

// The tony binary and the client's Hadoop configuration are staged once per content, into the
// user's cache, not with every job, and the job's configuration is not staged at all (it travels
// in the containers' credentials, and each task still finds tony-final.xml in its directory): a
// second job reuses the cached files (same modification time), the staging directory holds no
// copy, and entries a month old go, while a recent one of another binary and the job's own stay.
TEST_F(YarnE2eTest, TheBinaryIsCachedByContentAndOldEntriesGo) {
  hadoop::WebHdfsClient hdfs = Hdfs();
  const std::string cache = "/user/" + cluster_->user() + "/.tony/cache";
  TonyResult first = Run(Submit(
      {"tony.worker.instances=1", "tony.worker.memory=128m", "tony.application.keep-staging=true"},
      "cmp ./tony " + std::string(TONY_BINARY) +
          " && echo same && grep -c '<name>tony.worker.instances</name>' tony-final.xml" +
          " && test -f hadoop-conf/core-site.xml && echo conf-here"));
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  const std::string out = ContainerStdout(first.app_id);
  EXPECT_NE(out.find("same\n1\nconf-here"), std::string::npos) << out;
  const std::string staging = "/user/" + cluster_->user() + "/.tony/" + first.app_id;
  for (const char* name : {"tony", "tony-final.xml", "hadoop-conf.zip"}) {
    EXPECT_EQ(hdfs.GetFileStatus(staging + "/" + name).status().code(), absl::StatusCode::kNotFound)
        << name;
  }
  absl::StatusOr<std::vector<hadoop::FileStatus>> entries = hdfs.ListStatus(cache);
  ASSERT_TRUE(entries.ok()) << entries.status();
  std::optional<hadoop::FileStatus> cached;
  std::optional<hadoop::FileStatus> cached_conf;
  for (const hadoop::FileStatus& entry : *entries) {
    if (entry.path_suffix.starts_with("tony-") && !entry.path_suffix.ends_with(".partial") &&
        entry.length == static_cast<int64_t>(fs::file_size(TONY_BINARY))) {
      cached = entry;
    }
    if (entry.path_suffix.starts_with("hadoop-conf-") && entry.path_suffix.ends_with(".zip")) {
      cached_conf = entry;
    }
  }
  ASSERT_TRUE(cached.has_value()) << "no cached binary in " << cache;
  ASSERT_TRUE(cached_conf.has_value()) << "no cached Hadoop configuration in " << cache;
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
  absl::StatusOr<hadoop::FileStatus> conf_again =
      hdfs.GetFileStatus(cache + "/" + cached_conf->path_suffix);
  ASSERT_TRUE(conf_again.ok()) << conf_again.status();
  EXPECT_EQ(conf_again->modification_time_ms, cached_conf->modification_time_ms)
      << "the Hadoop configuration was uploaded again";
  // Old entries go when a binary is uploaded; this one was cached, so it is still there.
  EXPECT_TRUE(hdfs.GetFileStatus(old_entry).ok());
  (void)hdfs.Delete(cache + "/" + cached->path_suffix, /*recursive=*/false);
  // The job's own entries are spared however old: its Hadoop configuration, found in the cache
  // while its binary is uploaded anew, stays for it to localize.
  const std::string conf_entry = cache + "/" + cached_conf->path_suffix;
  ASSERT_TRUE(hdfs.SetModificationTime(conf_entry, now_ms - 40LL * 24 * 3600 * 1000).ok());
  TonyResult third = Run(Submit({"tony.worker.instances=1", "tony.worker.memory=128m"},
                                "test -f hadoop-conf/core-site.xml && echo conf-here"));
  ASSERT_EQ(third.exit_code, 0) << Describe(third);
  EXPECT_NE(ContainerStdout(third.app_id).find("conf-here"), std::string::npos);
  EXPECT_TRUE(hdfs.GetFileStatus(conf_entry).ok()) << "the job's own entry was removed";
  EXPECT_EQ(hdfs.GetFileStatus(old_entry).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(hdfs.GetFileStatus(recent_entry).ok());
  (void)hdfs.Delete(recent_entry, /*recursive=*/false);
}

}  // namespace
}  // namespace tony::testing
