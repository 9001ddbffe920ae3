#include <gtest/gtest.h>

#include "hadoop/ipc/failover.h"
#include "hadoop/ipc/rpc_codec.h"
#include "hadoop/yarn/fake_rpc_server.h"
#include "hadoop/yarn/yarn.pb.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::hadoop {
namespace {

constexpr char kStandby[] = "org.apache.hadoop.ipc.StandbyException";

// Two fake ResourceManagers, rm1 and rm2, each up or down; the sleeps the policy asked for.
class FailoverTest : public ::testing::Test {
 protected:
  std::vector<FailoverTarget> Targets() const {
    return {{"rm1", {"a.example", 8032}}, {"rm2", {"b.example", 8032}}};
  }

  std::unique_ptr<FailoverConnection> Connection(FailoverPolicy policy = {}) {
    return std::make_unique<FailoverConnection>(
        "ResourceManager", Targets(),
        [this](const FailoverTarget& target) -> absl::StatusOr<std::unique_ptr<RpcConnection>> {
          opened.push_back(target.id);
          const bool first = target.id == "rm1";
          if (!(first ? rm1_up : rm2_up)) {
            return absl::UnavailableError(
                StrCat("cannot connect to ", target.address.ToString(), ": Connection refused"));
          }
          return (first ? rm1 : rm2).Connector()(target.address, Token{});
        },
        policy, [this](int64_t ms) { slept.push_back(ms); });
  }

  static proto::GetClusterMetricsResponse Metrics(int nodes) {
    proto::GetClusterMetricsResponse response;
    response.mutable_metrics()->set_num_node_managers(nodes);
    return response;
  }

  // getClusterMetrics through `connection`: the number of NodeManagers the answering RM reports.
  static absl::StatusOr<int> NodesOf(FailoverConnection& connection) {
    proto::GetClusterMetricsResponse response;
    absl::Status status =
        connection.Call("getClusterMetrics", proto::GetClusterMetricsRequest(), &response);
    if (!status.ok()) return status;
    return static_cast<int>(response.metrics().num_node_managers());
  }

  FakeServer rm1, rm2;
  bool rm1_up = true, rm2_up = true;
  std::vector<std::string> opened;
  std::vector<int64_t> slept;
};

TEST_F(FailoverTest, AStandbyAnswerMovesTheCallToTheActiveRm) {
  rm1.Fail("getClusterMetrics", kStandby,
           "Operation category READ is not supported in state standby");
  rm2.Answer("getClusterMetrics", Metrics(2));
  auto connection = Connection();
  EXPECT_EQ(NodesOf(*connection).value(), 2);
  EXPECT_EQ(connection->current().id, "rm2");
  EXPECT_EQ(connection->failovers(), 1);
  // The next call goes straight to the active one, on the same connection.
  EXPECT_EQ(NodesOf(*connection).value(), 2);
  EXPECT_EQ(rm1.CountCalls("getClusterMetrics"), 1u);
  EXPECT_EQ(opened, (std::vector<std::string>{"rm1", "rm2"}));
  EXPECT_TRUE(slept.empty()) << "no pause within the first round";
}

TEST_F(FailoverTest, AnRmThatIsDownIsPassedOver) {
  rm1_up = false;
  rm2.Answer("getClusterMetrics", Metrics(3));
  auto connection = Connection();
  ASSERT_TRUE(connection->Connect().ok());
  EXPECT_EQ(connection->current().id, "rm2");
  EXPECT_EQ(NodesOf(*connection).value(), 3);
}

TEST_F(FailoverTest, AFailoverDuringTheJobIsFollowed) {
  // rm1 serves, then becomes standby; rm2 takes over and keeps the calls.
  rm1.Answer("getClusterMetrics", Metrics(1));
  rm1.Fail("getClusterMetrics", kStandby, "standby");
  rm2.Answer("getClusterMetrics", Metrics(2));
  auto connection = Connection();
  EXPECT_EQ(NodesOf(*connection).value(), 1);
  EXPECT_EQ(NodesOf(*connection).value(), 2);
  EXPECT_EQ(connection->current().id, "rm2");
}

TEST_F(FailoverTest, TheRmsOwnErrorsAreNotFailedOver) {
  rm1.Fail("getClusterMetrics", "org.apache.hadoop.yarn.exceptions.YarnException", "no");
  rm2.Answer("getClusterMetrics", Metrics(2));
  auto connection = Connection();
  absl::StatusOr<int> nodes = NodesOf(*connection);
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(GetRemoteError(nodes.status())->class_name,
            "org.apache.hadoop.yarn.exceptions.YarnException");
  EXPECT_EQ(connection->failovers(), 0);
  EXPECT_EQ(rm2.CountCalls("getClusterMetrics"), 0u);
}

TEST_F(FailoverTest, NoActiveRmIsOneErrorNamingEachAfterBoundedRounds) {
  rm1.Fail("getClusterMetrics", kStandby, "rm1 is standby");
  rm2_up = false;
  auto connection = Connection({.rounds = 3, .sleep_base_ms = 100, .sleep_max_ms = 150});
  absl::StatusOr<int> nodes = NodesOf(*connection);
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kUnavailable);
  const std::string message(nodes.status().message());
  EXPECT_NE(message.find("no active ResourceManager among 2 after 3 rounds"), std::string::npos)
      << message;
  EXPECT_NE(message.find("rm1 (a.example:8032): "), std::string::npos) << message;
  EXPECT_NE(message.find("rm1 is standby"), std::string::npos) << message;
  EXPECT_NE(message.find("rm2 (b.example:8032): cannot connect"), std::string::npos) << message;
  EXPECT_EQ(rm1.CountCalls("getClusterMetrics"), 3u);
  // A pause between rounds, doubled, at most the maximum.
  EXPECT_EQ(slept, (std::vector<int64_t>{100, 150}));
}

TEST_F(FailoverTest, ASlowRmIsLeftForTheOther) {
  rm1.On("getClusterMetrics", [](const std::string&) -> absl::StatusOr<std::string> {
    return absl::DeadlineExceededError("timed out reading from a.example:8032");
  });
  rm2.Answer("getClusterMetrics", Metrics(2));
  auto connection = Connection();
  EXPECT_EQ(NodesOf(*connection).value(), 2);
}

TEST_F(FailoverTest, YarnClientFailsOverAndNamesTheRmItUses) {
  rm1.Fail("getClusterMetrics", kStandby, "standby");
  rm2.Answer("getClusterMetrics", Metrics(4));
  YarnClient client(Connection());
  absl::StatusOr<ClusterMetrics> metrics = client.GetClusterMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->num_node_managers, 4);
  EXPECT_EQ(client.peer(), "rm2 (b.example:8032)");
}

TEST(FailoverPolicyTest, FromHadoopsKeys) {
  absl::StatusOr<HadoopConf> none = HadoopConf::Load({});
  ASSERT_TRUE(none.ok());
  FailoverPolicy defaults = FailoverPolicyFromConf(*none, 2);
  EXPECT_EQ(defaults.rounds, 4);
  EXPECT_EQ(defaults.sleep_base_ms, 500);
  EXPECT_EQ(defaults.sleep_max_ms, 15000);
}

TEST(ServerListTest, RoundTripsAndNamesWhatIsWrong) {
  const std::vector<ServerAddress> servers = {{"rm1", {"a", 8030}}, {"rm2", {"b", 8031}}};
  EXPECT_EQ(FormatServerList(servers), "rm1=a:8030,rm2=b:8031");
  absl::StatusOr<std::vector<ServerAddress>> parsed = ParseServerList("rm1=a:8030,rm2=b:8031");
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[1].Name(), "rm2 (b:8031)");
  absl::StatusOr<std::vector<ServerAddress>> single = ParseServerList("a:8030");
  ASSERT_TRUE(single.ok());
  EXPECT_EQ((*single)[0].id, "");
  EXPECT_FALSE(ParseServerList("rm1=a").ok());
  EXPECT_FALSE(ParseServerList("").ok());
}

}  // namespace
}  // namespace tony::hadoop
