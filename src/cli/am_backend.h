#pragma once
// The AM's backend, built from what the backend gave its container (the launch contract of
// rpc/launch_contract.h, the container's credentials or the job directory): the allocator and the
// options the ApplicationMaster runs with. RunAm only wires these together.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "am/application_master.h"
#include "cluster/container_allocator.h"
#include "config/job_spec.h"
#include "rpc/launch_contract.h"

namespace tony::cli {

struct AmBackend {
  std::unique_ptr<cluster::ContainerAllocator> allocator;
  am::AmOptions options;
};

// YARN: from the AM container's credentials (the job secret, TLS key, AMRMToken, HDFS tokens) and
// environment (the scheduler, staging directory, web proxy, keytab). Errors name what is missing.
absl::StatusOr<AmBackend> YarnAmBackend(const rpc::AmLaunch& launch, const config::JobSpec& spec);

// The local backend: from the job directory (its credentials and staged files).
absl::StatusOr<AmBackend> LocalAmBackend(const rpc::AmLaunch& launch, const std::string& job_dir,
                                         const config::JobSpec& spec, int am_attempt);

}  // namespace tony::cli
