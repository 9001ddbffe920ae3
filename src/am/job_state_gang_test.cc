// Restart policy gang: a member's failure or hang restarts every member, in their containers.

#include <gtest/gtest.h>

#include "am/job_state_fixture.h"
#include "am/result_replies.h"
#include "common/strings.h"

namespace tony::am {
namespace {

const TaskRef kW0{"worker", 0};
const TaskRef kW1{"worker", 1};

class GangTest : public JobStateTest {
 protected:
  void InitGang(std::vector<std::pair<std::string, std::string>> more = {}) {
    std::vector<std::pair<std::string, std::string>> settings = {
        {"tony.application.framework", "pytorch"},
        {"tony.worker.instances", "2"},
        {"tony.worker.max-restarts", "1"},
        {"tony.worker.restart-backoff-ms", "0"}};
    settings.insert(settings.end(), more.begin(), more.end());
    Init(settings);
    StartAll();
  }
  // The executor of a running task heartbeats; returns the AM's answer.
  HeartbeatAnswer Beat(const TaskRef& task) {
    return job_->OnHeartbeat(task, "c_" + task.ToString(), HeartbeatReport{});
  }
  // A member that waits in its container registers its next attempt at `port`.
  void RegisterAgain(const TaskRef& task, int port) {
    ASSERT_EQ(State(task), TaskState::kAllocated);
    Register(task, port);
  }
  const TaskEvent* LastEvent(const std::string& kind) {
    const TaskEvent* found = nullptr;
    for (const TaskEvent& event : job_->events()) {
      if (event.kind == kind) found = &event;
    }
    return found;
  }
};

TEST_F(GangTest, CollectiveFrameworksDefaultToGangAndOthersToTask) {
  InitGang();
  EXPECT_EQ(job_->spec().job_types.at("worker").restart_policy, config::RestartPolicy::kGang);
  EXPECT_TRUE(job_->Find(kW0)->gang);
  const config::JobSpec ps = MakeSpec({{"tony.worker.instances", "2"}, {"tony.ps.instances", "1"}});
  EXPECT_EQ(ps.job_types.at("worker").restart_policy, config::RestartPolicy::kTask);
  // TensorFlow's collectives look like independent workers: TonY's rules hold unless the job
  // chooses gang.
  const config::JobSpec tf = MakeSpec({{"tony.worker.instances", "2"}});
  EXPECT_EQ(tf.job_types.at("worker").restart_policy, config::RestartPolicy::kTask);
  const config::JobSpec mwms =
      MakeSpec({{"tony.worker.instances", "2"}, {"tony.worker.restart-policy", "gang"}});
  EXPECT_EQ(mwms.job_types.at("worker").restart_policy, config::RestartPolicy::kGang);
  const config::JobSpec mxnet = MakeSpec({{"tony.application.framework", "mxnet"},
                                          {"tony.worker.instances", "2"},
                                          {"tony.server.instances", "1"},
                                          {"tony.scheduler.instances", "1"}});
  EXPECT_EQ(mxnet.job_types.at("worker").restart_policy, config::RestartPolicy::kTask);
  const config::JobSpec sidecar = MakeSpec({{"tony.application.framework", "pytorch"},
                                            {"tony.worker.instances", "2"},
                                            {"tony.application.tensorboard-log-dir", "/tmp/tb"}});
  EXPECT_EQ(sidecar.job_types.at("tensorboard").restart_policy, config::RestartPolicy::kTask);
}

// The failed member waits in its container; the other is stopped, then waits in its own; both
// register fresh addresses and get a new cluster spec together. Nothing is allocated or stopped.
TEST_F(GangTest, AFailedMemberRestartsTheWholeGangInTheirContainers) {
  InitGang();
  const std::string c0 = job_->Find(kW0)->container_id;
  const std::string c1 = job_->Find(kW1)->container_id;
  Actions actions = Exit(kW1, 3);
  EXPECT_EQ(Count<RequestContainer>(actions), 0);
  EXPECT_EQ(Count<StopContainer>(actions), 0);
  EXPECT_EQ(job_->gang_restarts(), 1);
  EXPECT_EQ(State(kW1), TaskState::kAllocated);
  EXPECT_EQ(job_->Find(kW1)->container_id, c1);
  EXPECT_EQ(job_->Find(kW1)->attempt, 1);
  EXPECT_EQ(job_->Find(kW1)->restarts_used, 1);
  ASSERT_NE(LastEvent("GANG_RESTART"), nullptr);
  EXPECT_NE(LastEvent("GANG_RESTART")->detail.find("worker:1 failed (exit code 3)"),
            std::string::npos);
  EXPECT_NE(LastEvent("GANG_RESTART")->detail.find("stopping worker:0"), std::string::npos);
  const std::vector<TaskEvent> notices = job_->TakeNotices();
  ASSERT_EQ(notices.size(), 1u);
  // Numbered in the order made, as the history tells it (docs/history.md): the gang restart,
  // then worker:1's ended attempt, then its next one.
  uint64_t ended = 0;
  uint64_t again = 0;
  for (const TaskTransition& t : job_->TakeTransitions()) {
    if (t.task == kW1 && t.attempt == 0 && t.to == TaskState::kFailed) ended = t.seq;
    if (t.task == kW1 && t.attempt == 1 && t.to == TaskState::kAllocated) again = t.seq;
  }
  EXPECT_LT(notices[0].seq, ended);
  EXPECT_LT(ended, again);

  // worker:0 is asked to stop, and says why.
  const HeartbeatAnswer answer = Beat(kW0);
  EXPECT_TRUE(answer.stop);
  EXPECT_NE(answer.reason.find("gang restart 1: worker:1 failed"), std::string::npos);
  // Not released while worker:0 still runs its old attempt.
  RegisterAgain(kW1, 2001);
  EXPECT_FALSE(job_->ClusterSpecReleased(kW1));

  actions = Exit(kW0, 143);
  EXPECT_EQ(Count<StopContainer>(actions), 0);
  EXPECT_EQ(State(kW0), TaskState::kAllocated);
  EXPECT_EQ(job_->Find(kW0)->container_id, c0);
  EXPECT_EQ(job_->Find(kW0)->attempt, 1);
  EXPECT_EQ(job_->Find(kW0)->restarts_used, 0) << "the gang's restart counts once, for worker:1";
  ASSERT_EQ(job_->Find(kW0)->previous_attempts.size(), 1u);
  EXPECT_EQ(job_->Find(kW0)->previous_attempts[0].exit_code, kExitGangRestart);
  EXPECT_EQ(ExitText(kExitGangRestart), "stopped for a gang restart");

  RegisterAgain(kW0, 2000);
  EXPECT_TRUE(job_->ClusterSpecReleased(kW0));
  EXPECT_TRUE(job_->ClusterSpecReleased(kW1));
  EXPECT_EQ(job_->ClusterSpec().at("worker"), (std::vector<std::string>{"h:2000", "h:2001"}));
  Exit(kW0, 0);
  Exit(kW1, 0);
  EXPECT_EQ(job_->state(), JobState::kSucceeded);
}

TEST_F(GangTest, PastTheFailedTypesMaxRestartsTheFailureCounts) {
  InitGang();
  Exit(kW1, 3);
  Exit(kW0, 143);
  RegisterAgain(kW0, 2000);
  RegisterAgain(kW1, 2001);
  Exit(kW1, 3);  // its second failure: max-restarts is 1
  EXPECT_EQ(job_->gang_restarts(), 1);
  EXPECT_EQ(State(kW1), TaskState::kFailed);
  // The rest of the gang would wait for it forever: the job fails now.
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_NE(job_->diagnostics().find("task worker:1 failed (exit code 3): boom; the rest of its "
                                     "gang (tony.worker.restart-policy = gang) cannot go on "
                                     "without it"),
            std::string::npos)
      << job_->diagnostics();
  EXPECT_TRUE(Beat(kW0).stop);
}

// A member that already succeeded cannot run again: a later failure of another member restarts
// nothing, and the failure rules decide.
TEST_F(GangTest, AfterAMemberSucceededAFailureRestartsNoGang) {
  InitGang();
  Exit(kW1, 0);
  Exit(kW0, 3);
  EXPECT_EQ(job_->gang_restarts(), 0);
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_NE(job_->diagnostics().find("chief worker:0 failed"), std::string::npos);
}

// tony.application.max-gang-restarts counts the gang's restarts whoever failed, in place of
// max-restarts; the backoff doubles with each.
TEST_F(GangTest, MaxGangRestartsBoundsTheRestartsWithADoublingBackoff) {
  InitGang({{"tony.worker.max-restarts", "0"},
            {"tony.application.max-gang-restarts", "2"},
            {"tony.worker.restart-backoff-ms", "1000"}});
  for (int restart = 1; restart <= 2; ++restart) {
    const TaskRef failing = restart == 1 ? kW0 : kW1;
    const TaskRef other = restart == 1 ? kW1 : kW0;
    Exit(failing, 1);
    EXPECT_EQ(job_->gang_restarts(), restart);
    Exit(other, 143);
    RegisterAgain(kW0, 3000 + restart);
    RegisterAgain(kW1, 4000 + restart);
    const int64_t backoff = restart == 1 ? 1000 : 2000;
    clock_.Advance(backoff - 1);
    EXPECT_EQ(Count<SendClusterSpec>(job_->OnTick()), 0) << "restart " << restart;
    clock_.Advance(1);
    EXPECT_EQ(Count<SendClusterSpec>(job_->OnTick()), 2) << "restart " << restart;
  }
  Exit(kW0, 1);
  EXPECT_EQ(job_->gang_restarts(), 2);
  EXPECT_EQ(State(kW0), TaskState::kFailed);
  EXPECT_EQ(job_->state(), JobState::kFailed) << "worker:0 is the chief";
}

// A member whose container is gone gets a new one; a preemption uses no restart.
TEST_F(GangTest, APreemptedMemberGetsANewContainerAndTheRestStayInTheirs) {
  InitGang({{"tony.worker.max-restarts", "0"}});
  const std::string c1 = job_->Find(kW1)->container_id;
  Actions actions = job_->OnContainerCompleted(c1, kExitPreempted, "preempted", false);
  EXPECT_EQ(Count<RequestContainer>(actions), 1);
  EXPECT_EQ(State(kW1), TaskState::kRequested);
  EXPECT_EQ(job_->gang_restarts(), 1);
  EXPECT_EQ(job_->Find(kW1)->free_restarts, 1);
  EXPECT_NE(LastEvent("GANG_RESTART")->detail.find("not counted"), std::string::npos);
  EXPECT_TRUE(Beat(kW0).stop);
  Exit(kW0, 143);
  EXPECT_EQ(State(kW0), TaskState::kAllocated);
  RegisterAgain(kW0, 2000);
  EXPECT_FALSE(job_->ClusterSpecReleased(kW0)) << "worker:1 has no container yet";
  job_->OnContainerAllocated("c_new", "worker", "h2", "/l");
  ASSERT_TRUE(job_->OnTaskRegistered(kW1, "c_new", "h2", 2001).ok());
  EXPECT_TRUE(job_->ClusterSpecReleased(kW0));
  EXPECT_TRUE(job_->ClusterSpecReleased(kW1));
}

// A hung member is stopped with its stacks; its end restarts the gang.
TEST_F(GangTest, AHungMemberRestartsTheGang) {
  InitGang({{"tony.task.hang-timeout-ms", "15000"}});
  HeartbeatReport quiet;
  quiet.quiet_ms = 15000;
  const HeartbeatAnswer hung = job_->OnHeartbeat(kW1, "c_worker:1", quiet);
  EXPECT_TRUE(hung.stop);
  EXPECT_TRUE(hung.dump_stacks);
  EXPECT_TRUE(Beat(kW0).dump_stacks) << "the gang's stacks too";
  Exit(kW1, 143);
  EXPECT_EQ(job_->gang_restarts(), 1);
  EXPECT_EQ(job_->Find(kW1)->previous_attempts.back().exit_code, kExitHung);
  EXPECT_NE(LastEvent("GANG_RESTART")->detail.find("worker:1 failed (hung)"), std::string::npos);
  EXPECT_TRUE(Beat(kW0).stop);
}

// A member that has not started its user process yet (registered again, waiting for the rest) is
// not stopped by the next gang restart: it joins the new gang as it is.
TEST_F(GangTest, AMemberThatHasNotStartedJoinsTheNewGangAsItIs) {
  InitGang({{"tony.worker.max-restarts", "2"}});
  job_->OnContainerCompleted("c_worker:1", kExitPreempted, "preempted", false);
  Exit(kW0, 143);
  RegisterAgain(kW0, 2000);
  EXPECT_EQ(State(kW0), TaskState::kRegistered);
  job_->OnContainerAllocated("c_new", "worker", "h2", "/l");
  // The new container ends before its executor registers: worker:1's own failure.
  job_->OnContainerCompleted("c_new", 1, "launch failed", true);
  EXPECT_EQ(job_->gang_restarts(), 2);
  EXPECT_EQ(State(kW0), TaskState::kRegistered);
  EXPECT_EQ(job_->Find(kW0)->attempt, 1) << "nothing of it ran";
  EXPECT_TRUE(job_->Find(kW0)->gang_restart.empty());
  EXPECT_EQ(State(kW1), TaskState::kRequested);
}

// A member told to run again in its container whose executor leaves instead (it could not start
// the command again, or was stopped) gets a new container: no second failure, no second restart.
TEST_F(GangTest, AMemberWhoseExecutorLeftBeforeRunningAgainGetsANewContainer) {
  InitGang();
  Exit(kW1, 3);
  ASSERT_EQ(State(kW1), TaskState::kAllocated);
  Actions actions = job_->OnContainerCompleted("c_worker:1", 0, "", false);
  EXPECT_EQ(Count<RequestContainer>(actions), 1);
  EXPECT_EQ(State(kW1), TaskState::kRequested);
  EXPECT_EQ(job_->Find(kW1)->restarts_used, 1);
  EXPECT_EQ(job_->Find(kW1)->attempt, 1);
  EXPECT_EQ(job_->gang_restarts(), 1);
  EXPECT_EQ(job_->state(), JobState::kRunning);
}

// An executor that was itself told to stop reports provisionally and goes: its task restarts in a
// new container even when the container's end is late.
TEST_F(GangTest, AStoppingExecutorsTaskRestartsInANewContainer) {
  InitGang();
  job_->OnExecutorResult(kW1, "c_worker:1", 143, "", /*provisional=*/true,
                         /*executor_stopping=*/true);
  clock_.Advance(kProvisionalResultWaitMs);
  Actions actions = job_->OnTick();
  EXPECT_EQ(Count<RequestContainer>(actions), 1);
  EXPECT_EQ(State(kW1), TaskState::kRequested);
}

// The allocation timeout of a restarted gang counts from its restart, not from the job's start.
TEST_F(GangTest, TheAllocationTimeoutCountsFromTheRestart) {
  InitGang({{"tony.container.allocation.timeout", "10000"}, {"tony.worker.max-restarts", "0"}});
  clock_.Advance(60000);
  job_->OnContainerCompleted("c_worker:1", kExitAborted, "node lost", false);
  Exit(kW0, 143);
  EXPECT_EQ(job_->OnTick().size(), 0u);
  EXPECT_EQ(job_->state(), JobState::kRunning);
  clock_.Advance(10000);
  job_->OnTick();
  EXPECT_EQ(job_->state(), JobState::kFailed);
  EXPECT_NE(job_->diagnostics().find("worker:1 (no container)"), std::string::npos);
}

// The cluster warns that it will preempt a container: its task is stopped first (it can
// checkpoint), its end counts as preempted whatever its exit code (no restart used), and it
// restarts in a new container, the gang with it.
TEST_F(GangTest, APreemptionWarningStopsTheTaskFirstAndItRestartsElsewhereForFree) {
  InitGang({{"tony.worker.max-restarts", "0"}});
  EXPECT_TRUE(job_->OnPreemptionNotice("c_worker:1").empty());
  const HeartbeatAnswer answer = Beat(kW1);
  EXPECT_TRUE(answer.stop);
  EXPECT_NE(answer.reason.find("the cluster preempts its container c_worker:1"), std::string::npos);
  EXPECT_FALSE(Beat(kW0).stop);
  ASSERT_NE(LastEvent("PREEMPTING"), nullptr);
  Actions actions = Exit(kW1, 0);  // it checkpointed and exited cleanly on SIGTERM
  EXPECT_EQ(Count<StopContainer>(actions), 1) << "the container goes back at once";
  EXPECT_EQ(Count<RequestContainer>(actions), 1);
  EXPECT_EQ(State(kW1), TaskState::kRequested);
  EXPECT_EQ(job_->Find(kW1)->previous_attempts.back().exit_code, kExitPreempted);
  EXPECT_EQ(job_->Find(kW1)->free_restarts, 1);
  EXPECT_EQ(job_->gang_restarts(), 1);
  EXPECT_TRUE(Beat(kW0).stop) << "the rest of the gang restarts with it";
}

TEST_F(JobStateTest, APreemptionWarningUnderPolicyTaskRestartsTheTaskAloneForFree) {
  Init({{"tony.worker.instances", "2"},
        {"tony.worker.restart-policy", "task"},
        {"tony.worker.restart-backoff-ms", "0"}});
  StartAll();
  job_->OnPreemptionNotice("c_worker:0");
  EXPECT_TRUE(job_->OnHeartbeat(kW0, "c_worker:0", HeartbeatReport{}).stop);
  Exit(kW0, 143);
  EXPECT_EQ(State(kW0), TaskState::kRequested);
  EXPECT_EQ(job_->Find(kW0)->previous_attempts.back().exit_code, kExitPreempted);
  EXPECT_EQ(job_->Find(kW0)->restarts_used, 0);
  EXPECT_EQ(job_->state(), JobState::kRunning) << "the chief was preempted, not failed";
}

// A task killed over its memory restarts once with its memory grown (tony.<type>.memory-growth),
// using no restart; its new container is asked for at that size and goes to it.
TEST_F(JobStateTest, ATaskKilledOverItsMemoryRestartsOnceWithMore) {
  Init({{"tony.worker.instances", "2"},
        {"tony.worker.memory", "1000m"},
        {"tony.worker.memory-growth", "1.5"},
        {"tony.worker.restart-policy", "task"},
        {"tony.worker.restart-backoff-ms", "0"}});
  StartAll();
  Actions actions =
      job_->OnContainerCompleted("c_worker:1", kExitOverPhysicalMemory, "over its memory", false);
  ASSERT_EQ(Count<RequestContainer>(actions), 1);
  for (const Action& action : actions) {
    if (const auto* request = std::get_if<RequestContainer>(&action)) {
      EXPECT_EQ(request->memory_mb, 1500);
    }
  }
  const TaskRecord* task = job_->Find(kW1);
  EXPECT_EQ(task->memory_mb, 1500);
  EXPECT_EQ(task->restarts_used, 0);
  EXPECT_NE(task->previous_attempts.back().diagnostics.find(
                "restarted with 1500 MB instead of 1000 MB (tony.worker.memory-growth = 1.5)"),
            std::string::npos)
      << task->previous_attempts.back().diagnostics;
  // A container of the type's size does not go to it; one of its size does.
  job_->OnContainerAllocated("c_small", "worker", "h", "/l", 1000);
  EXPECT_EQ(task->container_id, "c_small") << "no other task waits: any size will do";
  // Killed over its memory again: that counts, and with no restart left the job fails.
  ASSERT_TRUE(job_->OnTaskRegistered(kW1, "c_small", "h", 1234).ok());
  job_->OnContainerCompleted("c_small", kExitOverPhysicalMemory, "over its memory", false);
  EXPECT_EQ(State(kW1), TaskState::kFailed);
}

TEST_F(JobStateTest, AGrownContainerGoesToTheTaskThatAskedForIt) {
  Init({{"tony.worker.instances", "2"},
        {"tony.worker.memory", "1000m"},
        {"tony.worker.memory-growth", "2"},
        {"tony.worker.max-restarts", "1"},
        {"tony.worker.restart-policy", "task"},
        {"tony.worker.restart-backoff-ms", "0"}});
  StartAll();
  job_->OnContainerCompleted("c_worker:0", 3, "boom", false);  // restarts at 1000 MB
  job_->OnContainerCompleted("c_worker:1", kExitOverVirtualMemory, "over", false);  // at 2000
  job_->OnContainerAllocated("c_big", "worker", "h", "/l", 2000);
  EXPECT_EQ(job_->Find(kW1)->container_id, "c_big");
  job_->OnContainerAllocated("c_small", "worker", "h", "/l", 1000);
  EXPECT_EQ(job_->Find(kW0)->container_id, "c_small");
}

// The executors' answers: run again, in place, as the next attempt; a provisional result (the
// user process killed from outside) is answered once it stands, and its executor runs again.
TEST_F(GangTest, ResultRepliesSayWhoRunsAgainAndHoldProvisionalResults) {
  InitGang();
  ResultReplies replies(job_.get());
  struct Answer {
    rpc::ReportResultResponse response;
    int sent = 0;
  };
  auto reply = [](Answer* answer) {
    return Reply<rpc::ReportResultResponse>(&answer->response,
                                            [answer](const absl::Status&) { ++answer->sent; });
  };
  Answer first;
  job_->OnExecutorResult(kW1, "c_worker:1", 137, "killed", /*provisional=*/true);
  replies.Answer(kW1, "c_worker:1", reply(&first));
  EXPECT_EQ(first.sent, 0) << "held while the container's end may still say why";
  EXPECT_EQ(replies.held(), 1u);
  clock_.Advance(kProvisionalResultWaitMs);
  job_->OnTick();
  replies.Poll();
  ASSERT_EQ(first.sent, 1);
  EXPECT_TRUE(first.response.run_again());
  EXPECT_EQ(first.response.attempt(), 1);

  Answer second;
  Exit(kW0, 143);
  replies.Answer(kW0, "c_worker:0", reply(&second));
  ASSERT_EQ(second.sent, 1);
  EXPECT_TRUE(second.response.run_again());

  // Once the job is decided, nobody runs again.
  RegisterAgain(kW0, 2000);
  RegisterAgain(kW1, 2001);
  job_->Kill("enough");
  Answer last;
  replies.Answer(kW0, "c_worker:0", reply(&last));
  ASSERT_EQ(last.sent, 1);
  EXPECT_FALSE(last.response.run_again());
}

}  // namespace
}  // namespace tony::am
