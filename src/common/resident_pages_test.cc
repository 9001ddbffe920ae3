#include "common/resident_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "common/memory_test_util.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

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
  TouchLoadedCode();
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
