#pragma once
// How a task attempt ended, as its exit code says: the shell's codes (128 + signal), YARN's
// container exit statuses where the cluster ended the container, and tony's own for the ends the
// AM decides. Shared by the AM (which decides) and the client (which reports).

#include <string>

namespace tony {

// YARN's ContainerExitStatus values where the cluster, not the task, ended the container.
inline constexpr int kExitAborted = -100;  // released, or lost with its node
inline constexpr int kExitDisksFailed = -101;
inline constexpr int kExitPreempted = -102;
inline constexpr int kExitOverVirtualMemory = -103;
inline constexpr int kExitOverPhysicalMemory = -104;

// Exit code TonY gives a task whose heartbeats stopped.
inline constexpr int kExitLostHeartbeat = -1000;
// Exit code of a task stopped because it was hung (tony.task.hang-timeout-ms).
inline constexpr int kExitHung = -1001;
// Exit code of a task stopped because its gang restarts (tony.<type>.restart-policy gang).
inline constexpr int kExitGangRestart = -1002;

// "exit code 3", "killed by signal 9", "lost heartbeat", "preempted", ...
std::string ExitText(int exit_code);

}  // namespace tony
