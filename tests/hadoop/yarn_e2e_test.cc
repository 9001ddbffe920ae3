// Cases only the YARN backend has, against the real mini cluster (the cases shared with the local
// backend are in tests/e2e/backend_e2e_test.cc): GPUs from the cluster's count, a request larger
// than the cluster, a gang the cluster cannot grant, node-local asks, tony's files kept on the node
// across jobs, a kill from another machine, and the self-contained binary of scripts/build-static
// running every role. Inputs on HDFS are in yarn_hdfs_e2e_test.cc.

#include "hadoop/yarn_e2e_fixture.h"

namespace tony::testing {
namespace {

namespace fs = std::filesystem;

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

// A cluster whose scheduler takes no placement constraints: Hadoop 2.10 has none at all (refused at
// submit, nothing started); 3.4's ResourceManager has them off unless
// yarn.resourcemanager.placement-constraints.handler says otherwise (the job fails saying so).
// Placement itself: placement_e2e_test.
TEST_F(YarnE2eTest, APlacementConstraintOnAClusterThatTakesNoneFailsSayingWhy) {
  TonyResult r = Run(Submit({"tony.worker.instances=1", "tony.worker.memory=256m",
                             "tony.containers.placement-spec=notin,node,worker"},
                            "echo the worker ran"));
  if (cluster_->Value("MINICLUSTER_HADOOP_VERSION").starts_with("2.")) {
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_TRUE(r.app_id.empty()) << r.out;
    // The key the constraint came from: every type's, not the worker's own.
    EXPECT_NE(r.err.find("tony: error: tony.containers.placement-spec: the cluster's "
                         "ResourceManager"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("takes no placement constraints: they need Hadoop 3.2 or later"),
              std::string::npos)
        << r.err;
    return;
  }
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("the ResourceManager takes no placement constraints: its "
                       "yarn.resourcemanager.placement-constraints.handler must be scheduler"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(ContainerStdout(r.app_id).find("the worker ran"), std::string::npos);
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

TEST_F(YarnE2eTest, ALaterJobsContainersFindTonysFilesOnTheNodeWithNoDownload) {
  // The binary and the Hadoop configuration are in tony's cache, named by their content: the
  // NodeManager keeps them for the user (PRIVATE), not for one application, so a later job's AM
  // starts with no localizer at all. The job's own files (the source zip) stay the job's. The
  // fixture's cluster has one NodeManager, so both jobs run on the node that holds the copy.
  const std::vector<std::string> conf = {"tony.worker.instances=1", "tony.worker.memory=128m"};
  const std::string show = "readlink -f tony hadoop-conf";
  TonyResult first = Run(Submit(conf, show));
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  TonyResult second = Run(Submit(conf, show));
  ASSERT_EQ(second.exit_code, 0) << Describe(second);

  const std::string first_paths = ContainerStdout(first.app_id);
  const std::string second_paths = ContainerStdout(second.app_id);
  std::smatch found;
  ASSERT_TRUE(std::regex_search(second_paths, found,
                                std::regex("\\S*/usercache/[^/]+/filecache/\\S*/tony-[0-9a-f]+")))
      << second_paths;
  EXPECT_NE(first_paths.find(found.str()), std::string::npos) << first_paths;
  EXPECT_TRUE(std::regex_search(
      second_paths, std::regex("/usercache/[^/]+/filecache/\\S*/hadoop-conf-[0-9a-f]+")))
      << second_paths;
  EXPECT_EQ(second_paths.find("/appcache/"), std::string::npos) << second_paths;

  const std::string am =
      "container_" + second.app_id.substr(std::string("application_").size()) + "_01_000001";
  std::ifstream log(conf_dir_ + "/minicluster.log");
  int localizing = 0, localizers = 0;
  for (std::string line; std::getline(log, line);) {
    if (line.find(am + " transitioned from NEW to LOCALIZING") != std::string::npos) ++localizing;
    if (line.find("Created localizer for " + am) != std::string::npos) ++localizers;
  }
  EXPECT_EQ(localizing, 1) << am;  // the log is the cluster's, and names the AM's container
  EXPECT_EQ(localizers, 0) << am;
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

// The shared libraries an ELF file needs (readelf's NEEDED entries).
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
  // Shared: glibc, and only what static/dynamic-libraries.txt lists (libraries Debian
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
