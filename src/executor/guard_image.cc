#include "executor/guard_image.h"

// The program's file, as the build made it, included byte for byte (src/executor/CMakeLists.txt
// defines TONY_GUARD_PROGRAM as its path).
asm(".pushsection .rodata.tony_guard_program, \"a\"\n"
    ".balign 16\n"
    ".globl tony_guard_program_begin\n"
    ".hidden tony_guard_program_begin\n"
    ".globl tony_guard_program_end\n"
    ".hidden tony_guard_program_end\n"
    "tony_guard_program_begin:\n"
    ".incbin \"" TONY_GUARD_PROGRAM
    "\"\n"
    "tony_guard_program_end:\n"
    ".popsection\n");

extern "C" __attribute__((visibility("hidden"))) const char tony_guard_program_begin[];
extern "C" __attribute__((visibility("hidden"))) const char tony_guard_program_end[];

namespace tony::executor {

std::string_view GuardProgram() {
  return {tony_guard_program_begin,
          static_cast<size_t>(tony_guard_program_end - tony_guard_program_begin)};
}

}  // namespace tony::executor
