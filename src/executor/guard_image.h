#pragma once
// The guard's own program (guard/tony_guard.c), built static and carried inside tony, so that
// tony still ships as one file.

#include <string_view>

namespace tony::executor {

// The program's bytes: an ELF executable.
std::string_view GuardProgram();

}  // namespace tony::executor
