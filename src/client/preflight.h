#pragma once
// Checks of a job's inputs before anything starts: the entry point, the interpreter, the venv and
// source archives, declared resources (local, or hdfs:// through the backend). Each error is one
// line naming what is wrong.

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cluster/cluster_client.h"
#include "config/job_spec.h"

namespace tony::client {

// `working_dir` is where relative paths given on the command line are resolved; hdfs:// inputs
// are looked up through `cluster` (NotFound / InvalidArgument: the user's mistake).
[[nodiscard]] absl::Status CheckInputs(const config::JobSpec& spec, const std::string& working_dir,
                                       cluster::ClusterClient& cluster);

// TonY leaves out --hdfs_classpath entries that do not exist: each one that the cluster says is
// not there is removed from `spec` (every job type's resources) and from `conf`
// (tony.containers.resources, which the AM reads). Returns a warning line for each.
std::vector<std::string> DropMissingHdfsClasspath(config::JobSpec* spec,
                                                  config::Configuration* conf,
                                                  cluster::ClusterClient& cluster);

// Resolves a program name the way a shell would (PATH), or "" if not found.
std::string FindInPath(const std::string& program);

// A path of the job's inputs as the user gave it (--src_dir, --python_venv, resources): relative
// to the submit's working directory unless absolute.
std::filesystem::path ResolveInputPath(const std::string& working_dir, const std::string& path);

}  // namespace tony::client
