#pragma once
// `tony list`, `tony status` and `tony kill`: jobs seen from outside the client that submitted it,
// through the backend's report and, where this machine holds the job's secret, its AM.

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "cluster/cluster_client.h"
#include "rpc/job_credentials.h"
#include "rpc/tony.pb.h"

namespace tony::client {

// A job's status as the backend's report tells it: the AM's last word on the tasks where the
// report carries one (else `last_seen`), with the report's final state and diagnostics.
rpc::JobStatus StatusFromReport(const std::string& app_id, const cluster::AppReport& report,
                                const rpc::JobStatus& last_seen);

struct JobControlOptions {
  std::string app_id;
  // The job's, from the submitting machine's job directory; the secret may be "".
  rpc::JobCredentials credentials;
  int64_t stop_grace_ms = 0;  // the job's tony.task.stop-grace-ms
  bool json = false;          // --output json (job_json.h)
  // The job's history's job.json, for an ended job whose backend report carries no task table
  // (YARN's); unset or nullopt: none.
  std::function<std::optional<std::string>()> recorded_job_json;
};

// The status job.json holds (its "status", the AM's JobStatus); nullopt if it has none.
std::optional<rpc::JobStatus> StatusFromJobJson(const std::string& job_json);

// The job's status now: the backend's final word once it ended, else the AM's (where the secret
// allows), else what the backend's report alone tells (running or not, no tasks).
rpc::JobStatus CurrentStatus(const cluster::AppReport& report, const JobControlOptions& options);

// Prints the job's state, its tracking URL and, when known, the table of its tasks (with `json`
// one JSON object, job_json.h, of CurrentStatus and the report). Exit code 0,
// or 2 for an application the backend does not know, 1 if the backend cannot be asked.
int ShowJob(cluster::ClusterClient& cluster, const JobControlOptions& options, std::ostream& out,
            std::ostream& err);

// Kills the job: asks its AM to stop it (the tasks get their grace period and the job ends
// KILLED) where the secret allows, else has the backend stop the AM; kills what is left if the
// job has not ended `stop_grace_ms` + 15 s later. A job that already ended is left as it is.
// Exit code 0, 2 for an unknown application, 1 if the job could not be killed.
int KillJob(cluster::ClusterClient& cluster, const JobControlOptions& options, std::ostream& out,
            std::ostream& err);

// Prints the backend's applications of `application_type` as a table (id, name, user, state,
// final status, tracking URL), or with `json` as one JSON array (job_json.h): those not ended,
// or all it knows with `include_ended`. Exit code 0, or 1 if the backend cannot be asked.
int ListJobs(cluster::ClusterClient& cluster, const std::string& application_type,
             bool include_ended, bool json, std::ostream& out, std::ostream& err);

}  // namespace tony::client
