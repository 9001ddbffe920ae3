#pragma once
// For tests: a field of /proc/<pid>/status in kB.

#include <sys/types.h>

#include <fstream>
#include <limits>
#include <string>
#include <string_view>

namespace tony {

// The value of `field` (e.g. "VmRSS", "RssFile") of /proc/<pid>/status in kB, or -1.
inline long StatusKb(pid_t pid, std::string_view field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  const std::string wanted = std::string(field) + ":";
  std::string key;
  long kb = -1;
  while (status >> key) {
    if (key == wanted && status >> kb) return kb;
    status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return -1;
}

}  // namespace tony
