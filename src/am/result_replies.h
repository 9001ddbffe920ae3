#pragma once
// The AM's answers to executors' results (ReportResult). The answer says whether the task runs
// again in its container (its gang restarts) and as which attempt. A provisional result waits for
// its container's end, or for kProvisionalResultWaitMs, before the state machine takes it; its
// executor's call is held until then, so that an executor whose task was killed from outside
// (not by the container's owner) is still there to run it again.
//
// Threads: the AM's loop only.

#include <string>
#include <vector>

#include "am/am_reply.h"
#include "am/job_state.h"
#include "rpc/tony.pb.h"

namespace tony::am {

class ResultReplies {
 public:
  explicit ResultReplies(const JobStateMachine* job) : job_(job) {}

  // Answers the executor of `task` in `container_id`, whose result the state machine has been
  // given: now, unless that result waits for the container's end.
  void Answer(const TaskRef& task, const std::string& container_id,
              Reply<rpc::ReportResultResponse> reply);
  // Answers the held calls whose result has been taken since.
  void Poll();
  // The container ended: its executor is gone, nothing runs again there.
  void ContainerEnded(const std::string& container_id);
  // Answers every held call: nothing runs again (the AM is ending).
  void AnswerAll();
  size_t held() const { return held_.size(); }

 private:
  struct Held {
    TaskRef task;
    std::string container_id;
    Reply<rpc::ReportResultResponse> reply;
  };
  // Whether the result waits; if not, fills the answer and sends it.
  bool Waits(const TaskRef& task, const std::string& container_id,
             Reply<rpc::ReportResultResponse>& reply) const;

  const JobStateMachine* const job_;
  std::vector<Held> held_;
};

}  // namespace tony::am
