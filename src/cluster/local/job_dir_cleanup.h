#pragma once
// Removing what a local job no longer needs once it has ended: the containers' working
// directories (the unpacked source, venv and resources of every task), the job's secrets/, and
// the files the client staged (src.zip, venv.zip, resources/). Logs, final-status.json,
// tony-final.xml and am.log stay.
//
// Threads: any thread; no state.

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tony::cluster {

// Removes `path` and everything below it; a missing path is no error. Directories the owner
// cannot write (a task may leave some) are made writable and the removal retried, so that what
// a job's own user wrote can always be removed. The error names the path and the reason.
[[nodiscard]] absl::Status RemoveTree(const std::string& path);

// Removes <job_dir>/containers/ (every working directory in it) and <job_dir>/secrets/, and,
// with `staged_files`, <job_dir>/src.zip, venv.zip and resources/. REQUIRES: no process of the
// job still runs in them. Returns the errors, one per path that could not be removed.
std::vector<absl::Status> RemoveJobWorkFiles(const std::string& job_dir, bool staged_files);

}  // namespace tony::cluster
