#pragma once
// For tests of what a process holds resident: a field of /proc/<pid>/status, and touching the
// loaded code.

#include <link.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

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

namespace internal {

struct Touch {
  uintptr_t stride_pages = 1;
  long touched = 0;  // pages
};

// What TouchLoadedCode reads: what belongs to no object of the program, which AddressSanitizer must
// not check; nor may ThreadSanitizer, which has no shadow for some of these pages.
__attribute__((no_sanitize("address", "thread"))) inline int TouchReadOnlySegments(
    dl_phdr_info* info, size_t /*size*/, void* data) {
  Touch& touch = *static_cast<Touch*>(data);
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || (segment.p_flags & PF_W) != 0) continue;
    const uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    for (uintptr_t at = (begin + page - 1) & ~(page - 1); at + page <= begin + segment.p_memsz;
         at += page * touch.stride_pages) {
      // NOLINTNEXTLINE(performance-no-int-to-ptr): an address the dynamic loader names
      (void)*reinterpret_cast<const volatile char*>(at);
      ++touch.touched;
    }
  }
  return 0;
}

}  // namespace internal

// Reads a byte of every page (or of one page in every `stride_pages`) of the read-only segments
// (code, read-only data) of the program and of every library loaded, as running much of their
// code would. Returns how many pages it read.
inline long TouchLoadedCode(uintptr_t stride_pages = 1) {
  internal::Touch touch;
  touch.stride_pages = stride_pages;
  dl_iterate_phdr(internal::TouchReadOnlySegments, &touch);
  return touch.touched;
}

// This process's descriptors of a userfaultfd (common/resident_pages.h).
inline std::vector<int> UserfaultFds() {
  std::vector<int> fds;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    if (std::filesystem::read_symlink(entry.path(), error).string() == "anon_inode:[userfaultfd]") {
      fds.push_back(std::stoi(entry.path().filename().string()));
    }
  }
  return fds;
}

}  // namespace tony
