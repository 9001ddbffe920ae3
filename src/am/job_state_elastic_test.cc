// An elastic PyTorch job's workers in the state machine (job_state_elastic.cc): a lost worker is
// replaced alone, the job goes on with at least min-instances, and once one worker succeeded the
// group is done.

#include <algorithm>

#include "am/job_state_fixture.h"
#include "common/task_exit.h"

namespace tony::am {
namespace {

const TaskRef kW0{"worker", 0};
const TaskRef kW1{"worker", 1};
const TaskRef kW2{"worker", 2};

class ElasticTest : public JobStateTest {
 protected:
  void InitElastic(const std::string& min, const std::string& max_restarts,
                   const std::string& backoff_ms = "0") {
    Init({{"tony.application.framework", "pytorch"},
          {"tony.worker.instances", "3"},
          {"tony.worker.min-instances", min},
          {"tony.worker.max-restarts", max_restarts},
          {"tony.worker.restart-backoff-ms", backoff_ms}});
    StartAll();
  }
  bool AnyEvent(const std::string& kind) {
    return std::any_of(job_->events().begin(), job_->events().end(),
                       [&](const TaskEvent& e) { return e.kind == kind; });
  }
};

TEST_F(ElasticTest, ALostWorkerIsReplacedAloneWhileTheOthersGoOn) {
  InitElastic("2", "1");
  Actions actions = Exit(kW1, 137);
  EXPECT_EQ(Count<StopContainer>(actions), 1) << "its own container only";
  EXPECT_EQ(Count<RequestContainer>(actions), 1);
  EXPECT_EQ(State(kW1), TaskState::kRequested);
  for (const TaskRef& other : {kW0, kW2}) {
    EXPECT_EQ(State(other), TaskState::kRunning);
    EXPECT_EQ(job_->Find(other)->gang_restart, "") << other.ToString();
    EXPECT_EQ(job_->Find(other)->attempt, 0) << other.ToString();
  }
  EXPECT_FALSE(AnyEvent("GANG_RESTART"));
  EXPECT_EQ(job_->Find(kW1)->restarts_used, 1);
  // The replacement gets its cluster spec as soon as it registers: no barrier to wait at.
  Allocate(kW1);
  actions = Register(kW1, 2001);
  EXPECT_EQ(Count<SendClusterSpec>(actions), 1);
  EXPECT_EQ(State(kW1), TaskState::kRunning);
  for (const TaskRef& task : {kW0, kW1, kW2}) Exit(task, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
  EXPECT_EQ(job_->diagnostics(), "");
}

TEST_F(ElasticTest, AWorkerLostWithItsNodeIsReplacedWithoutARestart) {
  InitElastic("2", "0");
  job_->OnContainerCompleted("c_worker:2", kExitAborted, "Container released on a *lost* node",
                             false);
  EXPECT_EQ(State(kW2), TaskState::kRequested);
  EXPECT_EQ(job_->Find(kW2)->restarts_used, 0);
  EXPECT_EQ(job_->Find(kW2)->free_restarts, 1);
  EXPECT_EQ(job_->state(), JobState::kRunning);
}

TEST_F(ElasticTest, TheJobFailsOnlyWhenFewerThanMinInstancesAreLeft) {
  InitElastic("2", "0");
  Exit(kW1, 1);
  EXPECT_EQ(State(kW1), TaskState::kFailed);
  EXPECT_EQ(job_->state(), JobState::kRunning) << "worker:0 and worker:2 are two";
  EXPECT_FALSE(job_->IsChief(kW0)) << "an elastic job has no chief";
  Exit(kW0, 1);
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(),
            "task worker:0 failed (exit code 1): boom; 1 of its workers are left, fewer than "
            "tony.worker.min-instances = 2");
  EXPECT_TRUE(job_->Find(kW2)->stop_requested);
}

TEST_F(ElasticTest, OnceOneSucceededNoMemberIsReplacedAndLateFailuresAreExcused) {
  InitElastic("1", "2", "10000");
  Exit(kW2, 137);
  EXPECT_EQ(State(kW2), TaskState::kNew) << "waiting out its backoff";
  Actions actions = Exit(kW0, 0);
  EXPECT_EQ(State(kW2), TaskState::kFinished) << "its replacement is not needed";
  EXPECT_EQ(Count<RequestContainer>(actions), 0);
  clock_.Advance(20000);
  EXPECT_EQ(Count<RequestContainer>(job_->OnTick()), 0);
  // A member that fails now (one that found the rendezvous closed) is not replaced.
  actions = Exit(kW1, 1);
  EXPECT_EQ(Count<RequestContainer>(actions), 0);
  EXPECT_EQ(State(kW1), TaskState::kFailed);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
  EXPECT_EQ(job_->diagnostics(),
            "enough elastic workers succeeded (tony.worker.min-instances); failed tasks: "
            "worker:1");
}

TEST_F(ElasticTest, AReplacementStoppedBeforeItRegisteredFailsNothingWhileItsContainerEnds) {
  Init({{"tony.application.framework", "pytorch"},
        {"tony.worker.instances", "3"},
        {"tony.worker.min-instances", "1"},
        {"tony.worker.max-restarts", "1"},
        {"tony.worker.restart-backoff-ms", "0"},
        {"tony.container.registration.timeout", "5000"}});
  StartAll();
  Exit(kW2, 137);
  Allocate(kW2);  // its executor has not registered yet
  Exit(kW0, 0);
  EXPECT_TRUE(job_->Find(kW2)->stop_requested);
  // Its container takes long to end: past the registration timeout, nothing fails for it.
  clock_.Advance(job_->spec().registration_timeout_ms + 1000);
  job_->OnTick();
  EXPECT_EQ(job_->state(), JobState::kRunning) << job_->diagnostics();
  job_->OnContainerCompleted("c_worker:2", 143, "", false);
  EXPECT_EQ(State(kW2), TaskState::kFinished);
  Exit(kW1, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
  EXPECT_EQ(job_->diagnostics(), "");
}

TEST_F(ElasticTest, TooFewSuccessesDoNotExcuseTheFailures) {
  InitElastic("2", "0");
  Exit(kW1, 1);
  Exit(kW0, 0);
  Exit(kW2, 1);
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_EQ(job_->diagnostics(), "failed tasks: worker:1, worker:2");
}

}  // namespace
}  // namespace tony::am
