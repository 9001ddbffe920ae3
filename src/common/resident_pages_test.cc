#include "common/resident_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace tony {
namespace {

// The resident kB of the mapping that starts at `start`, from /proc/self/smaps; -1 if none.
long ResidentKb(const void* start) {
  char wanted[32];
  std::snprintf(wanted, sizeof wanted, "%lx-", reinterpret_cast<unsigned long>(start));
  FILE* smaps = std::fopen("/proc/self/smaps", "r");
  if (smaps == nullptr) return -1;
  char line[512];
  bool inside = false;
  long kb = -1;
  while (std::fgets(line, sizeof line, smaps) != nullptr) {
    if (std::strncmp(line, wanted, std::strlen(wanted)) == 0) {
      inside = true;
    } else if (inside && std::sscanf(line, "Rss: %ld kB", &kb) == 1) {
      break;
    }
  }
  std::fclose(smaps);
  return kb;
}

class ResidentPagesTest : public testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/tony-resident-XXXXXX";
    fd_ = mkstemp(path);
    ASSERT_GE(fd_, 0);
    unlink(path);
    const std::string page(kSize, 'x');
    ASSERT_EQ(write(fd_, page.data(), page.size()), static_cast<ssize_t>(page.size()));
  }
  void TearDown() override { close(fd_); }

  static constexpr size_t kSize = 1 << 20;
  int fd_ = -1;
};

TEST_F(ResidentPagesTest, LetsGoOfReadOnlyFilePagesAndTheyReadTheSameAfterwards) {
  void* mapped = mmap(nullptr, kSize, PROT_READ, MAP_PRIVATE, fd_, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  const auto* bytes = static_cast<const volatile char*>(mapped);
  long sum = 0;
  for (size_t at = 0; at < kSize; at += 4096) sum += bytes[at];
  ASSERT_GE(ResidentKb(mapped), 1000) << "the pages were not made resident";
  EXPECT_GE(ReleaseCleanFilePages(), 1000);
  EXPECT_EQ(ResidentKb(mapped), 0);
  long again = 0;
  for (size_t at = 0; at < kSize; at += 4096) again += bytes[at];
  EXPECT_EQ(again, sum);
  munmap(mapped, kSize);
}

TEST_F(ResidentPagesTest, LeavesWritableAndCopiedMappingsAlone) {
  // A writable private mapping of the file, with one page written (a copy of its own).
  void* writable = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd_, 0);
  ASSERT_NE(writable, MAP_FAILED);
  auto* bytes = static_cast<volatile char*>(writable);
  for (size_t at = 0; at < kSize; at += 4096) (void)bytes[at];
  bytes[0] = 'y';
  // A read-only one that holds a copied page (made writable, written, made read-only again, as
  // the dynamic loader does to a library's relocated data).
  void* copied = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd_, 0);
  ASSERT_NE(copied, MAP_FAILED);
  auto* copied_bytes = static_cast<volatile char*>(copied);
  for (size_t at = 0; at < kSize; at += 4096) (void)copied_bytes[at];
  copied_bytes[4096] = 'z';
  ASSERT_EQ(mprotect(copied, kSize, PROT_READ), 0);
  const long writable_kb = ResidentKb(writable);
  const long copied_kb = ResidentKb(copied);
  (void)ReleaseCleanFilePages();
  EXPECT_EQ(ResidentKb(writable), writable_kb);
  EXPECT_EQ(ResidentKb(copied), copied_kb);
  EXPECT_EQ(bytes[0], 'y');
  EXPECT_EQ(copied_bytes[4096], 'z');
  munmap(writable, kSize);
  munmap(copied, kSize);
}

}  // namespace
}  // namespace tony
