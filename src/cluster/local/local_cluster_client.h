#pragma once
// The client side of the local backend: application ids from a counter under $TONY_HOME, the
// AM started as a session of its own in the job's directory, reports read from the files the AM
// writes there (am.address, final-status.json), and kill by signal. An AM that ends without a
// final status is started again while attempts remain (AmSubmission::max_attempts, as YARN does),
// after every process of the failed attempt is killed; it runs with TONY_AM_ATTEMPT=<n>.
//
// Threads: one caller at a time.

#include <sys/types.h>

#include <map>
#include <string>

#include "cluster/cluster_client.h"
#include "common/clock.h"

namespace tony::cluster {

class LocalClusterClient final : public ClusterClient {
 public:
  explicit LocalClusterClient(std::string tony_home, const Clock* clock = SystemClock::Get());

  absl::StatusOr<std::string> NewApplicationId() override;
  std::string JobDir(const std::string& app_id) const override;
  absl::Status Submit(const AmSubmission& submission) override;
  absl::StatusOr<AppReport> GetReport(const std::string& app_id) override;
  absl::Status Kill(const std::string& app_id, bool force) override;
  absl::Status AwaitAmExit(const std::string& app_id, int64_t timeout_ms) override;
  absl::StatusOr<RemoteFileInfo> StatRemote(const std::string& uri) override;
  absl::StatusOr<std::string> OutputDir(const std::string& app_id,
                                        const std::string& requested) override;
  absl::Status MakeOutputDir(const std::string& dir) override;
  absl::StatusOr<std::vector<AppReport>> ListApplications(const std::string& application_type,
                                                          bool include_ended) override;

  // Kills every process that carries the job's marker, TONY_JOB_DIR=<job dir>, whatever became
  // of its parents. The job directory, unlike the application id, is unique on this machine even
  // across TONY_HOMEs. Returns how many process trees were signalled.
  static int KillLeftovers(const std::string& job_dir);

 private:
  struct Submitted {
    AmSubmission submission;
    int attempt = 1;  // of the AM now running (or last run)
  };

  pid_t AmPid(const std::string& app_id) const;
  // Starts attempt `submitted.attempt` of the AM.
  absl::Status SpawnAm(const Submitted& submitted);
  // After the AM of `app_id` ended without a final status: starts its next attempt, if any.
  bool RetryAm(const std::string& app_id);

  const std::string tony_home_;
  const Clock* const clock_;
  std::map<std::string, pid_t> children_;       // AMs this client started, by app id
  std::map<std::string, std::string> exits_;    // how those AMs exited, once reaped
  std::map<std::string, Submitted> submitted_;  // by app id, for AM retries
};

}  // namespace tony::cluster
