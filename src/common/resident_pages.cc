#include "common/resident_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tony {

long ReleaseCleanFilePages() {
  struct Mapping {
    uintptr_t start = 0, end = 0;
    bool candidate = false;  // a read-only mapping of a file
    long rss_kb = 0;
    long anonymous_kb = 0;
  };
  std::vector<Mapping> mappings;
  {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    while (std::getline(smaps, line)) {
      std::istringstream fields(line);
      std::string first;
      fields >> first;
      if (first.empty()) continue;
      if (first.back() != ':') {  // "start-end perms offset dev inode [path]"
        Mapping mapping;
        char dash = 0;
        std::istringstream range(first);
        range >> std::hex >> mapping.start >> dash >> mapping.end;
        std::string perms, offset, device, inode, path;
        fields >> perms >> offset >> device >> inode >> path;
        mapping.candidate = !path.empty() && path.front() == '/' && perms.size() >= 2 &&
                            perms[0] == 'r' && perms[1] == '-';
        mappings.push_back(mapping);
      } else if (!mappings.empty() && (first == "Rss:" || first == "Anonymous:")) {
        long kb = 0;
        fields >> kb;
        (first == "Rss:" ? mappings.back().rss_kb : mappings.back().anonymous_kb) = kb;
      }
    }
  }
  long released_kb = 0;
  for (const Mapping& mapping : mappings) {
    if (!mapping.candidate || mapping.anonymous_kb != 0 || mapping.rss_kb == 0) continue;
    // NOLINTNEXTLINE(performance-no-int-to-ptr): an address /proc/self/smaps names
    if (madvise(reinterpret_cast<void*>(mapping.start), mapping.end - mapping.start,
                MADV_DONTNEED) == 0) {
      released_kb += mapping.rss_kb;
    }
  }
  return released_kb;
}

}  // namespace tony
