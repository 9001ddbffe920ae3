#pragma once
// What the executor derives from its options, the job and the AM's cluster spec for the user
// process: the framework's task context and how the process is spawned. Pure functions.

#include <string>

#include "common/process.h"
#include "config/job_spec.h"
#include "executor/task_executor.h"
#include "rpc/tony.pb.h"
#include "runtime/runtime.h"

namespace tony::executor {

// An elastic worker's torchrun --max_restarts when tony.application.max-gang-restarts is unset: as
// many as a task is restarted for the cluster's doing (the AM's kMaxFreeRestarts).
inline constexpr int kElasticDefaultMaxRestarts = 100;

// The context the framework runtimes build the task's environment from. The Horovod driver's
// output path and the TensorBoard port are left to the caller (they reserve resources).
// The CPUs this process may run on.
int AvailableCpus();

// The task's OMP_NUM_THREADS (runtime::TaskContext::cpu_threads) on a host of `cpus` CPUs: its
// type's vcores on YARN and where tony.local.vcores is set; locally otherwise the machine's CPUs
// shared by the job's tasks; 0 (left alone) where the environment sets it already or the task's
// command runs torchrun, which gives each of its processes its own.
int MathThreads(const ExecutorOptions& options, const config::JobSpec& spec, int cpus);

// Where the task writes its outputs (TONY_OUTPUT_DIR) for the job's `output_dir`
// (JobSpec::output_dir as the client resolved it): that directory when it is a local path or a
// file:// URI; for a directory on HDFS, tony-outputs/ in `working_dir`, which the executor copies
// there when the task's process has ended. "" when the job names none.
std::string LocalOutputDir(const std::string& output_dir, const std::string& working_dir);
// Whether the job's outputs go to HDFS through the executor's copy (see above).
bool OutputsUploaded(const std::string& output_dir);

// The task's context, but for its TONY_OUTPUT_DIR (output_dir: LocalOutputDir's, of the working
// directory).
runtime::TaskContext TaskContextFor(const ExecutorOptions& options, const config::JobSpec& spec,
                                    const rpc::WaitClusterSpecResponse& cluster);

// `command` under /bin/sh with `environment` (over Hadoop's client environment on YARN), none of
// tony's launch contract, and its output in the log directory.
SpawnOptions UserProcessSpawn(const ExecutorOptions& options, const std::string& command,
                              const runtime::Environment& environment);

}  // namespace tony::executor
