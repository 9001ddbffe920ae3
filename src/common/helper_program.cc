#include "common/helper_program.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

// The program's file, as the build made it, included byte for byte (src/common/CMakeLists.txt
// defines TONY_HELPER_PROGRAM as its path).
asm(".pushsection .rodata.tony_helper_program, \"a\"\n"
    ".balign 16\n"
    ".globl tony_helper_program_begin\n"
    ".hidden tony_helper_program_begin\n"
    ".globl tony_helper_program_end\n"
    ".hidden tony_helper_program_end\n"
    "tony_helper_program_begin:\n"
    ".incbin \"" TONY_HELPER_PROGRAM
    "\"\n"
    "tony_helper_program_end:\n"
    ".popsection\n");

extern "C" __attribute__((visibility("hidden"))) const char tony_helper_program_begin[];
extern "C" __attribute__((visibility("hidden"))) const char tony_helper_program_end[];

namespace tony {

std::string_view HelperProgram() {
  return {tony_helper_program_begin,
          static_cast<size_t>(tony_helper_program_end - tony_helper_program_begin)};
}

int HelperProgramFd(const char* name, mode_t mode) {
  // MFD_EXEC (Linux 6.3) says the file is to be executed: a kernel whose vm.memfd_noexec policy
  // allows it would otherwise warn. Older kernels refuse the flag and need none.
  constexpr unsigned kMfdExec = 0x10;
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | kMfdExec);
  if (fd < 0 && errno == EINVAL) fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  const std::string_view program = HelperProgram();
  for (size_t written = 0; written < program.size();) {
    const ssize_t n = write(fd, program.data() + written, program.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      close(fd);
      errno = error;
      return -1;
    }
    written += static_cast<size_t>(n);
  }
  // Nothing can change the program once it is written (sealing fails only on an old kernel).
  (void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  // Opened again for reading only: a kernel may refuse to execute a file open for writing
  // (ETXTBSY). Without /proc, the writable descriptor it is.
  const int readonly = open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDONLY | O_CLOEXEC);
  if (readonly >= 0) {
    close(fd);
    fd = readonly;
  }
  if (fchmod(fd, mode) != 0) {
    const int error = errno;
    close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

}  // namespace tony
