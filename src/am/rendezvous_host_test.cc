#include "am/rendezvous_host.h"

#include <gtest/gtest.h>

#include "am/job_state_fixture.h"

namespace tony::am {
namespace {

// What the host did to its store.
struct StoreLog {
  bool started = false;
  bool stopped = false;
  std::vector<std::string> allowed;
  std::map<std::string, int> sizes;
  int clears = 0;
};

class FakeStore final : public RendezvousStore {
 public:
  FakeStore(StoreLog* log, absl::StatusOr<int> port) : log_(log), port_(std::move(port)) {}
  absl::StatusOr<int> Start(const std::string&) override {
    log_->started = true;
    return port_;
  }
  void Stop() override { log_->stopped = true; }
  void AllowHost(const std::string& host) override { log_->allowed.push_back(host); }
  void SetScopeSizes(std::map<std::string, int> sizes) override { log_->sizes = std::move(sizes); }
  void Clear() override { ++log_->clears; }

 private:
  StoreLog* const log_;
  const absl::StatusOr<int> port_;
};

class RendezvousHostTest : public ::testing::Test {
 protected:
  RendezvousHost::StoreFactory Factory(const absl::StatusOr<int>& port = 7070) {
    return [this, port](RendezvousHost::Kind kind) {
      kinds_.push_back(kind);
      return std::make_unique<FakeStore>(&log_, port);
    };
  }
  StoreLog log_;
  std::vector<RendezvousHost::Kind> kinds_;
};

TEST_F(RendezvousHostTest, HorovodWorkersAwaitTheAmsOwnStoreUntilItListens) {
  const config::JobSpec spec =
      MakeSpec({{"tony.application.framework", "horovod"}, {"tony.worker.instances", "2"}});
  RendezvousHost host(&spec, Factory());
  EXPECT_TRUE(host.Awaits({"worker", 0}));
  host.Start("127.0.0.1", "fd00::5");  // the fake store binds nothing
  EXPECT_TRUE(log_.started);
  EXPECT_EQ(host.error(), "");
  EXPECT_EQ(host.address(), "[fd00::5]:7070");  // an IPv6 host in brackets
  EXPECT_FALSE(host.Awaits({"worker", 0}));
  host.AllowHost("node1");
  EXPECT_EQ(log_.allowed, std::vector<std::string>{"node1"});
  host.SizeScopes({{"worker", {"node1:1", "node1:2"}}});
  EXPECT_EQ(log_.sizes.at("global"), 2);
  host.Stop();
  EXPECT_TRUE(log_.stopped);
}

TEST_F(RendezvousHostTest, AStoreThatCannotStartIsTheJobsFailure) {
  const config::JobSpec spec = MakeSpec({{"tony.application.framework", "horovod"}});
  RendezvousHost host(&spec, Factory(absl::UnavailableError("no port")));
  host.Start("127.0.0.1", "127.0.0.1");
  EXPECT_EQ(host.error(), "cannot serve Horovod's rendezvous: no port");
  EXPECT_EQ(host.address(), "");
  host.AllowHost("node1");  // no store: nothing to allow, nothing to crash
  EXPECT_TRUE(log_.allowed.empty());
}

TEST_F(RendezvousHostTest, OtherFrameworksHaveNone) {
  const config::JobSpec spec = MakeSpec({{"tony.application.framework", "tensorflow"}});
  RendezvousHost host(&spec, Factory());
  host.Start("127.0.0.1", "127.0.0.1");
  EXPECT_FALSE(log_.started);
  EXPECT_FALSE(host.Awaits({"worker", 0}));
  EXPECT_EQ(host.Publish({"worker", 0}, nullptr, "c1", 7000).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(RendezvousHostTest, OnlyTheDebugDriverPublishesFromItsContainerOnAValidPort) {
  const config::JobSpec spec = MakeSpec({{"tony.application.framework", "horovod"},
                                         {"tony.horovod.driver.mode.debug", "true"},
                                         {"tony.driver.command", "python debug_driver.py"},
                                         {"tony.worker.instances", "2"}});
  RendezvousHost host(&spec, Factory());
  host.Start("127.0.0.1", "127.0.0.1");
  EXPECT_FALSE(log_.started);  // the driver serves it
  EXPECT_TRUE(host.Awaits({"worker", 1}));
  TaskRecord driver;
  driver.ref = {config::kHorovodDriverType, 0};
  driver.container_id = "c_driver";
  driver.host = "fd00::7";
  TaskRecord worker;
  worker.ref = {"worker", 0};
  worker.container_id = "c_worker";
  worker.host = "node2";
  EXPECT_EQ(host.Publish(worker.ref, &worker, "c_worker", 7000).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(host.Publish(driver.ref, &driver, "c_other", 7000).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(host.Publish(driver.ref, &driver, "c_driver", 0).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(host.Publish(driver.ref, &driver, "c_driver", 65536).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(host.Awaits({"worker", 1}));
  ASSERT_TRUE(host.Publish(driver.ref, &driver, "c_driver", 7000).ok());
  EXPECT_EQ(host.address(), "[fd00::7]:7000");
  EXPECT_FALSE(host.Awaits({"worker", 1}));
}

TEST_F(RendezvousHostTest, AnElasticPyTorchJobGetsTheAmsC10dStoreAndNoWorkerWaitsForIt) {
  const config::JobSpec spec = MakeSpec({{"tony.application.framework", "pytorch"},
                                         {"tony.worker.instances", "3"},
                                         {"tony.worker.min-instances", "1"}});
  RendezvousHost host(&spec, Factory(7071));
  EXPECT_FALSE(host.Awaits({"worker", 0})) << "torchrun waits in the rendezvous itself";
  host.Start("127.0.0.1", "am-host");
  EXPECT_EQ(kinds_, std::vector<RendezvousHost::Kind>{RendezvousHost::Kind::kC10d});
  EXPECT_EQ(host.address(), "am-host:7071");
  EXPECT_EQ(host.name(), "the c10d rendezvous");
  host.AllowHost("node2");
  EXPECT_EQ(log_.allowed, std::vector<std::string>{"node2"});
  host.SizeScopes({{"worker", {"node2:1"}}});
  EXPECT_TRUE(log_.sizes.empty()) << "Horovod's scopes are not the c10d store's";
  host.Clear();
  EXPECT_EQ(log_.clears, 0) << "the agents' rendezvous outlives every change of their group";

  // A PyTorch job that is not elastic has no rendezvous of the AM's.
  const config::JobSpec fixed =
      MakeSpec({{"tony.application.framework", "pytorch"}, {"tony.worker.instances", "3"}});
  RendezvousHost none(&fixed, Factory());
  none.Start("127.0.0.1", "am-host");
  EXPECT_EQ(none.address(), "");
  EXPECT_EQ(kinds_.size(), 1u);
}

TEST_F(RendezvousHostTest, AStoreThatCannotListenIsTheJobsErrorNamingIt) {
  const config::JobSpec spec = MakeSpec({{"tony.application.framework", "pytorch"},
                                         {"tony.worker.instances", "2"},
                                         {"tony.worker.min-instances", "1"}});
  RendezvousHost host(&spec, Factory(absl::InternalError("no port")));
  host.Start("127.0.0.1", "am-host");
  EXPECT_EQ(host.error(), "cannot serve the c10d rendezvous: no port");
  EXPECT_EQ(host.address(), "");
}

}  // namespace
}  // namespace tony::am
