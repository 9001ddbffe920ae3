#pragma once
// How a role's process ends once its work is done and written down.

namespace tony {

// Flushes the log and every stdio stream, then ends the process with `code` at once: no
// destructors, no atexit handlers, no library teardown. What is left at that point is freeing
// memory and stopping gRPC's and the other libraries' threads, which the kernel does at once;
// done by hand it touched pages all over their code again, and with many tasks ending together
// their executors' teardowns were most of the job's end (bench/README.md, "The job's end with
// many tasks"). Builds with sanitizers (TONY_SANITIZED) return `code` instead, so that their
// checks of the teardown still run: the caller returns it from main.
int ExitWithoutTeardown(int code);

}  // namespace tony
