#pragma once
// The executor's guard: a small process between the container's launcher and the executor, so
// that a task leaves nothing behind even when its executor is killed outright (kill -9, the
// kernel's OOM killer, a crash).
//
// Why: the executor is the subreaper of the user's processes and stops them itself, but a dead
// executor can stop nothing. Its orphans then belong to whoever is above. YARN's NodeManager is
// meant to kill the container's process group once the container's main process exits, but it
// reads the group from a pid file it may already have deleted ("Could not get pid for
// container_..."), and then it kills nothing; a process that left the group (setsid) escapes it
// anyway. The guard is a subreaper too: when the executor is gone, its orphans are the guard's
// children, and the guard kills every process below it before it exits with the executor's status.
//
// What the guard does, and only that:
//   - forwards SIGTERM, SIGINT and SIGHUP to the executor (a resource manager stopping the
//     container signals its whole group, so the executor may get them twice: harmless);
//   - once the executor has exited, SIGKILLs whatever is left below the guard, reaps it, and
//     exits with the executor's exit code, or 128 + the signal that killed it;
//   - if the guard itself is killed, the executor gets SIGTERM (PR_SET_PDEATHSIG) and stops the
//     task gracefully, as on any stop signal.
// Its command line reads "tony guard" so that it is not taken for the executor.
//
// The guard is tony's helper program (common/helper_program.h), which the process that stays above
// the executor executes from memory: about half a megabyte resident, where a copy of tony keeps
// about 5 MB of pages it shares with the executor, which a resource manager that sums a
// container's RSS (YARN by default) counts twice. Where that program cannot be executed (a kernel
// that refuses to execute memfd files), the guard stays a copy of tony.
//
// Threads: call before any thread is created, with the stop signals already blocked.

#include <optional>

namespace tony::executor {

enum class GuardKind {
  kProgram,    // the guard's own program, or a copy of tony where that cannot be executed
  kInProcess,  // a copy of tony (tests)
};

// Forks. Returns std::nullopt in the child, which goes on as the executor. In the parent, runs the
// guard until the executor and everything below it are gone and returns the exit code for main
// (a guard of kind kProgram returns only where its program could not be executed). `role_arg` is
// the process's "executor" argument (argv), renamed in a copy of tony; may be null. If the fork
// fails, warns and returns std::nullopt: the executor runs unguarded.
std::optional<int> RunGuard(char* role_arg, GuardKind kind = GuardKind::kProgram);

}  // namespace tony::executor
