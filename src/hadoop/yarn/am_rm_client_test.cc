// AmRmClient and NmClient against scripted fake servers: the wire messages they build, how they
// read the answers, and the protocol state they keep (response ids, rolled tokens, NMTokens).
// The real ResourceManager and NodeManager are in tests/hadoop/am_protocols_it_test.cc.

#include "hadoop/yarn/am_rm_client.h"

#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "gtest/gtest.h"
#include "hadoop/ipc/rpc_codec.h"
#include "hadoop/yarn/fake_rpc_server.h"
#include "hadoop/yarn/nm_client.h"

namespace tony::hadoop {
namespace {

constexpr int64_t kTs = 1700000000000;
const ApplicationAttemptId kAttempt{{kTs, 7}, 1};

Token AmRmToken(const std::string& password) {
  return {.identifier = "amrm-id",
          .password = password,
          .kind = "YARN_AM_RM_TOKEN",
          .service = "127.0.0.1:8030"};
}

proto::Container SampleContainer(int64_t id, const std::string& host, int32_t port) {
  proto::Container out;
  *out.mutable_id() = ContainerIdToProto({kAttempt, id});
  out.mutable_node_id()->set_host(host);
  out.mutable_node_id()->set_port(port);
  out.set_node_http_address(StrCat(host, ":8042"));
  *out.mutable_resource() = ResourceToProto({.memory_mb = 128, .vcores = 1});
  out.mutable_priority()->set_priority(1);
  out.mutable_container_token()->set_identifier(StrCat("ctoken-", id));
  out.mutable_container_token()->set_password("cpass");
  out.mutable_container_token()->set_kind("ContainerToken");
  out.mutable_container_token()->set_service(StrCat(host, ":", port));
  return out;
}

proto::AllocateResponse AllocateAnswer(int32_t response_id) {
  proto::AllocateResponse out;
  out.set_response_id(response_id);
  return out;
}

// --- Records and conversions ---

TEST(ContainerIdTest, FormatsLikeYarn) {
  EXPECT_EQ((ContainerId{kAttempt, 2}).ToString(), "container_1700000000000_0007_01_000002");
  ApplicationAttemptId big{{kTs, 12345}, 123};
  EXPECT_EQ((ContainerId{big, 1234567}).ToString(), "container_1700000000000_12345_123_1234567");
  // After a recovering RM restarted 17 times, the epoch is in the upper bits.
  ContainerId epoch{kAttempt, (int64_t{17} << 40) | 5};
  EXPECT_EQ(epoch.epoch(), 17);
  EXPECT_EQ(epoch.sequence(), 5);
  EXPECT_EQ(epoch.ToString(), "container_e17_1700000000000_0007_01_000005");
  EXPECT_EQ((ContainerId{kAttempt, (int64_t{3} << 40) | 1}).ToString(),
            "container_e03_1700000000000_0007_01_000001");
}

TEST(ContainerIdTest, ParsesItsOwnFormat) {
  for (const ContainerId& id :
       {ContainerId{kAttempt, 2}, ContainerId{kAttempt, (int64_t{17} << 40) | 5},
        ContainerId{{{kTs, 12345}, 123}, 1234567}}) {
    absl::StatusOr<ContainerId> parsed = ContainerId::Parse(id.ToString());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, id) << id.ToString();
  }
  for (const char* bad :
       {"", "container", "container_1_2_3", "container_x_0001_01_000001",
        "application_1700000000000_0007", "container_e_1700000000000_0007_01_000001",
        "container_1700000000000_0007_01_000001_9", "container_1700000000000_0007_01_-1"}) {
    EXPECT_EQ(ContainerId::Parse(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ContainerIdTest, TravelsAsYarn3WritesIt) {
  ContainerId id{kAttempt, (int64_t{2} << 40) | 9};
  proto::ContainerId wire = ContainerIdToProto(id);
  EXPECT_FALSE(wire.has_legacy_app_id());
  EXPECT_EQ(wire.app_attempt_id().application_id().cluster_timestamp(), kTs);
  EXPECT_EQ(wire.app_attempt_id().application_id().id(), 7);
  EXPECT_EQ(wire.app_attempt_id().attempt_id(), 1);
  EXPECT_EQ(wire.id(), (int64_t{2} << 40) | 9);
  EXPECT_EQ(ContainerIdFromProto(wire), id);
}

TEST(AllocateRequestTest, CarriesAsksReleasesProgressAndResponseId) {
  std::vector<ContainerRequest> asks = {{.capability = {.memory_mb = 2048, .vcores = 2, .gpus = 1},
                                         .num_containers = 3,
                                         .priority = 2},
                                        {.capability = {.memory_mb = 128, .vcores = 1},
                                         .num_containers = 0,
                                         .priority = 5,
                                         .resource_name = "node7",
                                         .relax_locality = false,
                                         .node_label_expression = "gpu",
                                         .allocation_request_id = 4}};
  proto::AllocateRequest wire = MakeAllocateRequest(asks, {ContainerId{kAttempt, 3}}, 0.5f, 42);
  ASSERT_EQ(wire.ask_size(), 2);
  const proto::ResourceRequest& any = wire.ask(0);
  EXPECT_EQ(any.resource_name(), "*");
  EXPECT_EQ(any.num_containers(), 3);
  EXPECT_EQ(any.priority().priority(), 2);
  EXPECT_TRUE(any.relax_locality());
  EXPECT_EQ(ResourceFromProto(any.capability()), (Resource{2048, 2, 1}));
  EXPECT_FALSE(any.has_node_label_expression());
  EXPECT_FALSE(any.has_allocation_request_id());
  const proto::ResourceRequest& node = wire.ask(1);
  EXPECT_EQ(node.resource_name(), "node7");
  EXPECT_TRUE(node.has_num_containers());  // 0 withdraws the ask: it must be on the wire
  EXPECT_EQ(node.num_containers(), 0);
  EXPECT_FALSE(node.relax_locality());
  EXPECT_EQ(node.node_label_expression(), "gpu");
  EXPECT_EQ(node.allocation_request_id(), 4);
  ASSERT_EQ(wire.release_size(), 1);
  EXPECT_EQ(ContainerIdFromProto(wire.release(0)), (ContainerId{kAttempt, 3}));
  EXPECT_EQ(wire.response_id(), 42);
  EXPECT_FLOAT_EQ(wire.progress(), 0.5f);
}

TEST(AllocateResponseTest, BecomesContainersStatusesAndNmTokens) {
  proto::AllocateResponse wire = AllocateAnswer(5);
  *wire.add_allocated_containers() = SampleContainer(2, "node1", 45454);
  proto::ContainerStatus* done = wire.add_completed_container_statuses();
  *done->mutable_container_id() = ContainerIdToProto({kAttempt, 3});
  done->set_state(proto::CONTAINER_STATE_COMPLETE);
  done->set_exit_status(3);
  done->set_diagnostics("Exception from container-launch.\nExit code: 3");
  proto::NmToken* nm = wire.add_nm_tokens();
  nm->mutable_node_id()->set_host("node1");
  nm->mutable_node_id()->set_port(45454);
  nm->mutable_token()->set_identifier("nm-id");
  nm->mutable_token()->set_kind("NMToken");
  *wire.mutable_limit() = ResourceToProto({.memory_mb = 1024, .vcores = 3});
  wire.set_num_cluster_nodes(1);
  wire.set_am_command(proto::AM_COMMAND_SHUTDOWN);

  AllocateResult result = AllocateResultFromProto(wire);
  ASSERT_EQ(result.allocated.size(), 1u);
  const Container& c = result.allocated[0];
  EXPECT_EQ(c.id.ToString(), "container_1700000000000_0007_01_000002");
  EXPECT_EQ(c.node_id(), "node1:45454");
  EXPECT_EQ(c.node_http_address, "node1:8042");
  EXPECT_EQ(c.resource, (Resource{128, 1, 0}));
  EXPECT_EQ(c.priority, 1);
  EXPECT_EQ(c.container_token.identifier, "ctoken-2");
  EXPECT_EQ(c.container_token.kind, "ContainerToken");
  EXPECT_EQ(c.allocation_request_id, -1);
  ASSERT_EQ(result.completed.size(), 1u);
  EXPECT_EQ(result.completed[0].id, (ContainerId{kAttempt, 3}));
  EXPECT_EQ(result.completed[0].state, ContainerState::kComplete);
  EXPECT_EQ(result.completed[0].exit_status, 3);
  EXPECT_TRUE(Contains(result.completed[0].diagnostics, "Exit code: 3"));
  ASSERT_EQ(result.nm_tokens.size(), 1u);
  EXPECT_EQ(result.nm_tokens.at("node1:45454").identifier, "nm-id");
  EXPECT_EQ(result.headroom, (Resource{1024, 3, 0}));
  EXPECT_EQ(result.num_cluster_nodes, 1);
  EXPECT_EQ(result.command, AmCommand::kShutdown);

  // A status without an exit code reads as YARN's "invalid" (-1000), not 0.
  proto::ContainerStatus bare;
  EXPECT_EQ(ContainerStatusFromProto(bare).exit_status, kExitStatusInvalid);
  EXPECT_EQ(AllocateResultFromProto(AllocateAnswer(1)).command, AmCommand::kNone);
}

// Both contracts of a preemption message name containers the scheduler will take back; each
// container once.
TEST(AllocateResponseTest, ReadsTheContainersAPreemptionMessageNames) {
  proto::AllocateResponse wire = AllocateAnswer(5);
  EXPECT_TRUE(AllocateResultFromProto(wire).to_be_preempted.empty());
  *wire.mutable_preempt()->mutable_strict_contract()->add_container()->mutable_id() =
      ContainerIdToProto({kAttempt, 2});
  *wire.mutable_preempt()->mutable_contract()->add_container()->mutable_id() =
      ContainerIdToProto({kAttempt, 3});
  *wire.mutable_preempt()->mutable_contract()->add_container()->mutable_id() =
      ContainerIdToProto({kAttempt, 2});
  EXPECT_EQ(AllocateResultFromProto(wire).to_be_preempted,
            (std::vector<ContainerId>{{kAttempt, 2}, {kAttempt, 3}}));
}

TEST(AllocateResponseTest, ReadsTheResponseIdTheRmExpects) {
  EXPECT_EQ(ExpectedResponseIdFromMessage(
                "Invalid responseId in AllocateRequest from application attempt: "
                "appattempt_1700000000000_0007_000001 expect responseId to be 7 but get 3"),
            7);
  EXPECT_EQ(ExpectedResponseIdFromMessage("Application Master is already registered"),
            std::nullopt);
  EXPECT_EQ(ExpectedResponseIdFromMessage(" expect responseId to be x but get 3"), std::nullopt);
}

// --- AmRmClient ---

class AmRmClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    proto::RegisterApplicationMasterResponse registered;
    *registered.mutable_maximum_capability() = ResourceToProto({.memory_mb = 8192, .vcores = 8});
    registered.set_queue("root.default");
    rm_.Answer("registerApplicationMaster", registered);
    absl::StatusOr<std::unique_ptr<AmRmClient>> client =
        AmRmClient::Connect({"rm.example.com", 8030}, AmRmToken("first"), rm_.Connector());
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
  }

  void RegisterOk() {
    absl::StatusOr<RegisterResult> registered = client_->Register("am-host", 4242, "http://am/");
    ASSERT_TRUE(registered.ok()) << registered.status();
    EXPECT_EQ(registered->maximum_capability, (Resource{8192, 8, 0}));
    EXPECT_EQ(registered->queue, "root.default");
  }

  FakeServer rm_;
  std::unique_ptr<AmRmClient> client_;
};

TEST_F(AmRmClientTest, ConnectsWithTheAmRmTokenAndRegisters) {
  RegisterOk();
  ASSERT_EQ(rm_.connects.size(), 1u);
  EXPECT_EQ(rm_.connects[0].first.ToString(), "rm.example.com:8030");
  EXPECT_EQ(rm_.connects[0].second, AmRmToken("first"));
  auto request =
      rm_.RequestOf<proto::RegisterApplicationMasterRequest>("registerApplicationMaster");
  EXPECT_EQ(request.host(), "am-host");
  EXPECT_EQ(request.rpc_port(), 4242);
  EXPECT_EQ(request.tracking_url(), "http://am/");
}

TEST_F(AmRmClientTest, AllocateBeforeRegisterIsAFailedPrecondition) {
  absl::StatusOr<AllocateResult> result = client_->Allocate({}, {}, 0);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(rm_.calls.empty());
}

TEST_F(AmRmClientTest, EachHeartbeatSendsTheLastResponseId) {
  RegisterOk();
  rm_.Answer("allocate", AllocateAnswer(1));
  rm_.Answer("allocate", AllocateAnswer(2));
  rm_.Answer("allocate", AllocateAnswer(std::numeric_limits<int32_t>::max()));
  rm_.Answer("allocate", AllocateAnswer(0));  // the RM wraps to 0 after INT32_MAX
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client_->Allocate({}, {}, 0.1f * i).ok());
  std::vector<int32_t> sent;
  for (size_t i = 0; i < 5; ++i) {
    sent.push_back(rm_.RequestOf<proto::AllocateRequest>("allocate", i).response_id());
  }
  EXPECT_EQ(sent, (std::vector<int32_t>{0, 1, 2, std::numeric_limits<int32_t>::max(), 0}));
}

TEST_F(AmRmClientTest, SwitchesToARolledAmRmTokenOnANewConnection) {
  RegisterOk();
  proto::AllocateResponse rolled = AllocateAnswer(1);
  *rolled.mutable_am_rm_token() = TokenToProto(AmRmToken("second"));
  rm_.Answer("allocate", rolled);
  rm_.Answer("allocate", AllocateAnswer(2));

  absl::StatusOr<AllocateResult> first = client_->Allocate({}, {}, 0);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->am_rm_token_rolled);
  EXPECT_EQ(client_->am_rm_token(), AmRmToken("second"));
  absl::StatusOr<AllocateResult> second = client_->Allocate({}, {}, 0);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->am_rm_token_rolled);

  ASSERT_EQ(rm_.connects.size(), 2u);
  EXPECT_EQ(rm_.connects[1].second, AmRmToken("second"));
  EXPECT_EQ(rm_.calls.back().connection, 1);
  EXPECT_EQ(rm_.RequestOf<proto::AllocateRequest>("allocate", 1).response_id(), 1);
}

TEST_F(AmRmClientTest, RegistersAgainWhenTheRmLostTheRegistration) {
  RegisterOk();
  rm_.Answer("allocate", AllocateAnswer(1));
  rm_.Fail("allocate", "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException",
           "AM is not registered for known application attempt");
  rm_.Answer("allocate", AllocateAnswer(1));
  ASSERT_TRUE(client_->Allocate({}, {}, 0).ok());

  std::vector<ContainerRequest> asks = {{.capability = {128, 1, 0}, .num_containers = 2}};
  absl::StatusOr<AllocateResult> result = client_->Allocate(asks, {}, 0);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->reregistered);
  auto again =
      rm_.RequestOf<proto::RegisterApplicationMasterRequest>("registerApplicationMaster", 1);
  EXPECT_EQ(again.host(), "am-host");
  EXPECT_EQ(again.rpc_port(), 4242);
  // The retry starts the new registration's sequence at 0 and carries the same asks.
  auto retry = rm_.RequestOf<proto::AllocateRequest>("allocate", 2);
  EXPECT_EQ(retry.response_id(), 0);
  EXPECT_EQ(retry.ask_size(), 1);
  EXPECT_EQ(client_->response_id(), 1);
}

TEST_F(AmRmClientTest, RegistersAgainAndRepeatsTheHeartbeatOnAmResync) {
  RegisterOk();
  rm_.Answer("allocate", AllocateAnswer(1));
  proto::AllocateResponse resync = AllocateAnswer(2);
  resync.set_am_command(proto::AM_COMMAND_RESYNC);
  rm_.Answer("allocate", resync);
  rm_.Answer("allocate", AllocateAnswer(1));
  ASSERT_TRUE(client_->Allocate({}, {}, 0).ok());

  std::vector<ContainerRequest> asks = {{.capability = {128, 1, 0}, .num_containers = 3}};
  std::vector<ContainerId> releases = {{kAttempt, 5}};
  absl::StatusOr<AllocateResult> result = client_->Allocate(asks, releases, 0);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->reregistered);
  EXPECT_EQ(result->command, AmCommand::kNone);
  EXPECT_EQ(
      rm_.RequestOf<proto::RegisterApplicationMasterRequest>("registerApplicationMaster", 1).host(),
      "am-host");
  auto retry = rm_.RequestOf<proto::AllocateRequest>("allocate", 2);
  EXPECT_EQ(retry.response_id(), 0);
  ASSERT_EQ(retry.ask_size(), 1);
  EXPECT_EQ(retry.ask(0).num_containers(), 3);
  EXPECT_EQ(retry.release_size(), 1);
  EXPECT_EQ(client_->response_id(), 1);
}

TEST_F(AmRmClientTest, AmShutdownReachesTheCaller) {
  RegisterOk();
  proto::AllocateResponse shutdown = AllocateAnswer(1);
  shutdown.set_am_command(proto::AM_COMMAND_SHUTDOWN);
  rm_.Answer("allocate", shutdown);
  absl::StatusOr<AllocateResult> result = client_->Allocate({}, {}, 0);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->command, AmCommand::kShutdown);
  EXPECT_FALSE(result->reregistered);
  // No second registration: the attempt is over.
  size_t registrations = 0;
  for (const auto& call : rm_.calls) registrations += call.method == "registerApplicationMaster";
  EXPECT_EQ(registrations, 1u);
}

TEST_F(AmRmClientTest, UsesTheResponseIdTheRmSaysItExpects) {
  RegisterOk();
  rm_.Fail("allocate", "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException",
           "Invalid responseId in AllocateRequest from application attempt: "
           "appattempt_1700000000000_0007_000001 expect responseId to be 7 but get 0");
  rm_.Answer("allocate", AllocateAnswer(8));
  absl::StatusOr<AllocateResult> result = client_->Allocate({}, {}, 0);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(rm_.RequestOf<proto::AllocateRequest>("allocate", 1).response_id(), 7);
  EXPECT_EQ(client_->response_id(), 8);
}

TEST_F(AmRmClientTest, AnAskAboveTheMaximumIsInvalidArgumentWithTheJavaClass) {
  RegisterOk();
  rm_.Fail("allocate", "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException",
           "Invalid resource request! Cannot allocate containers as requested resource is greater "
           "than maximum allowed allocation.");
  absl::StatusOr<AllocateResult> result =
      client_->Allocate({{.capability = {100000, 1, 0}, .num_containers = 1}}, {}, 0);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(GetRemoteError(result.status()).has_value());
  EXPECT_EQ(GetRemoteError(result.status())->class_name,
            "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException");
  EXPECT_TRUE(Contains(ToStd(result.status().message()), "greater than maximum"))
      << result.status();
  // The failed heartbeat did not advance the sequence.
  EXPECT_EQ(client_->response_id(), 0);
}

TEST_F(AmRmClientTest, FinishSendsTheFinalStatusAndReportsUnregistered) {
  RegisterOk();
  proto::FinishApplicationMasterResponse pending;
  pending.set_is_unregistered(false);
  proto::FinishApplicationMasterResponse done;
  done.set_is_unregistered(true);
  rm_.Answer("finishApplicationMaster", pending);
  rm_.Answer("finishApplicationMaster", done);
  EXPECT_EQ(client_->Finish(FinalApplicationStatus::kSucceeded, "child exited 3", "").value(),
            false);
  EXPECT_EQ(client_->Finish(FinalApplicationStatus::kSucceeded, "child exited 3", "").value(),
            true);
  auto request = rm_.RequestOf<proto::FinishApplicationMasterRequest>("finishApplicationMaster");
  EXPECT_EQ(request.final_application_status(), proto::FINAL_STATUS_SUCCEEDED);
  EXPECT_EQ(request.diagnostics(), "child exited 3");
}

TEST(AmRmClientConnectTest, CredentialsWithoutAnAmRmTokenAreAClearError) {
  absl::StatusOr<HadoopConf> conf = HadoopConf::Load({});
  ASSERT_TRUE(conf.ok()) << conf.status();
  Credentials credentials;
  credentials.AddToken(
      "hdfs", {.identifier = "i", .password = "p", .kind = "HDFS_DELEGATION_TOKEN", .service = ""});
  absl::StatusOr<std::unique_ptr<AmRmClient>> client = AmRmClient::Connect(*conf, credentials);
  ASSERT_FALSE(client.ok());
  EXPECT_TRUE(Contains(ToStd(client.status().message()), "YARN_AM_RM_TOKEN")) << client.status();
}

// --- NmClient ---

class NmClientTest : public ::testing::Test {
 protected:
  NmClientTest()
      : nm_client_(nm_.Connector()),
        container_(ContainerFromProto(SampleContainer(2, "node1", 45454))) {}

  static Token NmToken(const std::string& password) {
    return {
        .identifier = "nm-id", .password = password, .kind = "NMToken", .service = "node1:45454"};
  }

  FakeServer nm_;
  NmClient nm_client_;
  Container container_;
};

TEST_F(NmClientTest, StartSendsTheLaunchContextAndContainerTokenWithTheNodesNmToken) {
  nm_client_.UpdateNmTokens({{"node1:45454", NmToken("p1")}});
  proto::StartContainersResponse ok;
  *ok.add_succeeded_requests() = ContainerIdToProto(container_.id);
  nm_.Answer("startContainers", ok);

  ContainerLaunchContext launch;
  launch.commands = {"/bin/sh", "-c", "'exit 3'"};
  launch.environment = {{"TONY_TASK", "worker:0"}};
  absl::Status started = nm_client_.StartContainer(container_, launch);
  ASSERT_TRUE(started.ok()) << started;

  ASSERT_EQ(nm_.connects.size(), 1u);
  EXPECT_EQ(nm_.connects[0].first.ToString(), "node1:45454");
  EXPECT_EQ(nm_.connects[0].second, NmToken("p1"));
  auto request = nm_.RequestOf<proto::StartContainersRequest>("startContainers");
  ASSERT_EQ(request.requests_size(), 1);
  EXPECT_EQ(request.requests(0).container_token().identifier(), "ctoken-2");
  EXPECT_EQ(request.requests(0).container_token().kind(), "ContainerToken");
  const proto::ContainerLaunchContext& wire = request.requests(0).container_launch_context();
  ASSERT_EQ(wire.command_size(), 3);
  EXPECT_EQ(wire.command(2), "'exit 3'");
  ASSERT_EQ(wire.environment_size(), 1);
  EXPECT_EQ(wire.environment(0).key(), "TONY_TASK");

  // The connection is reused for the node.
  proto::StopContainersResponse stopped;
  *stopped.add_succeeded_requests() = ContainerIdToProto(container_.id);
  nm_.Answer("stopContainers", stopped);
  ASSERT_TRUE(nm_client_.StopContainer(container_).ok());
  EXPECT_EQ(nm_.connects.size(), 1u);
  EXPECT_EQ(ContainerIdFromProto(
                nm_.RequestOf<proto::StopContainersRequest>("stopContainers").container_ids(0)),
            container_.id);
}

TEST_F(NmClientTest, APerContainerFailureNamesTheContainerNodeAndJavaClass) {
  nm_client_.UpdateNmTokens({{"node1:45454", NmToken("p1")}});
  proto::StartContainersResponse failed;
  proto::ContainerFailure* failure = failed.add_failed_requests();
  *failure->mutable_container_id() = ContainerIdToProto(container_.id);
  failure->mutable_exception()->set_class_name("org.apache.hadoop.yarn.exceptions.YarnException");
  failure->mutable_exception()->set_message("Unauthorized request to start container.");
  failure->mutable_exception()->mutable_cause()->set_class_name("java.io.IOException");
  failure->mutable_exception()->mutable_cause()->set_message("token expired");
  nm_.Answer("startContainers", failed);

  absl::Status status = nm_client_.StartContainer(container_, {});
  ASSERT_FALSE(status.ok());
  std::string message(ToStd(status.message()));
  EXPECT_TRUE(Contains(message, container_.id.ToString())) << message;
  EXPECT_TRUE(Contains(message, "node1:45454")) << message;
  EXPECT_TRUE(Contains(message, "Unauthorized request")) << message;
  EXPECT_TRUE(Contains(message, "caused by java.io.IOException: token expired")) << message;
  ASSERT_TRUE(GetRemoteError(status).has_value());
  EXPECT_EQ(GetRemoteError(status)->class_name, "org.apache.hadoop.yarn.exceptions.YarnException");
}

TEST_F(NmClientTest, ANodeWithoutAnNmTokenIsAFailedPrecondition) {
  absl::Status status = nm_client_.StartContainer(container_, {});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(ToStd(status.message()), "node1:45454")) << status;
  EXPECT_TRUE(nm_.connects.empty());
}

TEST_F(NmClientTest, ANewNmTokenForTheNodeOpensANewConnection) {
  nm_client_.UpdateNmTokens({{"node1:45454", NmToken("p1")}});
  proto::GetContainerStatusesResponse statuses;
  proto::ContainerStatus* status = statuses.add_statuses();
  *status->mutable_container_id() = ContainerIdToProto(container_.id);
  status->set_state(proto::CONTAINER_STATE_RUNNING);
  nm_.Answer("getContainerStatuses", statuses);

  ASSERT_EQ(nm_client_.GetContainerStatus(container_).value().state, ContainerState::kRunning);
  nm_client_.UpdateNmTokens({{"node1:45454", NmToken("p1")}});  // the same: kept
  ASSERT_TRUE(nm_client_.GetContainerStatus(container_).ok());
  EXPECT_EQ(nm_.connects.size(), 1u);
  nm_client_.UpdateNmTokens({{"node1:45454", NmToken("p2")}});
  ASSERT_TRUE(nm_client_.GetContainerStatus(container_).ok());
  ASSERT_EQ(nm_.connects.size(), 2u);
  EXPECT_EQ(nm_.connects[1].second, NmToken("p2"));
}

TEST_F(NmClientTest, AnAnswerThatIgnoresTheContainerIsDataLoss) {
  nm_client_.UpdateNmTokens({{"node1:45454", NmToken("p1")}});
  nm_.Answer("startContainers", proto::StartContainersResponse());
  EXPECT_EQ(nm_client_.StartContainer(container_, {}).code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace tony::hadoop
