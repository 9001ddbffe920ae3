#pragma once
// What a task's sandbox hides from the user's command (common/process.h, Sandbox): everything on
// disk that would let it act for another task, the client or the AM. Pure functions.
//
// Local backend: the job directory's secret, TLS key, AM pid and the executors' credential files,
// and every other job's directory ($TONY_HOME/jobs is covered, this job's directory kept).
// YARN: every other container's directory of this application and every other application's
// (the NodeManager's appcache/ is covered, the application's filecache/ and the task's own
// container kept), the NodeManager's nmPrivate/ (where DefaultContainerExecutor's containers run
// as the NodeManager's user), and the jobs of a tony client on the same host ($TONY_HOME/jobs).

#include <string>
#include <vector>

#include "common/process.h"

namespace tony::executor {

struct SandboxInputs {
  std::string working_dir;              // the command's
  std::string job_dir;                  // TONY_JOB_DIR: the local backend's job directory
  std::vector<std::string> local_dirs;  // YARN's LOCAL_DIRS: <root>/usercache/<u>/appcache/<app>
  std::string container_id;             // YARN's container id
  std::string tony_home;                // the user's TONY_HOME, or ~/.tony
};

// The inputs from the executor's environment (TONY_JOB_DIR, LOCAL_DIRS, CONTAINER_ID, TONY_HOME,
// HOME) and working directory.
[[nodiscard]] SandboxInputs SandboxInputsFromEnvironment();

// The covers of the task's sandbox; status_fd is left for the caller.
[[nodiscard]] Sandbox TaskSandbox(const SandboxInputs& inputs);

}  // namespace tony::executor
