// Faults of the cluster rather than of the job, on a real YARN: a container the CapacityScheduler
// preempts for another queue, a NodeManager that stops under a running task, and one that goes
// silent under it (scripts/hadoop-minicluster --preemption: queues default and urgent, each
// guaranteed half the cluster, the preemption monitor on, NodeManagers that leave the cluster when
// stopped, and a silent one counted lost after 10 s). None uses up a task's restarts
// (tony.worker.max-restarts is 0 here): the task runs again in a new container and the job
// succeeds, and the summary and the history say why it ran again.

#include <sys/wait.h>

#include "e2e/backend_fixture.h"

namespace tony::testing {
namespace {

class ClusterFaultE2eTest : public BackendE2eTest {
 protected:
  void SetUp() override {
    BackendE2eTest::SetUp();
    if (IsSkipped()) return;
    if (cluster_->Value("MINICLUSTER_QUEUES").empty()) {
      GTEST_SKIP() << conf_dir_ << " is no --preemption mini cluster";
    }
    dir_ = runner_.work_dir() + "/tasks";
    fs::create_directories(dir_);
  }

  // The NodeManagers the ResourceManager counts as running now.
  int RunningNodes() const {
    absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> client = cluster_->Yarn();
    if (!client.ok()) return 0;
    absl::StatusOr<std::vector<hadoop::NodeReport>> nodes =
        (*client)->GetClusterNodes({hadoop::NodeState::kRunning});
    return nodes.ok() ? static_cast<int>(nodes->size()) : 0;
  }

  // How many lines the run_once.py worker `index` wrote to `suffix` (.pids: one per run, .terms:
  // one per SIGTERM).
  int Lines(int index, const std::string& suffix) const {
    const std::string text = ReadAll(dir_ + "/worker-" + std::to_string(index) + suffix);
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }

  // Waits (bounded) until `done` holds.
  template <typename Done>
  static bool WaitFor(Done done, int timeout_ms = 120000) {
    for (int waited = 0; !done(); waited += 50) {
      if (waited >= timeout_ms) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

  // The index of the NodeManager whose container directory the process `pid` runs in (its
  // working directory lies under .../<cluster>-localDir-nm-<index>_0/...), or -1.
  static int NodeManagerOf(pid_t pid) {
    std::error_code ec;
    const std::string cwd = fs::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec).string();
    std::smatch index;
    if (!std::regex_search(cwd, index, std::regex(R"(-localDir-nm-(\d+)_\d+/)"))) return -1;
    return std::stoi(index[1].str());
  }

  // scripts/hadoop-minicluster stop-nm (it leaves the cluster) or kill-nm (it goes silent):
  // true once the ResourceManager no longer counts it.
  bool NodeManagerGoes(const std::string& how, int index) const {
    const std::string command = "'" + TonyRunner::SourcePath("scripts/hadoop-minicluster") + "' " +
                                how + " '" + conf_dir_ + "' " + std::to_string(index);
    const int status = std::system(command.c_str());
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  // A job of one worker (run_once.py) that takes a whole 1 GB NodeManager, never the AM's, with a
  // third one to move to (a stopped or lost NodeManager does not come back): the client's pid,
  // the worker's and its NodeManager's index, once it runs.
  struct LoneWorker {
    pid_t tony = 0;
    pid_t worker = 0;
    int node = -1;
  };
  void StartALoneWorker(LoneWorker* lone) {
    ASSERT_GE(RunningNodes(), 3) << "a NodeManager that went does not come back: this case needs "
                                    "a fresh cluster (the ctest fixture hadoop_faults)";
    lone->tony = Start(Submit(
        {"tony.worker.instances=1", "tony.worker.memory=1024m", "tony.worker.max-restarts=0"},
        "/usr/bin/python3 run_once.py " + dir_));
    lone->worker = WaitForJobProcess("/usr/bin/python3 run_once.py", {{"JOB_NAME", "worker"}});
    ASSERT_GT(lone->worker, 0);
    ASSERT_TRUE(WaitFor([&] { return Lines(0, ".pids") == 1; })) << "the worker never ran";
    lone->node = NodeManagerOf(lone->worker);
    ASSERT_GE(lone->node, 0) << "no NodeManager's directory holds pid " << lone->worker;
    const std::vector<pid_t> am = TonyRoleProcesses("am", {});
    ASSERT_EQ(am.size(), 1u);
    ASSERT_NE(NodeManagerOf(am[0]), lone->node) << "the AM shares the worker's NodeManager";
  }

  // Lets the lone worker's second run finish, and checks that the job succeeded with its first
  // run's container lost (-100; the client's summary says `why`), in the history as well.
  void ExpectTheJobSucceedsAfterTheLostContainer(pid_t tony, const std::string& why) {
    std::ofstream(dir_ + "/go") << "go";
    const TonyResult r = Wait(tony);
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_TRUE(TaskRow(r.out, "worker:0", "SUCCEEDED")) << r.out;
    EXPECT_NE(r.out.find("worker:0 attempt 0 failed with exit code -100"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(why), std::string::npos) << r.out;
    EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
    const std::string events = HistoryText(r.app_id, /*running=*/false, "events.jsonl");
    EXPECT_NE(events.find(R"("exit_code":-100)"), std::string::npos) << events;
  }

  std::string dir_;  // where the run_once.py workers write what they did, and where `go` goes
};

// The job fills the cluster from the default queue, beyond its guarantee; a job in the urgent
// queue then waits for room. The scheduler takes a worker's container back: tony hears of it from
// the allocate response first and stops the worker itself, with SIGTERM and its grace period (where
// a real task checkpoints), before the scheduler would kill it. The worker runs again in a new
// container once there is room, using no restart, and the job succeeds.
TEST_P(ClusterFaultE2eTest, APreemptedWorkerIsStoppedFirstAndRunsAgainWithoutUsingARestart) {
  // One 768 MB worker per 1 GB NodeManager (the AM takes 256 MB of one): the job holds more than
  // the half its queue is guaranteed, and the urgent job's worker fits nowhere.
  const int nodes = RunningNodes();
  ASSERT_GE(nodes, 2);
  const pid_t tony = Start(
      Submit({"tony.worker.instances=" + std::to_string(nodes), "tony.worker.memory=768m",
              "tony.worker.max-restarts=0", "tony.application.fail-on-worker-failure-enabled=true"},
             "/usr/bin/python3 run_once.py " + dir_));
  ASSERT_GT(WaitForJobProcess("/usr/bin/python3 run_once.py", {{"JOB_NAME", "worker"}}), 0);
  ASSERT_TRUE(WaitFor([&] {
    for (int i = 0; i < nodes; ++i) {
      if (Lines(i, ".pids") != 1) return false;
    }
    return true;
  })) << "the workers never all ran";

  TonyRunner urgent;
  std::vector<std::string> args =
      Submit({"tony.yarn.queue=urgent", "tony.worker.instances=1", "tony.worker.memory=768m"},
             "/usr/bin/python3 exit_with.py 0");
  const TonyResult u = urgent.Run(args, 180000, cluster_->ProcessEnv(urgent.work_dir()));
  ASSERT_EQ(u.exit_code, 0) << "the urgent job: " << Describe(u);

  // Room again: the preempted worker runs a second time.
  int preempted = -1;
  ASSERT_TRUE(WaitFor([&] {
    for (int i = 0; i < nodes; ++i) {
      if (Lines(i, ".pids") == 2) preempted = i;
    }
    return preempted >= 0;
  })) << "no worker ran again: "
      << runner_.CurrentOutput();
  std::ofstream(dir_ + "/go") << "go";
  const TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);

  const std::string task = "worker:" + std::to_string(preempted);
  EXPECT_EQ(Lines(preempted, ".terms"), 1) << task << " was not stopped with SIGTERM\n" << r.out;
  for (int i = 0; i < nodes; ++i) {
    EXPECT_TRUE(TaskRow(r.out, "worker:" + std::to_string(i), "SUCCEEDED")) << r.out;
    if (i == preempted) continue;
    EXPECT_EQ(Lines(i, ".pids"), 1) << "worker:" << i << " ran again";
    EXPECT_EQ(Lines(i, ".terms"), 0) << "worker:" << i << " was stopped";
  }
  EXPECT_NE(r.out.find(task + " attempt 0 failed with exit code -102 (preempted)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("the task was stopped first so that it could checkpoint"), std::string::npos)
      << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
  const std::string events = HistoryText(r.app_id, /*running=*/false, "events.jsonl");
  EXPECT_NE(events.find(R"("task":")" + task + R"(","attempt":0,"kind":"TASK_PREEMPTING")"),
            std::string::npos)
      << events;
  EXPECT_NE(events.find(R"("exit_code":-102)"), std::string::npos) << events;
}

// A NodeManager stops (as on SIGTERM: it leaves the cluster and kills its containers) under the
// job's only worker. Its executor, stopped with the container, reports the signal; the
// ResourceManager reports the container lost with its node (-100), which says why. The worker
// runs again on another node, using no restart, and the job succeeds.
TEST_P(ClusterFaultE2eTest, AWorkerWhoseNodeManagerStopsRunsAgainElsewhereWithoutUsingARestart) {
  LoneWorker lone;
  ASSERT_NO_FATAL_FAILURE(StartALoneWorker(&lone));
  const pid_t tony = lone.tony;
  const int node = lone.node;

  ASSERT_TRUE(NodeManagerGoes("stop-nm", node));
  ASSERT_TRUE(WaitFor([&] { return Lines(0, ".pids") == 2; }))
      << "the worker never ran again: " << runner_.CurrentOutput();
  std::vector<pid_t> again;
  ASSERT_TRUE(WaitFor([&] {
    again = JobProcesses("/usr/bin/python3 run_once.py", {{"JOB_NAME", "worker"}});
    return !again.empty();
  }));
  EXPECT_NE(NodeManagerOf(again[0]), node) << "it ran again on the stopped NodeManager";
  ExpectTheJobSucceedsAfterTheLostContainer(tony, "lost");
}

// A NodeManager goes silent under the job's only worker, as when its process is killed or its
// host is cut off: it does not leave the cluster and its containers run on. The ResourceManager
// counts the node lost once its heartbeats stop for long enough and reports the container lost
// (-100). The worker runs again on another node, using no restart; the first run, which nothing
// of YARN's will stop now, is stopped by tony (its executor's next heartbeat is answered "stop"),
// and the job succeeds with nothing of it left.
TEST_P(ClusterFaultE2eTest, AWorkerWhoseNodeManagerIsLostRunsAgainElsewhereAndTheFirstRunStops) {
  LoneWorker lone;
  ASSERT_NO_FATAL_FAILURE(StartALoneWorker(&lone));
  const pid_t tony = lone.tony;
  const pid_t first = lone.worker;
  const int node = lone.node;

  ASSERT_TRUE(NodeManagerGoes("kill-nm", node));
  ASSERT_TRUE(WaitFor([&] { return Lines(0, ".pids") == 2; }))
      << "the worker never ran again: " << runner_.CurrentOutput();
  ASSERT_TRUE(WaitFor([&] { return kill(first, 0) != 0; }))
      << "the first run (pid " << first << ") on the lost node was never stopped";
  // Its SIGTERM handler ran: it was alive when tony stopped it, not killed with the NodeManager.
  EXPECT_EQ(Lines(0, ".terms"), 1) << "the first run was not stopped with SIGTERM";
  std::vector<pid_t> again;
  ASSERT_TRUE(WaitFor([&] {
    again = JobProcesses("/usr/bin/python3 run_once.py", {{"JOB_NAME", "worker"}});
    return again.size() == 1;
  }));
  EXPECT_NE(NodeManagerOf(again[0]), node) << "it ran again on the lost NodeManager";
  // The first run's executor ended too: one is left, the second run's.
  ASSERT_TRUE(WaitFor([&] { return TonyRoleProcesses("executor", {}).size() == 1; }))
      << TonyRoleProcesses("executor", {}).size() << " executors run";
  ExpectTheJobSucceedsAfterTheLostContainer(tony, "Container released on a *lost* node");
}

INSTANTIATE_TEST_SUITE_P(Yarn, ClusterFaultE2eTest, ::testing::Values("yarn"));

}  // namespace
}  // namespace tony::testing
