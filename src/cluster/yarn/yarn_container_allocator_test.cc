// The YARN allocator's heartbeat against a scripted scheduler (hadoop/fake_rpc_server.h): the asks
// it sends (node hints, the whole table again after a resync), AM_SHUTDOWN, an unknown attempt
// and preemption warnings. The real scheduler is in tests/hadoop (yarn_e2e_test, backend_e2e_test).

#include "cluster/yarn/yarn_container_allocator.h"

#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "gtest/gtest.h"
#include "hadoop/yarn/fake_rpc_server.h"

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

// A constrained type asks with a SchedulingRequest tagged with its name, the others with
// ResourceRequests, never both in one allocate (the CapacityScheduler would skip the
// SchedulingRequests).
TEST_F(YarnContainerAllocatorTest, ConstrainedTypesAskWithSchedulingRequestsTaggedWithTheirName) {
  rm_.Answer("allocate", AllocateAnswer(1));
  YarnContainerAllocator allocator(Options());
  ContainerRequest worker = Worker();
  worker.placement = "notin,node,worker";
  allocator.Request(worker);
  allocator.Request(worker);
  allocator.Request(worker);
  ASSERT_TRUE(allocator.Start("am-host", 4242, "", {}).ok());
  ASSERT_TRUE(rm_.WaitForCalls("allocate", 2, 10000));
  allocator.Shutdown();
  const auto first = rm_.RequestOf<proto::AllocateRequest>("allocate", 0);
  EXPECT_EQ(first.ask_size(), 0);
  ASSERT_EQ(first.scheduling_requests_size(), 1);
  const proto::SchedulingRequest& request = first.scheduling_requests(0);
  ASSERT_EQ(request.allocation_tags_size(), 1);
  EXPECT_EQ(request.allocation_tags(0), "worker");
  EXPECT_EQ(request.resource_sizing().num_allocations(), 3);
  EXPECT_EQ(request.resource_sizing().resources().memory_mb(), 256);
  EXPECT_EQ(request.execution_type().execution_type(), 1);
  const auto& own = request.placement_constraint().simple_constraint();
  EXPECT_EQ(own.scope(), "node");
  EXPECT_EQ(own.min_cardinality(), 0);
  EXPECT_EQ(own.max_cardinality(), 0);
  ASSERT_EQ(own.target_expressions_size(), 1);
  EXPECT_EQ(own.target_expressions(0).target_type(),
            proto::PlacementConstraintTarget::TARGET_ALLOCATION_TAG);
  EXPECT_EQ(own.target_expressions(0).target_key(), "self");
  EXPECT_EQ(own.target_expressions(0).target_values(0), "worker");
  EXPECT_EQ(rm_.RequestOf<proto::AllocateRequest>("allocate", 1).scheduling_requests_size(), 0)
      << "unchanged: not sent again";
}

// A composite constraint (the config joins the application's to each type's this way) and a node
// attribute go out whole; a type without one keeps its ResourceRequest.
TEST_F(YarnContainerAllocatorTest, CompositeConstraintsAndAttributesGoOutWhole) {
  rm_.Answer("allocate", AllocateAnswer(1));
  YarnContainerAllocator allocator(Options());
  ContainerRequest worker = Worker();
  worker.placement = "and(notin,node,worker:java=true)";
  allocator.Request(worker);
  ContainerRequest ps{"ps", {512, 1, 0}, ""};
  ps.placement = "java!=1.7";
  allocator.Request(ps);
  ASSERT_TRUE(allocator.Start("am-host", 4242, "", {}).ok());
  ASSERT_TRUE(rm_.WaitForCalls("allocate", 2, 10000));
  allocator.Shutdown();
  const auto first = rm_.RequestOf<proto::AllocateRequest>("allocate", 0);
  EXPECT_EQ(first.ask_size(), 0);
  ASSERT_EQ(first.scheduling_requests_size(), 2);
  std::map<std::string, proto::PlacementConstraint> by_tag;
  for (const auto& request : first.scheduling_requests()) {
    by_tag[request.allocation_tags(0)] = request.placement_constraint();
  }
  const proto::PlacementConstraint& attribute = by_tag.at("ps");
  ASSERT_TRUE(attribute.has_simple_constraint());
  EXPECT_EQ(attribute.simple_constraint().attribute_op_code(), proto::ATTRIBUTE_NE);
  EXPECT_EQ(attribute.simple_constraint().scope(), "node");
  EXPECT_EQ(attribute.simple_constraint().target_expressions(0).target_type(),
            proto::PlacementConstraintTarget::TARGET_NODE_ATTRIBUTE);
  EXPECT_EQ(attribute.simple_constraint().target_expressions(0).target_key(), "java");
  EXPECT_EQ(attribute.simple_constraint().target_expressions(0).target_values(0), "1.7");
  const proto::PlacementConstraint& both = by_tag.at("worker");
  ASSERT_TRUE(both.has_composite_constraint());
  EXPECT_EQ(both.composite_constraint().composite_type(),
            proto::CompositePlacementConstraint::COMPOSITE_AND);
  ASSERT_EQ(both.composite_constraint().child_constraints_size(), 2);
  EXPECT_EQ(both.composite_constraint().child_constraints(0).simple_constraint().scope(), "node");
  EXPECT_EQ(both.composite_constraint()
                .child_constraints(1)
                .simple_constraint()
                .target_expressions(0)
                .target_key(),
            "java");
}

// A request the scheduler gave up placing (rejected_scheduling_requests) is forgotten by it: the
// allocator asks again.
TEST_F(YarnContainerAllocatorTest, ARejectedSchedulingRequestIsSentAgain) {
  // The first heartbeat that carries the request gets it back rejected.
  bool rejected = false;  // the heartbeat thread's alone
  rm_.On("allocate", [&rejected](const std::string& bytes) -> absl::StatusOr<std::string> {
    proto::AllocateRequest request;
    request.ParseFromString(bytes);
    proto::AllocateResponse answer = AllocateAnswer(1);
    if (request.scheduling_requests_size() > 0 && !rejected) {
      rejected = true;
      proto::RejectedSchedulingRequest* rejection = answer.add_rejected_scheduling_requests();
      rejection->set_reason(2);
      *rejection->mutable_request() = request.scheduling_requests(0);
    }
    return answer.SerializeAsString();
  });
  YarnContainerAllocator allocator(Options());
  ContainerRequest worker = Worker();
  worker.placement = "notin,node,worker";
  allocator.Request(worker);
  allocator.Request(worker);
  ASSERT_TRUE(allocator.Start("am-host", 4242, "", {}).ok());
  ASSERT_TRUE(rm_.WaitForCalls("allocate", 4, 10000));
  allocator.Shutdown();
  std::vector<int32_t> sent;
  for (size_t i = 0; i < rm_.CountCalls("allocate"); ++i) {
    const auto request = rm_.RequestOf<proto::AllocateRequest>("allocate", i);
    for (const auto& scheduling : request.scheduling_requests()) {
      sent.push_back(scheduling.resource_sizing().num_allocations());
    }
  }
  EXPECT_EQ(sent, (std::vector<int32_t>{2, 2})) << "once, and once again after the rejection";
}

TEST_F(YarnContainerAllocatorTest, SchedulingRequestsWaitForAHeartbeatWithoutChangedAsks) {
  rm_.Answer("allocate", AllocateAnswer(1));
  YarnContainerAllocator allocator(Options());
  ContainerRequest worker = Worker();
  worker.placement = "notin,node,worker";
  allocator.Request(worker);
  allocator.Request(ContainerRequest{"ps", {512, 1, 0}, ""});
  ASSERT_TRUE(allocator.Start("am-host", 4242, "", {}).ok());
  ASSERT_TRUE(rm_.WaitForCalls("allocate", 3, 10000));
  allocator.Shutdown();
  const auto first = rm_.RequestOf<proto::AllocateRequest>("allocate", 0);
  const auto second = rm_.RequestOf<proto::AllocateRequest>("allocate", 1);
  EXPECT_EQ(first.ask_size(), 1);
  EXPECT_EQ(first.scheduling_requests_size(), 0);
  EXPECT_EQ(second.ask_size(), 0);
  EXPECT_EQ(second.scheduling_requests_size(), 1);
}

// An RM whose placement handler is disabled refuses every such allocate: the job fails at once,
// saying which setting, instead of waiting forever.
TEST_F(YarnContainerAllocatorTest, AnRmThatTakesNoPlacementConstraintsFailsTheJobOnce) {
  rm_.Fail("allocate", "org.apache.hadoop.yarn.exceptions.YarnException",
           "Found non empty SchedulingRequest in AllocateRequest for application=appattempt_1_0001"
           "_000001, but the configured yarn.resourcemanager.placement-constraints.handler "
           "cannot handle placement constraints. Rejecting this allocate operation");
  std::promise<std::string> refused;
  std::atomic<int> calls = 0;
  ContainerAllocator::Callbacks callbacks;
  callbacks.on_refused = [&](const std::string& reason) {
    if (calls++ == 0) refused.set_value(reason);
  };
  YarnContainerAllocator allocator(Options());
  ContainerRequest worker = Worker();
  worker.placement = "in,node,worker";
  allocator.Request(worker);
  ASSERT_TRUE(allocator.Start("am-host", 4242, "", std::move(callbacks)).ok());
  std::future<std::string> reason = refused.get_future();
  ASSERT_EQ(reason.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_NE(reason.get().find("yarn.resourcemanager.placement-constraints.handler"),
            std::string::npos);
  ASSERT_TRUE(rm_.WaitForCalls("allocate", 3, 10000));
  allocator.Shutdown();
  EXPECT_EQ(calls.load(), 1);
}

// The RM ends this AM's part, with AM_SHUTDOWN or by refusing an allocate because it no longer
// knows the attempt (the application runs another one, or has ended): said once (the RM keeps
// saying it), nothing unregistered.
class EndedByTheRmTest : public YarnContainerAllocatorTest,
                         public ::testing::WithParamInterface<bool> {};

TEST_P(EndedByTheRmTest, TheJobEndsOnceAndNothingIsUnregistered) {
  const bool shutdown = GetParam();
  if (shutdown) {
    proto::AllocateResponse answer = AllocateAnswer(1);
    answer.set_am_command(proto::AM_COMMAND_SHUTDOWN);
    rm_.Answer("allocate", answer);  // and every later heartbeat too
  } else {
    rm_.Fail("allocate", "org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException",
             "Application attempt appattempt_1700000000000_0007_000001 doesn't exist in "
             "ApplicationMasterService cache.");
  }
  std::promise<std::string> ended;
  std::atomic<int> calls = 0;
  ContainerAllocator::Callbacks callbacks;
  callbacks.on_ended_by_cluster = [&](const std::string& reason) {
    if (calls++ == 0) ended.set_value(reason);
  };
  YarnContainerAllocator allocator(Options());
  ASSERT_TRUE(allocator.Start("am-host", 4242, "http://am-host:8088/", std::move(callbacks)).ok());
  std::future<std::string> reason = ended.get_future();
  ASSERT_EQ(reason.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_NE(reason.get().find(shutdown ? "AM_SHUTDOWN" : "no longer knows this attempt"),
            std::string::npos);
  ASSERT_TRUE(rm_.WaitForCalls("allocate", 4, 10000));  // more heartbeats, the same answer
  EXPECT_TRUE(allocator.Finish(FinalStatus::kFailed, "ended by the RM", "{}").ok());
  allocator.Shutdown();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(rm_.CountCalls("finishApplicationMaster"), 0u);
}

INSTANTIATE_TEST_SUITE_P(AmShutdownOrUnknownAttempt, EndedByTheRmTest, ::testing::Bool());

// The scheduler's preemption message names a granted container with every heartbeat until it
// takes it: the AM hears of it once.
TEST_F(YarnContainerAllocatorTest, APreemptionWarningIsPassedOnOnceAContainer) {
  const hadoop::ContainerId id{{{1700000000000, 7}, 1}, 2};
  proto::Container granted;
  *granted.mutable_id() = hadoop::ContainerIdToProto(id);
  granted.mutable_node_id()->set_host("nm1.example");
  granted.mutable_node_id()->set_port(45454);
  granted.mutable_priority()->set_priority(1);  // the first job type's
  *granted.mutable_resource() = hadoop::ResourceToProto({.memory_mb = 256, .vcores = 1});
  std::atomic<int> heartbeats = 0;
  rm_.On("allocate", [&](const std::string&) -> absl::StatusOr<std::string> {
    proto::AllocateResponse answer = AllocateAnswer(1);
    if (heartbeats++ == 0) {
      *answer.add_allocated_containers() = granted;
    } else {
      *answer.mutable_preempt()->mutable_strict_contract()->add_container()->mutable_id() =
          hadoop::ContainerIdToProto(id);
      // One the AM never had: nothing to warn of.
      *answer.mutable_preempt()->mutable_contract()->add_container()->mutable_id() =
          hadoop::ContainerIdToProto({{{1700000000000, 7}, 1}, 9});
    }
    return answer.SerializeAsString();
  });
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::string> warned;
  ContainerAllocator::Callbacks callbacks;
  callbacks.on_allocated = [](const Container&) {};
  callbacks.on_preemption = [&](std::string container_id) {
    std::lock_guard lock(mu);
    warned.push_back(std::move(container_id));
    changed.notify_all();
  };
  YarnContainerAllocator allocator(Options());
  allocator.Request(Worker());
  ASSERT_TRUE(allocator.Start("am-host", 4242, "", std::move(callbacks)).ok());
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return !warned.empty(); }));
  }
  const int seen = heartbeats.load();
  ASSERT_TRUE(rm_.WaitForCalls("allocate", static_cast<size_t>(seen) + 3, 10000));
  allocator.Shutdown();
  std::lock_guard lock(mu);
  EXPECT_EQ(warned, std::vector<std::string>{id.ToString()});
}

// Launch only queues the start; a start that fails (here the NodeManager's NMToken never came) is
// reported from a launcher thread as the container's end, cause kLaunchFailed, and the container
// goes back to the scheduler, whose own report of it is then not passed on a second time.
TEST_F(YarnContainerAllocatorTest, FailedStartIsReportedOnceAndTheContainerGoesBack) {
  const hadoop::ContainerId id{{{1700000000000, 7}, 1}, 2};
  proto::Container granted;
  *granted.mutable_id() = hadoop::ContainerIdToProto(id);
  granted.mutable_node_id()->set_host("nm1.example");
  granted.mutable_node_id()->set_port(45454);
  granted.mutable_priority()->set_priority(1);  // the first job type's
  *granted.mutable_resource() = hadoop::ResourceToProto({.memory_mb = 256, .vcores = 1});
  std::atomic<bool> sent = false, released = false;
  rm_.On("allocate", [&](const std::string& bytes) -> absl::StatusOr<std::string> {
    proto::AllocateRequest request;
    request.ParseFromString(bytes);
    proto::AllocateResponse answer = AllocateAnswer(1);
    if (!sent.exchange(true)) *answer.add_allocated_containers() = granted;
    for (const proto::ContainerId& release : request.release()) {
      if (release.id() != id.id) continue;
      released = true;
      proto::ContainerStatus* status = answer.add_completed_container_statuses();
      *status->mutable_container_id() = release;
      status->set_exit_status(-100);
      status->set_diagnostics("Container released by application");
    }
    return answer.SerializeAsString();
  });
  std::mutex mu;
  std::condition_variable changed;
  std::optional<Container> container;
  std::vector<ContainerExit> ends;
  ContainerAllocator::Callbacks callbacks;
  callbacks.on_allocated = [&](Container c) {
    std::lock_guard lock(mu);
    container = std::move(c);
    changed.notify_all();
  };
  callbacks.on_completed = [&](ContainerExit exit) {
    std::lock_guard lock(mu);
    ends.push_back(std::move(exit));
    changed.notify_all();
  };
  YarnContainerAllocator allocator(Options());
  allocator.Request(Worker());
  ASSERT_TRUE(allocator.Start("am-host", 4242, "", std::move(callbacks)).ok());
  std::unique_lock lock(mu);
  ASSERT_TRUE(
      changed.wait_for(lock, std::chrono::seconds(10), [&] { return container.has_value(); }));
  LaunchSpec spec;
  spec.argv = {"tony", "executor"};
  EXPECT_TRUE(allocator.Launch(*container, spec).ok());
  ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return !ends.empty(); }));
  EXPECT_EQ(ends[0].container_id, id.ToString());
  EXPECT_EQ(ends[0].cause, ContainerExit::Cause::kLaunchFailed);
  EXPECT_EQ(ends[0].exit_code, kExitLaunchFailed);
  EXPECT_NE(ends[0].diagnostics.find("nm1.example"), std::string::npos) << ends[0].diagnostics;
  lock.unlock();
  // The release goes out, the scheduler answers with the container's end, and two more
  // heartbeats pass: by then that answer has been handled.
  for (int i = 0; i < 1000 && !released; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // heartbeats every 5 ms
  }
  ASSERT_TRUE(released.load());
  ASSERT_TRUE(rm_.WaitForCalls("allocate", rm_.CountCalls("allocate") + 2, 10000));
  EXPECT_EQ(allocator.RunningContainers(), 0);
  allocator.Shutdown();
  EXPECT_EQ(ends.size(), 1u);
}

}  // namespace
}  // namespace tony::cluster
