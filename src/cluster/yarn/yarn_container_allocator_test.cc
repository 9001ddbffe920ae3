// The YARN allocator's heartbeat against a scripted scheduler (hadoop/fake_rpc_server.h): the asks
// it sends (node hints, the whole table again after a resync) and AM_SHUTDOWN. The real scheduler
// is in tests/hadoop (yarn_e2e_test, backend_e2e_test).

#include "cluster/yarn/yarn_container_allocator.h"

#include <future>
#include <set>

#include "gtest/gtest.h"
#include "hadoop/fake_rpc_server.h"

namespace tony::cluster {
namespace {

using hadoop::FakeServer;
namespace proto = hadoop::proto;

proto::AllocateResponse AllocateAnswer(int32_t response_id) {
  proto::AllocateResponse out;
  out.set_response_id(response_id);
  return out;
}

class YarnContainerAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    proto::RegisterApplicationMasterResponse registered;
    *registered.mutable_maximum_capability() =
        hadoop::ResourceToProto({.memory_mb = 8192, .vcores = 8});
    rm_.Answer("registerApplicationMaster", registered);
  }

  YarnAllocatorOptions Options() {
    YarnAllocatorOptions options;
    options.scheduler = {"rm.example.com", 8030};
    options.user = "alice";
    options.scheduler_connector = rm_.Connector();
    options.fast_heartbeat_ms = 5;
    options.slow_heartbeat_ms = 5;
    return options;
  }

  static ContainerRequest Worker() { return {"worker", {256, 1, 0}, ""}; }

  // The resource names and counts of the i-th allocate's asks.
  std::map<std::string, int32_t> AsksOf(size_t i) {
    std::map<std::string, int32_t> asks;
    const auto request = rm_.RequestOf<proto::AllocateRequest>("allocate", i);
    for (const auto& ask : request.ask()) {
      asks[ask.resource_name()] = ask.num_containers();
    }
    return asks;
  }

  FakeServer rm_;
};

TEST_F(YarnContainerAllocatorTest, AsksNameTheHintedNodesAndTheirRacks) {
  rm_.Answer("allocate", AllocateAnswer(1));
  YarnAllocatorOptions options = Options();
  options.node_hints = {{"nm1.example", "/r1"}, {"nm2.example", "/r1"}};
  YarnContainerAllocator allocator(options);
  allocator.Request(Worker());
  allocator.Request(Worker());
  ASSERT_TRUE(allocator.Start("am-host", 4242, "http://am-host:8088/", {}).ok());
  ASSERT_TRUE(rm_.WaitForCalls("allocate", 2, 10000));
  allocator.Shutdown();
  EXPECT_EQ(rm_.RequestOf<proto::RegisterApplicationMasterRequest>("registerApplicationMaster")
                .tracking_url(),
            "http://am-host:8088/");
  const std::map<std::string, int32_t> expected = {
      {"*", 2}, {"nm1.example", 2}, {"nm2.example", 2}, {"/r1", 2}};
  EXPECT_EQ(AsksOf(0), expected);
  // Unchanged asks are not sent again.
  EXPECT_TRUE(AsksOf(1).empty());
}

TEST_F(YarnContainerAllocatorTest, SendsEveryAskAgainAfterTheRmAskedToResync) {
  proto::AllocateResponse resync = AllocateAnswer(3);
  resync.set_am_command(proto::AM_COMMAND_RESYNC);
  rm_.Answer("allocate", AllocateAnswer(1));  // takes the first asks
  rm_.Answer("allocate", resync);             // the RM restarted and forgot them
  rm_.Answer("allocate", AllocateAnswer(1));  // the repeated heartbeat, registered again
  YarnContainerAllocator allocator(Options());
  allocator.Request(Worker());
  allocator.Request(Worker());
  allocator.Request(ContainerRequest{"ps", {512, 1, 0}, ""});
  ASSERT_TRUE(allocator.Start("am-host", 4242, "http://am-host:8088/", {}).ok());
  ASSERT_TRUE(rm_.WaitForCalls("allocate", 5, 10000));
  allocator.Shutdown();
  EXPECT_EQ(rm_.CountCalls("registerApplicationMaster"), 2u);
  // Heartbeats: 0 asks, 1 (empty) gets AM_RESYNC, 2 repeats it from response id 0, 3 sends the
  // whole table again.
  EXPECT_EQ(rm_.RequestOf<proto::AllocateRequest>("allocate", 2).response_id(), 0);
  std::multiset<int32_t> counts;
  const auto full = rm_.RequestOf<proto::AllocateRequest>("allocate", 3);
  for (const auto& ask : full.ask()) {
    counts.insert(ask.num_containers());
  }
  EXPECT_EQ(counts, (std::multiset<int32_t>{1, 2}));
}

TEST_F(YarnContainerAllocatorTest, AmShutdownEndsTheJobOnceAndSkipsUnregistering) {
  proto::AllocateResponse shutdown = AllocateAnswer(1);
  shutdown.set_am_command(proto::AM_COMMAND_SHUTDOWN);
  rm_.Answer("allocate", shutdown);  // and every later heartbeat too
  std::promise<std::string> ended;
  std::atomic<int> calls = 0;
  ContainerAllocator::Callbacks callbacks;
  callbacks.on_ended_by_cluster = [&](std::string reason) {
    if (calls++ == 0) ended.set_value(reason);
  };
  YarnContainerAllocator allocator(Options());
  ASSERT_TRUE(allocator.Start("am-host", 4242, "http://am-host:8088/", std::move(callbacks)).ok());
  std::future<std::string> reason = ended.get_future();
  ASSERT_EQ(reason.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_NE(reason.get().find("AM_SHUTDOWN"), std::string::npos);
  ASSERT_TRUE(rm_.WaitForCalls("allocate", 4, 10000));  // more heartbeats, still AM_SHUTDOWN
  EXPECT_TRUE(allocator.Finish(FinalStatus::kFailed, "ended by the RM", "{}").ok());
  allocator.Shutdown();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(rm_.CountCalls("finishApplicationMaster"), 0u);
}

}  // namespace
}  // namespace tony::cluster
