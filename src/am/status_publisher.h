#pragma once
// The AM's account of the job to its clients and its status page: the JobStatus, its version,
// what the tasks told the AM besides their state (a TensorBoard URL, the last lines of output),
// and whether the job is complete (its final status recorded, or why it could not be). It renders
// the page when the job changed, at most once a second (a large job changes on every event), and
// every few seconds for new metric samples; the job's completion at once.
//
// Threads: the AM's loop only.

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "am/job_state.h"
#include "am/status_page.h"
#include "common/clock.h"
#include "rpc/tony.pb.h"

namespace tony::am {

class StatusPublisher {
 public:
  static constexpr int64_t kChangedEveryMs = 1000;
  static constexpr int64_t kUnchangedEveryMs = 5000;
  // Where the page goes (StatusPage::Update); unset: there is no page.
  using Render = std::function<void(const rpc::JobStatus&, const LiveHistory&)>;

  StatusPublisher(std::string app_id, const JobStateMachine* job, const LiveHistory* live,
                  const Clock* clock)
      : app_id_(std::move(app_id)), job_(job), live_(live), clock_(clock) {}

  void SetRender(Render render) { render_ = std::move(render); }

  // Grows with every change of the job or of its TensorBoard URL; odd once complete.
  int64_t Version() const { return (job_->version() + url_changes_) * 2 + (complete_ ? 1 : 0); }
  void Fill(rpc::JobStatus* status) const;
  // The record of the job that has ended, as JSON (for the resource manager).
  std::string FinalJson() const;

  // Returns whether the URL is new.
  bool SetTensorBoardUrl(const std::string& url);
  const std::string& tensorboard_url() const { return tensorboard_url_; }
  void SetOutputTail(const TaskRef& task, std::string tail) {
    output_tails_[task] = std::move(tail);
  }
  // The final status is recorded, or (`unsaved` not empty) could not be.
  void MarkComplete(std::string unsaved);
  bool complete() const { return complete_; }

  // Renders the page if it is due (see above).
  void MaybePublish();

 private:
  const std::string app_id_;
  const JobStateMachine* const job_;
  const LiveHistory* const live_;
  const Clock* const clock_;
  Render render_;
  std::string tensorboard_url_;
  int64_t url_changes_ = 0;
  std::map<TaskRef, std::string> output_tails_;  // the last lines each task printed, latest attempt
  bool complete_ = false;
  std::string final_status_unsaved_;  // why the allocator could not record it; "" = recorded
  int64_t page_version_ = -1;         // of the page's last rendering
  int64_t page_rendered_ms_ = 0;
};

}  // namespace tony::am
