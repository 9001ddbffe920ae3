// Elastic PyTorch with Debian's torch 1.13 (`python3 -m torch.distributed.run`, torchrun's agent):
// the AM serves the c10d rendezvous, a worker whose whole task is lost is replaced alone, the
// survivor goes on by itself, and the group grows back when the replacement joins; on the local
// backend and on the YARN mini cluster.

#include <regex>

#include "e2e/backend_fixture.h"

namespace tony::testing {
namespace {

class ElasticE2eTest : public BackendE2eTest {};

// torchrun as a user runs it: tony gives it the node range, the rendezvous and its id (PET_*).
// --redirects/--tee: Debian's torch 1.13 cannot parse their defaults under Python 3.11
// (docs/running-jobs.md, "Elastic PyTorch"). A short last call and monitor interval keep the
// test short; is_host=false repeats tony's, which a --rdzv_conf of one's own replaces. Before it,
// a replacement waits until the survivor has run alone (elastic_ddp.py --await-alone), so that
// it joins a group that shrank whatever the timing; torchrun is exec'd, so that every task's
// agent has its sandbox's first PID.
constexpr char kTorchrun[] =
    "/usr/bin/python3 elastic_ddp.py --await-alone && exec /usr/bin/python3 -m "
    "torch.distributed.run --redirects 1 --tee 1"
    " --rdzv_conf=is_host=false,last_call_timeout=1 --monitor_interval=1 elastic_ddp.py";

TEST_P(ElasticE2eTest, AnElasticJobLosesAWorkerGoesOnAloneAndGetsItBack) {
  const std::string checkpoints = runner_.work_dir() + "/checkpoints";
  TonyResult r = Run(
      Submit({"tony.application.framework=pytorch", "tony.worker.instances=2",
              "tony.worker.min-instances=1", "tony.worker.memory=1g", "tony.worker.max-restarts=1",
              "tony.worker.restart-backoff-ms=0", "tony.application.checkpoint-dir=" + checkpoints},
             kTorchrun));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
  // worker:0 ran once, from start to end; worker:1 was lost once and replaced.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(worker:0 +SUCCEEDED +\S+ +0 +1 )"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(worker:1 +SUCCEEDED +\S+ +0 +2 )"))) << r.out;
  EXPECT_NE(r.out.find("worker:1 attempt 0 failed with exit code 137"), std::string::npos) << r.out;

  const std::string out = TaskStdout(r);
  // The survivor's processes started three times, always in worker:0's first attempt: with both,
  // alone, and with the replacement.
  const std::regex start(
      R"(task 0 attempt 0 rank \d world (\d) restart (\d) starts at step (\d+))");
  std::vector<std::smatch> starts;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), start); it != std::sregex_iterator();
       ++it) {
    starts.push_back(*it);
  }
  ASSERT_EQ(starts.size(), 3u) << out;
  EXPECT_EQ(starts[0][1].str(), "2");
  EXPECT_EQ(starts[1][1].str(), "1") << "the survivor went on by itself";
  EXPECT_EQ(starts[2][1].str(), "2") << "and the replacement joined it";
  EXPECT_EQ(starts[1][2].str(), "1") << "the loss cost the survivor's agent a restart";
  EXPECT_EQ(starts[2][2].str(), "1") << "a worker joining costs none";
  EXPECT_GT(std::stoi(starts[1][3].str()), 0) << "resumed from the checkpoint, not step 0";
  EXPECT_GT(std::stoi(starts[2][3].str()), std::stoi(starts[1][3].str()))
      << "it trained alone in between";
  EXPECT_NE(out.find("task 1 attempt 1 rank"), std::string::npos) << "the replacement ran";
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(task \d rank 0 done: worlds \[2, 2, (1, )+)")))
      << out;
  EXPECT_EQ(out.find("gave up"), std::string::npos) << out;

  // No gang restart: the history has worker:1's restart only.
  const std::string events = HistoryText(r.app_id, /*running=*/false, "events.jsonl");
  EXPECT_EQ(events.find("GANG_RESTART"), std::string::npos) << events;
  EXPECT_EQ(events.find("\"task\":\"worker:0\",\"attempt\":1"), std::string::npos) << events;
  EXPECT_NE(events.find("\"task\":\"worker:1\",\"attempt\":1,\"kind\":\"TASK_RESTARTED\""),
            std::string::npos)
      << events;
}

INSTANTIATE_TEST_SUITE_P(Backends, ElasticE2eTest, ::testing::Values("local", "yarn"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tony::testing
