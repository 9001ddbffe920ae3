// Where YARN puts a job's tasks, on the multi-node mini cluster of --placement (PlacementMode):
// placement constraints (anti-affinity, the application's constraint, one that cannot be met),
// GPUs that only one node has, and a node label only one node has. Each task prints the
// NodeManager YARN started it on (NM_HOST:NM_PORT, set by the NodeManager), which must be one of
// the cluster's (MINICLUSTER_NODE_IDS).

#include "hadoop/yarn_e2e_fixture.h"

namespace tony::testing {
namespace {

class PlacementE2eTest : public YarnE2eTest {
 protected:
  // The command of every task: where it runs, then `then`.
  static std::string Report(const std::string& then = "true") {
    return "echo \"placed $JOB_NAME:$TASK_INDEX on $NM_HOST:$NM_PORT\"; " + then;
  }
  // Task -> the NodeManager it ran on, from the job's containers' stdout; each must be one of
  // the cluster's.
  std::map<std::string, std::string> Placements(const TonyResult& r) {
    std::map<std::string, std::string> placed;
    const std::string out = ContainerStdout(r.app_id);
    const std::regex line(R"(placed (\S+) on (\S+))");
    for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
      placed[(*it)[1]] = (*it)[2];
    }
    const std::string nodes = "," + cluster_->Value("MINICLUSTER_NODE_IDS") + ",";
    for (const auto& [task, node] : placed) {
      EXPECT_NE(nodes.find("," + node + ","), std::string::npos) << task << " on " << node;
    }
    return placed;
  }
  void SetUp() override {
    YarnE2eTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_FALSE(cluster_->Value("MINICLUSTER_NODE_LABEL").empty())
        << cluster_->conf_dir() << " is not a --placement mini cluster";
  }
};

TEST_F(PlacementE2eTest, AntiAffineWorkersRunOnDifferentNodes) {
  for (const std::string key : {"tony.worker.placement-spec", "tony.application.placement-spec"}) {
    TonyResult r = Run(
        Submit({"tony.worker.instances=3", "tony.worker.memory=256m", key + "=notin,node,worker"},
               Report("sleep 2")));
    ASSERT_EQ(r.exit_code, 0) << key << "\n" << Describe(r);
    const std::map<std::string, std::string> placed = Placements(r);
    ASSERT_EQ(placed.size(), 3u) << key << "\n" << ContainerStdout(r.app_id);
    std::set<std::string> nodes;
    for (const auto& [task, node] : placed) nodes.insert(node);
    EXPECT_EQ(nodes.size(), 3u) << key << ": two workers on one node\n"
                                << ContainerStdout(r.app_id);
  }
}

TEST_F(PlacementE2eTest, GpuTasksRunOnlyOnTheNodeWithGpus) {
  const std::string gpu_node = cluster_->Value("MINICLUSTER_GPU_NODE");
  ASSERT_FALSE(gpu_node.empty());
  // Two tasks of one GPU each, together (GANG): both on the one node with GPUs, which has two.
  TonyResult r =
      Run(Submit({"tony.worker.instances=2", "tony.worker.memory=256m", "tony.worker.gpus=1",
                  "tony.ps.instances=1", "tony.ps.memory=256m"},
                 Report("[ $JOB_NAME = ps ] && exec /usr/bin/python3 sleep_forever.py; sleep 1")));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::map<std::string, std::string> placed = Placements(r);
  EXPECT_EQ(placed.at("worker:0"), gpu_node);
  EXPECT_EQ(placed.at("worker:1"), gpu_node);
  // Each task holds GPUs of its own: two tasks of two GPUs each never fit the cluster's two.
  TonyResult more = Run(Submit(
      {"tony.worker.instances=2", "tony.worker.memory=256m", "tony.worker.gpus=2"}, Report()));
  EXPECT_EQ(more.exit_code, 2) << Describe(more);
  EXPECT_NE(more.err.find("4 GPUs at once, but the cluster's running NodeManagers have"),
            std::string::npos)
      << more.err;
  EXPECT_NE(more.err.find(" and 2 GPUs in all"), std::string::npos) << more.err;
}

TEST_F(PlacementE2eTest, LabelledTasksRunOnlyOnTheLabelledNode) {
  const std::string labelled = cluster_->Value("MINICLUSTER_LABELLED_NODE");
  TonyResult r = Run(Submit({"tony.worker.instances=2", "tony.worker.memory=256m",
                             "tony.worker.node-label=" + cluster_->Value("MINICLUSTER_NODE_LABEL")},
                            Report("sleep 1")));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::map<std::string, std::string> placed = Placements(r);
  EXPECT_EQ(placed.at("worker:0"), labelled);
  EXPECT_EQ(placed.at("worker:1"), labelled);
}

// Node attributes (Hadoop 3.2+; one node has rm.yarn.io/tony-node=yes): a task asking for that
// value runs there; one asking for another never gets a container.
TEST_F(PlacementE2eTest, NodeAttributeConstraintsAreMetOrWaitedFor) {
  const std::string attribute = cluster_->Value("MINICLUSTER_NODE_ATTRIBUTE");
  if (attribute.empty()) GTEST_SKIP() << "no node attributes on this Hadoop";
  // Both spellings of its name: bare (YARN adds the prefix rm.yarn.io/) and prefixed.
  TonyResult r = Run(Submit(
      {"tony.worker.instances=1", "tony.worker.memory=256m",
       "tony.worker.placement-spec=" + attribute, "tony.ps.instances=1", "tony.ps.memory=256m",
       "tony.ps.placement-spec=rm.yarn.io/" + attribute, "tony.application.untracked.jobtypes="},
      Report()));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::map<std::string, std::string> placed = Placements(r);
  ASSERT_EQ(placed.count("worker:0"), 1u) << ContainerStdout(r.app_id);
  ASSERT_EQ(placed.count("ps:0"), 1u) << ContainerStdout(r.app_id);
  EXPECT_EQ(placed.at("worker:0"), cluster_->Value("MINICLUSTER_ATTRIBUTE_NODE"));
  EXPECT_EQ(placed.at("ps:0"), cluster_->Value("MINICLUSTER_ATTRIBUTE_NODE"));
  const std::string other = attribute.substr(0, attribute.find('=')) + "=no";
  TonyResult none =
      Run(Submit({"tony.worker.instances=1", "tony.worker.memory=256m",
                  "tony.worker.placement-spec=" + other, "tony.container.allocation.timeout=5000"},
                 Report()));
  ASSERT_EQ(none.exit_code, 1) << Describe(none);
  EXPECT_NE(none.out.find("missing: worker:0 (no container; placement " + other + ")"),
            std::string::npos)
      << none.out;
}

TEST_F(PlacementE2eTest, AConstraintTheClusterCannotMeetFailsAtTheAllocationTimeout) {
  // Four workers, one per node, on three nodes.
  TonyResult r = Run(Submit(
      {"tony.worker.instances=4", "tony.worker.memory=256m",
       "tony.worker.placement-spec=notin,node,worker", "tony.container.allocation.timeout=8000"},
      Report("exec /usr/bin/python3 sleep_forever.py")));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  // The list names the one without a container wherever it stands (a placed worker slow to
  // register may come first).
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(not every task registered within 8000 ms \(tony\.container\.allocation)"
                        R"(\.timeout\); missing: .*worker:[0-3] \(no container; placement )"
                        R"(notin,node,worker\))")))
      << r.out;
}

}  // namespace
}  // namespace tony::testing
