#pragma once
// For the client's unit tests: a backend that answers GetReport from a script (each call takes
// the next report; the last one repeats) and records what it was asked.

#include <deque>
#include <string>
#include <vector>

#include "cluster/cluster_client.h"

namespace tony::client {

class ScriptedCluster final : public cluster::ClusterClient {
 public:
  // Job directories go under `root` ("/nonexistent" for tests that stage nothing).
  explicit ScriptedCluster(std::string root = "/nonexistent") : root_(std::move(root)) {}

  absl::StatusOr<std::string> NewApplicationId() override { return std::string(kAppId); }
  std::string JobDir(const std::string& app_id) const override { return root_ + "/jobs/" + app_id; }
  absl::Status Submit(const cluster::AmSubmission&) override {
    submitted = true;
    return submit_status;
  }
  absl::StatusOr<cluster::AppReport> GetReport(const std::string& app_id) override {
    ++report_calls;
    cluster::AppReport report = reports.empty() ? cluster::AppReport{} : reports.front();
    if (reports.size() > 1) reports.pop_front();
    report.app_id = app_id;
    return report;
  }
  absl::Status Kill(const std::string&, bool force) override {
    kills.push_back(force);
    return absl::OkStatus();
  }
  absl::Status AwaitAmExit(const std::string&, int64_t) override { return absl::OkStatus(); }
  absl::StatusOr<cluster::RemoteFileInfo> StatRemote(const std::string&) override {
    return cluster::RemoteFileInfo{};
  }
  absl::StatusOr<std::string> OutputDir(const std::string& app_id,
                                        const std::string& requested) override {
    return requested.empty() ? JobDir(app_id) + "/outputs" : requested;
  }
  absl::Status MakeOutputDir(const std::string& dir) override {
    made_output_dir = dir;
    return make_output_dir_status;
  }
  absl::StatusOr<std::vector<cluster::AppReport>> ListApplications(const std::string&,
                                                                   bool) override {
    return std::vector<cluster::AppReport>{};
  }

  static constexpr char kAppId[] = "application_1_0001";
  std::deque<cluster::AppReport> reports;  // an empty one answers kSubmitted
  int report_calls = 0;
  bool submitted = false;
  std::vector<bool> kills;  // `force` of each Kill
  std::string made_output_dir;
  absl::Status submit_status;           // what Submit answers
  absl::Status make_output_dir_status;  // what MakeOutputDir answers

 private:
  const std::string root_;
};

}  // namespace tony::client
