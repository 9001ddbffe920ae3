// Settings of the AM's own process, for a job of thousands of tasks.
#pragma once

#include <string>

namespace tony::am {

// Called first in the AM's process, before it starts any thread: at most two malloc arenas.
void LimitMallocArenas();

// Raises the soft limit on open files for a job of `tasks` (a connection each), and warns in the
// log, naming `app_id`, when it cannot be raised far enough. Processes started later with Spawn
// get the limit as it was.
void RaiseOpenFileLimitForTasks(const std::string& app_id, int tasks);

}  // namespace tony::am
