#pragma once
// `--output json` of `tony submit`, `tony status` and `tony list`: what the text output shows, as
// JSON for programs (the Python API in python/ reads it). Each document is one line. Names are
// the text output's: states as `tony status` prints them, times in ms since the epoch, sizes in
// bytes. The format is in docs/running-jobs.md ("Machine-readable output").

#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster_client.h"
#include "rpc/tony.pb.h"

namespace tony::client {

// "SUBMITTED", "RUNNING", "FINISHED", "FAILED", "KILLED": the backend's word on the application.
std::string_view AppStateName(cluster::AppState state);

// The job: its state, diagnostics, times, output directory and tasks, with the backend's report
// (state, final status, tracking URL, AM attempt) where `report` is given.
std::string JobJson(const rpc::JobStatus& status, const cluster::AppReport* report);

// `tony submit --output json`: its line once the job is submitted ({"event": "submitted", ...})
// and its line when the job has ended ({"event": "ended", "exit_code": N, "job": JobJson's}).
std::string SubmittedJson(const std::string& app_id, const std::string& backend,
                          const std::string& job_dir, const std::string& output_dir);
std::string EndedJson(const rpc::JobStatus& status, int exit_code);

// The backend's applications, as `tony list` shows them.
std::string JobListJson(const std::vector<cluster::AppReport>& apps);

}  // namespace tony::client
