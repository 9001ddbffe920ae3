#include "common/resident_pages.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <linux/userfaultfd.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string_view>

// Linux 6.7's, newer than Debian 12's headers.
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

namespace tony {
namespace {

// The pages of the read-only segments of the program and its libraries, as the dynamic loader
// lists them, but the kernel's own object (the vDSO): [first, last) per segment.
struct Walk {
  uintptr_t page = 0;
  uintptr_t vdso = 0;
  // Called with each segment's range; counts what it returns.
  long (*each)(uintptr_t first, uintptr_t last, int uffd) = nullptr;
  int uffd = -1;
  long total = 0;
};

int WalkObject(dl_phdr_info* info, size_t /*size*/, void* data) {
  Walk& walk = *static_cast<Walk*>(data);
  const uintptr_t mask = ~(walk.page - 1);
  // The pages that segment `i` is mapped on: the loader maps each whole page of it.
  auto pages = [&](int i, uintptr_t* first, uintptr_t* last) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    const uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    *first = begin & mask;
    *last = (begin + segment.p_memsz + walk.page - 1) & mask;
  };
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    // Not one that ends in zeros past its file's part: the loader wrote those into its last
    // file page, which is the process's own copy then.
    if (segment.p_type != PT_LOAD || (segment.p_flags & PF_W) != 0 ||
        segment.p_memsz != segment.p_filesz) {
      continue;
    }
    uintptr_t first = 0;
    uintptr_t last = 0;
    pages(i, &first, &last);
    if (walk.vdso != 0 && walk.vdso >= first && walk.vdso < last) continue;
    // Every page of the segment, so that its mapping stays one (a range that left out its partial
    // last page split each library's mappings in two, and the process's exit and forks went over
    // a third more of them); but a page that another segment is mapped on too is left alone.
    for (int j = 0; j < info->dlpi_phnum; ++j) {
      if (j == i || info->dlpi_phdr[j].p_type != PT_LOAD) continue;
      uintptr_t other_first = 0;
      uintptr_t other_last = 0;
      pages(j, &other_first, &other_last);
      if (other_first >= last || other_last <= first) continue;
      if (other_first <= first) {
        first = other_last;
      } else {
        last = other_first;
      }
    }
    if (last > first) walk.total += walk.each(first, last, walk.uffd);
  }
  return 0;
}

long WalkSegments(long (*each)(uintptr_t, uintptr_t, int), int uffd) {
  Walk walk;
  walk.page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  walk.vdso = static_cast<uintptr_t>(getauxval(AT_SYSINFO_EHDR));
  walk.each = each;
  walk.uffd = uffd;
  dl_iterate_phdr(WalkObject, &walk);
  return walk.total;
}

long Release(uintptr_t first, uintptr_t last, int /*uffd*/) {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an address the dynamic loader names
  if (madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) return 0;
  return static_cast<long>((last - first) / 1024);
}

// The ranges this process registered, for its forked children to register again (as many as fit).
struct Range {
  uintptr_t first = 0;
  uintptr_t last = 0;
};
constexpr int kMaxRanges = 512;
Range registered[kMaxRanges];
int registered_count = 0;

bool RegisterRange(uintptr_t first, uintptr_t last, int uffd) {
  uffdio_register request = {};
  request.range.start = first;
  request.range.len = last - first;
  request.mode = UFFDIO_REGISTER_MODE_WP;
  return ioctl(uffd, UFFDIO_REGISTER, &request) == 0;
}

long Register(uintptr_t first, uintptr_t last, int uffd) {
  if (!RegisterRange(first, last, uffd)) return 0;
  if (registered_count < kMaxRanges) registered[registered_count++] = {first, last};
  return 1;
}

// A userfaultfd for the registration, or -1. Async-signal-safe.
int OpenForRegistration() {
  // User-mode faults only: what an unprivileged process may ask for
  // (vm.unprivileged_userfaultfd=0), and all that is needed, since no fault is ever handled.
  int uffd =
      static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY));
  if (uffd >= 0 && uffd <= 2) {
    // Never as a standard stream, which a child would inherit (Spawn keeps 0-2 open across exec).
    const int above = fcntl(uffd, F_DUPFD_CLOEXEC, 3);
    close(uffd);
    uffd = above;
  }
  if (uffd < 0) return -1;
  uffdio_api api = {};
  api.api = UFFD_API;
  api.features = UFFD_FEATURE_WP_ASYNC;  // faults resolved by the kernel, on any kind of memory
  if (ioctl(uffd, UFFDIO_API, &api) != 0) {
    close(uffd);
    return -1;
  }
  return uffd;
}

// Whether /proc/self/status says a seccomp filter applies or a debugger is attached (or cannot be
// read): then nothing is registered. A filter may kill a process for the call rather than refuse
// it (systemd's SystemCallFilter does, by default); and a debugger's breakpoints are in pages that
// the release after a registration would drop.
bool FilteredOrTraced() {
  const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char text[8192];
  size_t size = 0;
  ssize_t got;
  while (size < sizeof text - 1 && (got = read(fd, text + size, sizeof text - 1 - size)) > 0) {
    size += static_cast<size_t>(got);
  }
  close(fd);
  text[size] = '\0';
  const std::string_view status(text, size);
  for (const std::string_view field :
       {std::string_view("\nSeccomp:"), std::string_view("\nTracerPid:")}) {
    const size_t at = status.find(field);
    if (at == std::string_view::npos) {
      if (field == "\nTracerPid:") return true;
      continue;  // a kernel without seccomp
    }
    const size_t value = status.find_first_not_of(" \t", at + field.size());
    if (value == std::string_view::npos || status[value] != '0') return true;
  }
  return false;
}

// Whether `fd` is a userfaultfd (a descriptor number kept across a fork may be reused).
bool IsUserfaultFd(int fd) {
  char proc[32];
  char link[64];
  std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  const ssize_t length = readlink(proc, link, sizeof link - 1);
  return length > 0 &&
         std::string_view(link, static_cast<size_t>(length)) == "anon_inode:[userfaultfd]";
}

}  // namespace

long ReleaseCleanFilePages() { return WalkSegments(Release, -1); }

bool MapCodePagesAsTouched() {
  // The registration's descriptor once made, and by which process: a forked child inherits the
  // descriptor but not the registration, and registers on its own.
  static int kept_uffd = -1;
  static pid_t kept_by = 0;
  if (kept_uffd >= 0) {
    if (kept_by == getpid()) return true;
    // The parent's registration: this child's copy of the descriptor ends, if it is still that.
    if (IsUserfaultFd(kept_uffd)) close(kept_uffd);
    kept_uffd = -1;
  }
  if (FilteredOrTraced()) return false;
  const int uffd = OpenForRegistration();
  if (uffd < 0) return false;
  registered_count = 0;
  if (WalkSegments(Register, uffd) == 0) {
    close(uffd);
    return false;
  }
  kept_uffd = uffd;  // closing it would end the registration
  kept_by = getpid();
  return true;
}

void MapInheritedCodePagesAsTouched() {
  if (registered_count == 0) return;
  const int uffd = OpenForRegistration();
  if (uffd < 0) return;
  for (int i = 0; i < registered_count; ++i) {
    (void)RegisterRange(registered[i].first, registered[i].last, uffd);
  }
  // The descriptor stays open until the exec closes it, which ends the registration.
}

}  // namespace tony
