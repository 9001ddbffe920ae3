#pragma once
// Following a submitted job until it is complete: find its AM through the backend, watch its
// status, print progress, turn an interrupt into a kill, follow a retried AM attempt, and read
// the backend's record when the AM is gone. The AM and time are seams (AmSession, Clock and a
// sleep function), so tests drive every path with a fake AM and a fake clock.
//
// Threads: Follow() on one thread; Interrupt() from any other (the client's signal thread).

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cluster/cluster_client.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "config/job_spec.h"
#include "rpc/job_credentials.h"
#include "rpc/tony.pb.h"

namespace tony::client {

// The client's calls to one AM. Errors carry gRPC's codes as absl codes (they are the same).
class AmSession {
 public:
  virtual ~AmSession() = default;
  // The job's status once its version exceeds `after_version`, or the current one after
  // `max_wait_ms`.
  virtual absl::StatusOr<rpc::JobStatus> Watch(int64_t after_version, int64_t max_wait_ms) = 0;
  virtual absl::Status Kill(const std::string& reason) = 0;
  // Tells the AM that the client has the final status, so that it may exit.
  virtual absl::Status Acknowledge() = 0;
  // Thread-safe: ends a Watch in flight with kCancelled.
  virtual void Cancel() = 0;
};

// Opens a session with the AM at "host:port".
using AmConnector = std::function<std::unique_ptr<AmSession>(const std::string& address)>;

// The real AM over gRPC, with the job's credential and the AM's certificate (if any).
AmConnector GrpcAmConnector(const rpc::JobCredentials& credentials);

struct FollowerEnv {
  const Clock* clock = nullptr;
  std::function<void(int64_t ms)> sleep;  // waits that much time
  AmConnector connect;
};

// The real clock and sleep, and GrpcAmConnector.
FollowerEnv SystemFollowerEnv(const rpc::JobCredentials& credentials);

class JobFollower {
 public:
  JobFollower(cluster::ClusterClient* cluster, FollowerEnv env, std::ostream& out);

  // Follows `app_id` until it is complete and returns its final status. Progress, the tracking
  // URL, TensorBoard's URL and hints go to `out`.
  rpc::JobStatus Follow(const std::string& app_id, const config::JobSpec& spec);

  // Thread-safe: the user asked to stop (SIGINT or SIGTERM). The job is killed through its AM,
  // or the backend, and forcibly once stop_grace_ms + 10 s have passed.
  void Interrupt(int sig);
  int interrupted() const { return interrupted_; }

 private:
  enum class Step { kContinue, kDone };

  // Sends the kill once after an interrupt; after its deadline, ends the job by force.
  Step HandleInterrupt(const std::string& app_id, const config::JobSpec& spec);
  // Without an AM session: asks the backend where the AM listens (backing off), or for the
  // final record of a job that ended before the AM was seen.
  Step FindAm(const std::string& app_id, const config::JobSpec& spec);
  // One WatchJob call and what follows from its answer.
  Step Watch(const std::string& app_id);
  // The AM says the job is complete: whether the cluster has since started another attempt, whose
  // AM the client follows instead (the session is dropped).
  bool Superseded(const std::string& app_id);
  // Drops the session with an AM the cluster no longer counts: the next round finds the current
  // attempt's AM, whose job and status versions start over.
  void FollowNextAttempt();
  void ShowProgress(const rpc::JobStatus& status);
  void SetSession(std::unique_ptr<AmSession> session);

  cluster::ClusterClient* const cluster_;
  const FollowerEnv env_;
  std::ostream& out_;
  std::atomic<int> interrupted_{0};
  Mutex mu_;
  // Written by Follow only, under mu_; read by Interrupt under mu_ and by Follow without it.
  std::shared_ptr<AmSession> session_;

  // Follow()'s state.
  rpc::JobStatus last_;
  int64_t started_ms_ = 0;
  std::string am_address_;
  int attempt_ = 0;            // the AM attempt `session_` talks to
  bool adopts_tasks_ = false;  // a later AM attempt takes up the running tasks
  bool kill_sent_ = false;
  int64_t kill_deadline_ms_ = 0;
  std::string progress_;
  bool lingering_hinted_ = false;  // said once per job
  std::string tensorboard_url_;    // the last one printed
  int64_t address_poll_ms_ = 20;
  bool asked_ended_am_ = false;
  // When the AM last answered (or was found), and whether the client has said it went silent.
  int64_t last_answer_ms_ = 0;
  bool said_silent_ = false;
};

}  // namespace tony::client
