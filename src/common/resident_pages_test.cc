#include "common/resident_pages.h"

#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

#include "common/proc_status_test_util.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

// Reads a byte of every page of every read-only segment of the loaded objects, as running much
// of their code would. What it reads belongs to no object of the program, which AddressSanitizer
// must not check; nor may ThreadSanitizer, which has no shadow for some of these pages.
__attribute__((no_sanitize("address", "thread"))) int TouchSegment(dl_phdr_info* info,
                                                                   size_t /*size*/,
                                                                   void* /*data*/) {
  const long page = sysconf(_SC_PAGESIZE);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || (segment.p_flags & PF_W) != 0) continue;
    const uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    const uintptr_t first = (begin + page - 1) & ~static_cast<uintptr_t>(page - 1);
    for (uintptr_t at = first; at + page <= begin + segment.p_memsz; at += page) {
      // NOLINTNEXTLINE(performance-no-int-to-ptr): an address the dynamic loader names
      (void)*reinterpret_cast<const volatile char*>(at);
    }
  }
  return 0;
}

// The resident kB of the mapping that starts at `start` (/proc/self/smaps), or -1.
long MappingRssKb(const void* start) {
  char wanted[32];
  std::snprintf(wanted, sizeof wanted, "%lx-", reinterpret_cast<unsigned long>(start));
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    if (line.rfind(wanted, 0) == 0) {
      inside = true;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::atol(line.c_str() + 4);
    }
  }
  return -1;
}

TEST(ResidentPagesTest, LetsGoOfTheLoadedCodeAndTheProgramRunsOn) {
  dl_iterate_phdr(TouchSegment, nullptr);
  const long before = StatusKb(getpid(), "RssFile");
  ASSERT_GT(before, 1024) << "the code was not made resident";
  EXPECT_GT(ReleaseCleanFilePages(), 1024);
  const long after = StatusKb(getpid(), "RssFile");
  EXPECT_LT(after, before / 2) << before << " kB before, " << after << " kB after";
  // The code it let go of runs again (this test's, gtest's, the C library's).
  EXPECT_EQ(std::to_string(12345), "12345");
}

TEST(ResidentPagesTest, LeavesWritableAndOtherMappingsAlone) {
  // A writable private mapping of a file with one page written (a copy of its own), and a
  // read-only one that is nobody's segment: neither loses a resident page.
  char path[] = "/tmp/tony-resident-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  constexpr size_t kSize = 1 << 20;
  const std::string content(kSize, 'x');
  ASSERT_EQ(write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  void* writable = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  void* readonly = mmap(nullptr, kSize, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  ASSERT_NE(writable, MAP_FAILED);
  ASSERT_NE(readonly, MAP_FAILED);
  auto* bytes = static_cast<volatile char*>(writable);
  const auto* read_bytes = static_cast<const volatile char*>(readonly);
  for (size_t at = 0; at < kSize; at += 4096) {
    (void)bytes[at];
    (void)read_bytes[at];
  }
  bytes[0] = 'y';
  ASSERT_EQ(MappingRssKb(writable), 1024);
  ASSERT_EQ(MappingRssKb(readonly), 1024);
  (void)ReleaseCleanFilePages();
  EXPECT_EQ(MappingRssKb(writable), 1024);
  EXPECT_EQ(MappingRssKb(readonly), 1024);
  EXPECT_EQ(bytes[0], 'y');
  munmap(writable, kSize);
  munmap(readonly, kSize);
}

}  // namespace
}  // namespace tony
