#include "common/resident_pages.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace tony {
namespace {

struct Walk {
  uintptr_t page = 0;
  uintptr_t vdso = 0;  // the kernel's own object: not a file's pages
  long released_kb = 0;
};

int ReleaseObject(dl_phdr_info* info, size_t /*size*/, void* data) {
  Walk& walk = *static_cast<Walk*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || (segment.p_flags & PF_W) != 0) continue;
    const uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    const uintptr_t end = begin + segment.p_memsz;
    if (walk.vdso != 0 && walk.vdso >= begin && walk.vdso < end) continue;
    // Whole pages of the segment only: a page it shares with a neighbour stays.
    const uintptr_t first = (begin + walk.page - 1) & ~(walk.page - 1);
    const uintptr_t last = end & ~(walk.page - 1);
    if (last <= first) continue;
    // NOLINTNEXTLINE(performance-no-int-to-ptr): an address the dynamic loader names
    if (madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) == 0) {
      walk.released_kb += static_cast<long>((last - first) / 1024);
    }
  }
  return 0;
}

}  // namespace

long ReleaseCleanFilePages() {
  Walk walk;
  walk.page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  walk.vdso = static_cast<uintptr_t>(getauxval(AT_SYSINFO_EHDR));
  dl_iterate_phdr(ReleaseObject, &walk);
  return walk.released_kb;
}

}  // namespace tony
