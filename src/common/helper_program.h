#pragma once
// tony's helper program (helper/tony_helper.c), built static and carried inside tony so that tony
// still ships as one file. It is what two of a task's processes execute once tony has set them up:
// the executor's guard (executor/executor_guard.h) and the task sandbox's init
// (common/sandbox_child.h). Each of them, as a copy of tony, would keep about 5 MB of pages it
// shares with the executor resident, which a resource manager that sums the RSS of a container's
// processes (YARN's NodeManager by default) counts again for each; the program holds about half a
// megabyte.

#include <sys/types.h>

#include <string_view>

namespace tony {

// The program's bytes: a static ELF executable.
std::string_view HelperProgram();

// A file descriptor (close-on-exec) of a sealed memory file that holds the program, for fexecve:
// named `name` (what /proc/<pid>/exe shows), with permissions `mode`, open for reading only, so
// that nothing holds it open for writing when it is executed. -1 with errno set on failure: a
// kernel without memfd_create, or one whose vm.memfd_noexec policy forbids executing such files
// (the exec then fails instead).
int HelperProgramFd(const char* name, mode_t mode);

}  // namespace tony
