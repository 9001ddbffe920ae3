#include "hadoop/yarn/yarn_client.h"

#include <string>
#include <tuple>
#include <vector>

#include "common/strings.h"
#include "gtest/gtest.h"
#include "hadoop/common/credentials.h"

namespace tony::hadoop {
namespace {

TEST(ApplicationIdTest, FormatsLikeYarn) {
  EXPECT_EQ((ApplicationId{1700000000000, 7}).ToString(), "application_1700000000000_0007");
  EXPECT_EQ((ApplicationId{1700000000000, 12345}).ToString(), "application_1700000000000_12345");
  ApplicationAttemptId attempt{{1700000000000, 7}, 2};
  EXPECT_EQ(attempt.ToString(), "appattempt_1700000000000_0007_000002");
}

TEST(ApplicationIdTest, ParsesItsOwnFormat) {
  absl::StatusOr<ApplicationId> id = ApplicationId::Parse("application_1700000000000_0042");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, (ApplicationId{1700000000000, 42}));
  EXPECT_EQ(ApplicationId::Parse(id->ToString()).value(), *id);
  for (const char* bad : {"", "application_", "application_1_", "app_1_2", "application_1_2_3",
                          "application_x_1", "application_1_-2", "container_1_2"}) {
    absl::StatusOr<ApplicationId> parsed = ApplicationId::Parse(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(YarnUrlTest, ParsesHdfsAndFileUrls) {
  YarnUrl hdfs = YarnUrl::Parse("hdfs://nn.example.com:8020/user/alice/.tony/app/tony.zip").value();
  EXPECT_EQ(hdfs, (YarnUrl{"hdfs", "nn.example.com", 8020, "/user/alice/.tony/app/tony.zip", ""}));
  EXPECT_EQ(hdfs.ToString(), "hdfs://nn.example.com:8020/user/alice/.tony/app/tony.zip");

  YarnUrl file = YarnUrl::Parse("file:///tmp/x").value();
  EXPECT_EQ(file, (YarnUrl{"file", "", -1, "/tmp/x", ""}));
  EXPECT_EQ(file.ToString(), "file:/tmp/x");
  EXPECT_EQ(YarnUrl::Parse("file:/tmp/x").value(), file);

  EXPECT_EQ(YarnUrl::Parse("hdfs://u@[::1]:9000/p").value(),
            (YarnUrl{"hdfs", "[::1]", 9000, "/p", "u"}));
  EXPECT_FALSE(YarnUrl::Parse("/no/scheme").ok());
  EXPECT_FALSE(YarnUrl::Parse("hdfs://nn:http/p").ok());
  EXPECT_FALSE(YarnUrl::Parse("hdfs://nn:70000/p").ok());
}

TEST(YarnUrlTest, UserPathsResolveOnTheDefaultFileSystemOnly) {
  const std::string fs = "hdfs://nn.example.com:9000";
  EXPECT_EQ(ResolveOnDefaultFs("hdfs:///user/a/venv.zip", fs).value(),
            (YarnUrl{"hdfs", "nn.example.com", 9000, "/user/a/venv.zip", ""}));
  EXPECT_EQ(ResolveOnDefaultFs("hdfs://nn.example.com:9000/lib", fs).value().file, "/lib");
  // Without a port an hdfs:// URI means the namenode's default RPC port.
  EXPECT_TRUE(ResolveOnDefaultFs("hdfs://nn/x", "hdfs://nn:8020").ok());
  EXPECT_TRUE(ResolveOnDefaultFs("hdfs://nn:8020/x", "hdfs://nn").ok());

  absl::StatusOr<YarnUrl> other = ResolveOnDefaultFs("hdfs://other:9000/x", fs);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(other.status().message().find("not on the cluster's file system " + fs),
            std::string::npos)
      << other.status();
  EXPECT_FALSE(ResolveOnDefaultFs("hdfs://nn.example.com:9001/x", fs).ok());
  EXPECT_FALSE(ResolveOnDefaultFs("s3a://bucket/x", fs).ok());
  EXPECT_FALSE(ResolveOnDefaultFs("hdfs:relative/x", fs).ok());
  EXPECT_FALSE(ResolveOnDefaultFs("hdfs:///x", "file:///").ok());
}

TEST(ResourceTest, GpusTravelAsAResourceEntry) {
  proto::Resource wire = ResourceToProto({.memory_mb = 4096, .vcores = 2, .gpus = 3});
  EXPECT_EQ(wire.memory_mb(), 4096);
  EXPECT_EQ(wire.vcores(), 2);
  ASSERT_EQ(wire.entries_size(), 1);
  EXPECT_EQ(wire.entries(0).key(), "yarn.io/gpu");
  EXPECT_EQ(wire.entries(0).value(), 3);
  EXPECT_EQ(wire.entries(0).kind(), proto::RESOURCE_KIND_COUNTABLE);

  // No GPUs: no entry, so clusters without the GPU type see nothing unknown.
  EXPECT_EQ(ResourceToProto({.memory_mb = 128, .vcores = 1}).entries_size(), 0);
}

TEST(ResourceTest, ReadsGpusFromTheRmsFullList) {
  // The RM lists every type, memory-mb and vcores included.
  proto::Resource wire;
  wire.set_memory_mb(8192);
  wire.set_vcores(8);
  for (auto [key, value, units] : std::vector<std::tuple<std::string, int64_t, std::string>>{
           {"memory-mb", 8192, "Mi"}, {"vcores", 8, ""}, {"yarn.io/gpu", 4, ""}}) {
    proto::ResourceEntry* entry = wire.add_entries();
    entry->set_key(key);
    entry->set_value(value);
    entry->set_units(units);
  }
  EXPECT_EQ(ResourceFromProto(wire), (Resource{.memory_mb = 8192, .vcores = 8, .gpus = 4}));
  EXPECT_EQ(ResourceFromProto(proto::Resource()), Resource());
}

AppSubmission SampleSubmission() {
  Credentials credentials;
  credentials.AddSecret("tony.job.secret", "s3cr3t");
  AppSubmission s;
  s.id = {1700000000000, 3};
  s.name = "mnist";
  s.queue = "gpu";
  s.tags = {"team:ml", "tony"};
  s.priority = 5;
  s.max_app_attempts = 2;
  s.node_label_expression = "gpu_nodes";
  s.am_resource = {.memory_mb = 2048, .vcores = 1, .gpus = 1};
  s.am_container.commands = {"./tony-am", "--conf", "tony-final.xml", "1><LOG_DIR>/amstdout.log"};
  s.am_container.environment = {{"CLASSPATH", "x"},
                                {"TONY_APP_ID", "application_1700000000000_0003"}};
  s.am_container.local_resources["tony.zip"] = {
      .url = YarnUrl::Parse("hdfs://nn:8020/user/a/.tony/application_1700000000000_0003/tony.zip")
                 .value(),
      .size = 1234,
      .timestamp_ms = 1700000001000,
      .type = LocalResourceType::kArchive};
  s.am_container.local_resources["tony-final.xml"] = {
      .url = YarnUrl::Parse("hdfs://nn:8020/user/a/.tony/x/tony-final.xml").value(),
      .size = 99,
      .timestamp_ms = 1700000002000};
  s.am_container.tokens = credentials.Serialize();
  return s;
}

TEST(SubmitApplicationRequestTest, NoPriorityLeavesTheQueuesDefault) {
  AppSubmission submission = SampleSubmission();
  submission.priority.reset();
  EXPECT_FALSE(MakeSubmitApplicationRequest(submission).context().has_priority());
}

TEST(SubmitApplicationRequestTest, KeptContainersAreAskedFor) {
  AppSubmission submission = SampleSubmission();
  submission.keep_containers = true;
  EXPECT_TRUE(MakeSubmitApplicationRequest(submission)
                  .context()
                  .keep_containers_across_application_attempts());
}

TEST(SubmitApplicationRequestTest, RoundTripsThroughTheWire) {
  AppSubmission submission = SampleSubmission();
  std::string bytes = MakeSubmitApplicationRequest(submission).SerializeAsString();
  proto::SubmitApplicationRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  ASSERT_TRUE(parsed.has_context());
  const proto::ApplicationSubmissionContext& c = parsed.context();

  EXPECT_EQ(c.application_id().cluster_timestamp(), 1700000000000);
  EXPECT_EQ(c.application_id().id(), 3);
  EXPECT_EQ(c.application_name(), "mnist");
  EXPECT_EQ(c.queue(), "gpu");
  EXPECT_EQ(c.application_type(), "TONY");
  ASSERT_EQ(c.tags_size(), 2);
  EXPECT_EQ(c.tags(0), "team:ml");
  EXPECT_EQ(c.tags(1), "tony");
  EXPECT_EQ(c.priority().priority(), 5);
  EXPECT_EQ(c.max_app_attempts(), 2);
  EXPECT_EQ(c.node_label_expression(), "gpu_nodes");
  // Sent explicitly, not left to defaults.
  ASSERT_TRUE(c.has_unmanaged_am());
  EXPECT_FALSE(c.unmanaged_am());
  ASSERT_TRUE(c.has_keep_containers_across_application_attempts());
  EXPECT_FALSE(c.keep_containers_across_application_attempts());

  EXPECT_EQ(c.resource().memory_mb(), 2048);
  EXPECT_EQ(c.resource().vcores(), 1);
  ASSERT_EQ(c.resource().entries_size(), 1);
  EXPECT_EQ(c.resource().entries(0).key(), "yarn.io/gpu");
  EXPECT_EQ(c.resource().entries(0).value(), 1);

  const proto::ContainerLaunchContext& am = c.am_container_spec();
  ASSERT_EQ(am.command_size(), 4);
  EXPECT_EQ(am.command(0), "./tony-am");
  EXPECT_EQ(am.command(3), "1><LOG_DIR>/amstdout.log");
  ASSERT_EQ(am.environment_size(), 2);
  EXPECT_EQ(am.environment(0).key(), "CLASSPATH");
  EXPECT_EQ(am.environment(0).value(), "x");
  EXPECT_EQ(am.environment(1).key(), "TONY_APP_ID");
  EXPECT_EQ(am.environment(1).value(), "application_1700000000000_0003");

  ASSERT_EQ(am.local_resources_size(), 2);
  // std::map order: tony-final.xml < tony.zip.
  const proto::LocalResourceEntry& xml = am.local_resources(0);
  EXPECT_EQ(xml.key(), "tony-final.xml");
  EXPECT_EQ(xml.value().type(), proto::LOCAL_RESOURCE_FILE);
  EXPECT_EQ(xml.value().size(), 99);
  const proto::LocalResourceEntry& zip = am.local_resources(1);
  EXPECT_EQ(zip.key(), "tony.zip");
  EXPECT_EQ(zip.value().url().scheme(), "hdfs");
  EXPECT_EQ(zip.value().url().host(), "nn");
  EXPECT_EQ(zip.value().url().port(), 8020);
  EXPECT_EQ(zip.value().url().file(), "/user/a/.tony/application_1700000000000_0003/tony.zip");
  EXPECT_EQ(zip.value().size(), 1234);
  EXPECT_EQ(zip.value().timestamp(), 1700000001000);
  EXPECT_EQ(zip.value().type(), proto::LOCAL_RESOURCE_ARCHIVE);
  EXPECT_EQ(zip.value().visibility(), proto::VISIBILITY_APPLICATION);

  absl::StatusOr<Credentials> tokens = Credentials::Parse(am.tokens(), "AM tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  ASSERT_NE(tokens->FindSecret("tony.job.secret"), nullptr);
  EXPECT_EQ(*tokens->FindSecret("tony.job.secret"), "s3cr3t");
}

TEST(SubmitApplicationRequestTest, LeavesOptionalPartsOut) {
  AppSubmission submission;
  submission.id = {1, 1};
  submission.am_resource = {.memory_mb = 128, .vcores = 1};
  submission.am_container.commands = {"true"};
  proto::SubmitApplicationRequest request = MakeSubmitApplicationRequest(submission);
  EXPECT_FALSE(request.context().has_node_label_expression());
  EXPECT_FALSE(request.context().am_container_spec().has_tokens());
  EXPECT_EQ(request.context().resource().entries_size(), 0);
  EXPECT_EQ(request.context().queue(), "default");
}

TEST(ApplicationReportTest, ParsesAReport) {
  proto::ApplicationReport wire;
  wire.mutable_application_id()->set_cluster_timestamp(1700000000000);
  wire.mutable_application_id()->set_id(9);
  wire.mutable_current_attempt_id()->mutable_application_id()->set_cluster_timestamp(1700000000000);
  wire.mutable_current_attempt_id()->mutable_application_id()->set_id(9);
  wire.mutable_current_attempt_id()->set_attempt_id(1);
  wire.set_user("alice");
  wire.set_queue("default");
  wire.set_name("mnist");
  wire.set_host("node1");
  wire.set_rpc_port(40000);
  wire.set_state(proto::APP_STATE_FAILED);
  wire.set_final_status(proto::FINAL_STATUS_FAILED);
  wire.set_diagnostics("AM container exited with exitCode: 1");
  wire.set_tracking_url("http://rm:8088/proxy/application_1700000000000_0009/");
  wire.set_start_time(1700000000100);
  wire.set_finish_time(1700000000900);
  wire.set_progress(0.5f);
  wire.set_application_type("TONY");
  wire.add_tags("tony");

  proto::ApplicationReport parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire.SerializeAsString()));
  ApplicationReport report = ApplicationReportFromProto(parsed);
  EXPECT_EQ(report.id.ToString(), "application_1700000000000_0009");
  ASSERT_TRUE(report.current_attempt.has_value());
  EXPECT_EQ(report.current_attempt->ToString(), "appattempt_1700000000000_0009_000001");
  EXPECT_EQ(report.user, "alice");
  EXPECT_EQ(report.name, "mnist");
  EXPECT_EQ(report.host, "node1");
  EXPECT_EQ(report.rpc_port, 40000);
  EXPECT_EQ(report.state, YarnApplicationState::kFailed);
  EXPECT_EQ(report.final_status, FinalApplicationStatus::kFailed);
  EXPECT_EQ(report.diagnostics, "AM container exited with exitCode: 1");
  EXPECT_EQ(report.start_time_ms, 1700000000100);
  EXPECT_EQ(report.finish_time_ms, 1700000000900);
  EXPECT_FLOAT_EQ(report.progress, 0.5f);
  EXPECT_EQ(report.application_type, "TONY");
  EXPECT_EQ(report.tags, std::vector<std::string>{"tony"});
  EXPECT_TRUE(IsFinal(report.state));
  EXPECT_EQ(ToString(report.state), "FAILED");
  EXPECT_EQ(ToString(report.final_status), "FAILED");
}

TEST(ApplicationReportTest, MissingFieldsReadAsYarnWouldShowThem) {
  ApplicationReport report = ApplicationReportFromProto(proto::ApplicationReport());
  EXPECT_EQ(report.state, YarnApplicationState::kUnknown);
  EXPECT_EQ(report.final_status, FinalApplicationStatus::kUndefined);
  EXPECT_EQ(report.diagnostics, "N/A");
  EXPECT_FALSE(report.current_attempt.has_value());
  EXPECT_FALSE(IsFinal(report.state));
}

TEST(StateNamesTest, MatchYarn) {
  EXPECT_EQ(ToString(YarnApplicationState::kNewSaving), "NEW_SAVING");
  EXPECT_EQ(ToString(YarnApplicationState::kAccepted), "ACCEPTED");
  EXPECT_EQ(ToString(FinalApplicationStatus::kUndefined), "UNDEFINED");
  EXPECT_EQ(ToString(FinalApplicationStatus::kEnded), "ENDED");
  EXPECT_EQ(ToString(NodeState::kDecommissioning), "DECOMMISSIONING");
  EXPECT_FALSE(IsFinal(YarnApplicationState::kRunning));
  EXPECT_TRUE(IsFinal(YarnApplicationState::kKilled));
  EXPECT_TRUE(IsFinal(YarnApplicationState::kFinished));
}

proto::NodeReport WireNode(const std::string& host, int port, proto::NodeState state,
                           int64_t used_mb, int64_t used_gpus, int containers) {
  proto::NodeReport node;
  node.mutable_node_id()->set_host(host);
  node.mutable_node_id()->set_port(port);
  node.set_http_address(host + ":8042");
  node.set_rack("/default-rack");
  node.set_state(state);
  *node.mutable_capability() = ResourceToProto({.memory_mb = 8192, .vcores = 8, .gpus = 4});
  *node.mutable_used() =
      ResourceToProto({.memory_mb = used_mb, .vcores = containers, .gpus = used_gpus});
  node.set_num_containers(containers);
  node.set_health_report("");
  return node;
}

TEST(NodeReportTest, ParsesANode) {
  NodeReport node =
      NodeReportFromProto(WireNode("10.0.0.5", 45454, proto::NODE_RUNNING, 2048, 1, 2));
  EXPECT_EQ(node.node_id, "10.0.0.5:45454");
  EXPECT_EQ(node.host, "10.0.0.5");
  EXPECT_EQ(node.port, 45454);
  EXPECT_EQ(node.http_address, "10.0.0.5:8042");
  EXPECT_EQ(node.rack, "/default-rack");
  EXPECT_EQ(node.state, NodeState::kRunning);
  EXPECT_EQ(node.capability, (Resource{.memory_mb = 8192, .vcores = 8, .gpus = 4}));
  EXPECT_EQ(node.used, (Resource{.memory_mb = 2048, .vcores = 2, .gpus = 1}));
  EXPECT_EQ(node.num_containers, 2);
}

TEST(FormatNodesTableTest, AlignsColumnsAndTotals) {
  ClusterMetrics metrics{.num_node_managers = 2, .num_active = 1, .num_unhealthy = 1};
  std::vector<NodeReport> nodes = {
      NodeReportFromProto(WireNode("node-a.example.com", 45454, proto::NODE_RUNNING, 2048, 1, 2)),
      NodeReportFromProto(WireNode("b", 1, proto::NODE_UNHEALTHY, 0, 0, 0))};
  std::string table = FormatNodesTable(metrics, nodes);
  EXPECT_EQ(table,
            "Total NodeManagers: 2 (active 1, unhealthy 1, lost 0, decommissioned 0, rebooted 0)\n"
            "Node-Id                   State      Memory-MB   VCores  GPUs  Containers\n"
            "node-a.example.com:45454  RUNNING    2048/8192   2/8     1/4   2\n"
            "b:1                       UNHEALTHY  0/8192      0/8     0/4   0\n"
            "Total                                2048/16384  2/16    1/8   2\n");
}

TEST(FormatNodesTableTest, SaysWhenThereAreNoNodes) {
  std::string table = FormatNodesTable(ClusterMetrics{}, {});
  EXPECT_TRUE(Contains(table, "Total NodeManagers: 0")) << table;
  EXPECT_TRUE(Contains(table, "No nodes.")) << table;
}

}  // namespace
}  // namespace tony::hadoop
