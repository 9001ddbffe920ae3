// tony.<type>.min-instances and torchrun's --nnodes=MIN:MAX: which type of a job is elastic
// (ReadElastic, job_spec_checks.cc).

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "config/job_spec_fixture.h"

namespace tony::config {
namespace {

class ElasticSpecTest : public JobSpecTest {
 protected:
  ElasticSpecTest() {
    Set("tony.application.framework", "pytorch");
    Set("tony.worker.instances", "3");
  }
};

TEST_F(ElasticSpecTest, MinInstancesMakesTheWorkersElasticWithTheTaskPolicy) {
  absl::StatusOr<JobSpec> spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->ElasticType(), nullptr);
  EXPECT_EQ(spec->job_types.at("worker").restart_policy, RestartPolicy::kGang);

  Set("tony.worker.min-instances", "2");
  spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_NE(spec->ElasticType(), nullptr);
  EXPECT_EQ(spec->ElasticType()->name, "worker");
  EXPECT_EQ(spec->job_types.at("worker").min_instances, 2);
  EXPECT_EQ(spec->job_types.at("worker").restart_policy, RestartPolicy::kTask)
      << "a lost worker is replaced alone";
  EXPECT_FALSE(spec->chief.has_value()) << "worker:0 is a worker like the others";
  Set("tony.worker.restart-policy", "task");
  EXPECT_TRUE(Build().ok());
  Set("tony.worker.restart-policy", "gang");
  EXPECT_TRUE(absl::StartsWith(Error(), "tony.worker.restart-policy = \"gang\"")) << Error();
  EXPECT_NE(Error().find("its restart policy is task"), std::string::npos) << Error();
  // No type of an elastic job restarts as a gang: that would clear the workers' rendezvous.
  Set("tony.worker.restart-policy", "");
  Set("tony.evaluator.instances", "1");
  spec = Build();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->job_types.at("evaluator").restart_policy, RestartPolicy::kTask);
  Set("tony.evaluator.restart-policy", "gang");
  EXPECT_TRUE(absl::StartsWith(Error(), "tony.evaluator.restart-policy = \"gang\"")) << Error();
}

TEST_F(ElasticSpecTest, TorchrunsNodeRangeInTheCommandSetsIt) {
  for (const char* command : {"torchrun --nnodes=1:3 --nproc_per_node=1 train.py",
                              "python3 -m torch.distributed.run --nnodes 2:4 train.py",
                              "cd src && /usr/bin/torchrun --nnodes='1:3' train.py",
                              "bash -c 'torchrun --nnodes=1:3 train.py'"}) {
    Set("tony.worker.command", command);
    absl::StatusOr<JobSpec> spec = Build();
    ASSERT_TRUE(spec.ok()) << command << ": " << spec.status();
    ASSERT_NE(spec->ElasticType(), nullptr) << command;
    EXPECT_EQ(spec->ElasticType()->min_instances, absl::StrContains(command, "2:4") ? 2 : 1)
        << command;
  }
  // A fixed size, a range that is not torchrun's, or an argument that only looks like one: not
  // elastic.
  for (const char* command : {"torchrun --nnodes=3 train.py", "python3 train.py --nnodes=1:3",
                              "mytorchrun --nnodes=1:3 train.py"}) {
    Set("tony.worker.command", command);
    absl::StatusOr<JobSpec> spec = Build();
    ASSERT_TRUE(spec.ok()) << command << ": " << spec.status();
    EXPECT_EQ(spec->ElasticType(), nullptr) << command;
  }
}

TEST_F(ElasticSpecTest, BadElasticSettingsAreOneLineNamingTheKey) {
  Set("tony.worker.min-instances", "4");
  EXPECT_EQ(Error(),
            "tony.worker.min-instances = \"4\" (--conf): more than tony.worker.instances = 3");
  Set("tony.worker.min-instances", "-1");
  EXPECT_TRUE(absl::StartsWith(Error(), "tony.worker.min-instances = \"-1\"")) << Error();

  Set("tony.worker.min-instances", "2");
  Set("tony.worker.command", "torchrun --nnodes=1:3 train.py");
  EXPECT_EQ(Error(),
            "tony.worker.min-instances = \"2\" (--conf): tony.worker.command runs torchrun with "
            "--nnodes=1:3");
  Set("tony.worker.min-instances", "0");
  Set("tony.worker.command", "torchrun --nnodes=1:2 train.py");
  EXPECT_EQ(Error(),
            "tony.worker.instances = \"3\" (--conf): torchrun's --nnodes=1:2 in "
            "tony.worker.command admits at most 2");
  Set("tony.worker.command", "torchrun --nnodes=3:2 train.py");
  EXPECT_EQ(Error(),
            "tony.worker.command runs torchrun with --nnodes=3:2: MIN must be at least 1 and at "
            "most MAX");

  Set("tony.worker.command", "python3 train.py");
  Set("tony.worker.min-instances", "1");
  Set("tony.application.framework", "horovod");
  EXPECT_NE(Error().find("an elastic job is PyTorch's"), std::string::npos) << Error();
  Set("tony.application.framework", "pytorch");
  Set("tony.chief.instances", "1");
  EXPECT_NE(Error().find("in a job without a chief"), std::string::npos) << Error();
  Set("tony.chief.instances", "0");
  // TonY's rules that end a job at one lost worker contradict an elastic one.
  Set("tony.application.fail-on-worker-failure-enabled", "true");
  EXPECT_TRUE(absl::StartsWith(Error(), "tony.application.fail-on-worker-failure-enabled = "))
      << Error();
  Set("tony.application.fail-on-worker-failure-enabled", "false");
  Set("tony.application.stop-on-failure-jobtypes", "worker");
  EXPECT_TRUE(absl::StartsWith(Error(), "tony.application.stop-on-failure-jobtypes = ")) << Error();
  Set("tony.application.stop-on-failure-jobtypes", "");
  Set("tony.worker.min-instances", "0");
  Set("tony.evaluator.instances", "1");
  Set("tony.evaluator.min-instances", "1");
  EXPECT_TRUE(absl::StartsWith(Error(), "tony.evaluator.min-instances = \"1\"")) << Error();
}

}  // namespace
}  // namespace tony::config
