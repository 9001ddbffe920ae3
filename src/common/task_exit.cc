#include "common/task_exit.h"

#include "common/strings.h"

namespace tony {

std::string ExitText(int exit_code) {
  if (exit_code == kExitLostHeartbeat) return "lost heartbeat";
  if (exit_code == kExitHung) return "hung";
  if (exit_code == kExitGangRestart) return "stopped for a gang restart";
  switch (exit_code) {
    case kExitAborted:
      return "aborted (its node lost, or the container released)";
    case kExitDisksFailed:
      return "its node's disks failed";
    case kExitPreempted:
      return "preempted";
    case kExitOverVirtualMemory:
      return "killed over its virtual memory";
    case kExitOverPhysicalMemory:
      return "killed over its memory";
    default:
      break;
  }
  if (exit_code > 128 && exit_code < 128 + 65) return StrCat("killed by signal ", exit_code - 128);
  return StrCat("exit code ", exit_code);
}

}  // namespace tony
