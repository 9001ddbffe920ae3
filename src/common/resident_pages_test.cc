#include "common/resident_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

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

struct Growth {
  long touched_pages = 0;
  long rss_file_kb = 0;
};

// Lets go of the code's pages, then reads one page in every 64 kB of it (fault-around's window
// by default): what that maps.
Growth TouchOnePagePerWindow() {
  (void)ReleaseCleanFilePages();
  Growth growth;
  const long before = StatusKb(getpid(), "RssFile");
  growth.touched_pages = TouchLoadedCode(
      std::max<uintptr_t>(1, 65536 / static_cast<uintptr_t>(sysconf(_SC_PAGESIZE))));
  growth.rss_file_kb = StatusKb(getpid(), "RssFile") - before;
  return growth;
}

TEST(ResidentPagesTest, MapsOnlyTheCodePagesTouched) {
  // Every page of the code in the page cache, which is what fault-around maps around a touch.
  TouchLoadedCode();
  // The same reads without the registration, in a child.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const Growth growth = TouchOnePagePerWindow();
    _exit(write(fds[1], &growth, sizeof growth) == sizeof growth ? 0 : 1);
  }
  close(fds[1]);
  Growth unregistered;
  const bool read_whole = read(fds[0], &unregistered, sizeof unregistered) == sizeof unregistered;
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(read_whole);

  const long page_kb = sysconf(_SC_PAGESIZE) / 1024;
  if (unregistered.rss_file_kb <= 2 * unregistered.touched_pages * page_kb) {
    GTEST_SKIP() << "no fault-around here (" << unregistered.rss_file_kb << " kB mapped for "
                 << unregistered.touched_pages << " pages read): nothing to turn off";
  }
  if (!MapCodePagesAsTouched()) {
    GTEST_SKIP() << "no userfaultfd in asynchronous write-protect mode here (a kernel before 6.7), "
                    "or a seccomp filter or a debugger";
  }
  const std::vector<int> uffds = UserfaultFds();
  ASSERT_EQ(uffds.size(), 1U);
  EXPECT_NE(fcntl(uffds[0], F_GETFD) & FD_CLOEXEC, 0) << "a task's command would inherit it";
  EXPECT_TRUE(MapCodePagesAsTouched()) << "a second call keeps the registration";
  EXPECT_EQ(UserfaultFds().size(), 1U);

  const Growth registered = TouchOnePagePerWindow();
  // Each page read, and what this test's own code maps again (1 MB at most).
  EXPECT_LT(registered.rss_file_kb, registered.touched_pages * page_kb + 1024)
      << registered.touched_pages << " pages read, " << unregistered.rss_file_kb
      << " kB mapped without the registration";
  // Without it the kernel mapped the neighbours of each page read (fault-around, 64 kB or more).
  EXPECT_GT(unregistered.rss_file_kb, 2 * registered.rss_file_kb)
      << unregistered.touched_pages << " pages read";

  // A forked child is not registered (it inherits a copy of the descriptor): it registers anew.
  const pid_t child_registers = fork();
  ASSERT_GE(child_registers, 0);
  if (child_registers == 0) {
    const bool registered_anew = MapCodePagesAsTouched() && UserfaultFds().size() == 1;
    const Growth growth = TouchOnePagePerWindow();
    _exit(registered_anew && growth.rss_file_kb < growth.touched_pages * page_kb + 1024 ? 0 : 1);
  }
  int child_status = 0;
  ASSERT_EQ(waitpid(child_registers, &child_status, 0), child_registers);
  EXPECT_TRUE(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0);
  // The code let go of and mapped again page by page runs on.
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
