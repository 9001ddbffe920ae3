#pragma once
// Starting child processes (waiting for them: common/child_exit.h).
//
// Threads: every function here may be called from any thread, concurrently. Spawn is safe in a
// multi-threaded parent (gRPC's threads exist): everything that allocates happens before the fork,
// and the child only makes async-signal-safe calls until exec.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/child_exit.h"

namespace tony {

// What a sandboxed child (SpawnOptions::sandbox) runs in: new user, mount and PID namespaces,
// where `covers` hide parts of the file system and only the child's own processes are visible.
// The child's first process is the namespace's init (pid 1): it forks the command, reaps
// whatever is reparented to it, and exits when the command does, which kills everything left in
// the namespace. The command itself runs in one more user and mount namespace, so that the
// covers are locked: it cannot unmount them to see what lies beneath, even as root.
struct Sandbox {
  struct Cover {
    std::string path;  // absolute; a directory gets an empty read-only tmpfs, a file an empty file
    // Absolute paths below `path` that stay visible where they are (bound back over the cover).
    std::vector<std::string> keep;
  };
  // Applied in order, so a later cover may hide a file inside an earlier one's `keep`. A path
  // that does not exist is skipped.
  std::vector<Cover> covers;
  // The command's working directory, entered again once the covers are in place (a directory
  // entered before would lead, through "..", to what they hide). Required.
  std::string working_dir;
  // The write end of a pipe: init writes the command's wait status there (an int) before it
  // exits; read it with ReadSandboxedStatus. Required.
  int status_fd = -1;
};

struct SpawnOptions {
  // argv[0] is searched in PATH if it has no '/'. The PATH searched is the child's (after the
  // changes below), or "/bin:/usr/bin" if the child has none, as `env PATH=... prog` would.
  std::vector<std::string> argv;
  // The child's environment: the parent's (or an empty one if clear_env), minus unset_env, plus
  // set_env. A key in both unset_env and set_env ends up set.
  std::map<std::string, std::string> set_env;
  std::vector<std::string> unset_env;
  bool clear_env = false;
  // Empty: inherit the parent's.
  std::string working_dir;
  // Empty: inherit the parent's stdout/stderr. Otherwise opened O_CREAT|O_APPEND, created with
  // output_mode (before the umask). The same path for both is fine. Relative paths (here and in
  // stdin_path) are resolved against the parent's working directory, not working_dir.
  std::string stdout_path;
  std::string stderr_path;
  mode_t output_mode = 0600;
  // Empty: /dev/null.
  std::string stdin_path;
  // setsid() in the child: it leads a new session and process group.
  bool new_session = false;
  // setpgid(0, 0) in the child: it leads a new process group. Ignored if new_session.
  bool new_process_group = false;
  // If non-zero, the child gets this signal when its parent dies (prctl(PR_SET_PDEATHSIG)); if the
  // parent died before the child could ask for that, the child exits at once. Linux sends it when
  // the *thread* that called Spawn exits, so call Spawn with it from a thread that lives as long as
  // the child should (e.g. the main thread or a long-lived event loop).
  int parent_death_signal = 0;
  // File descriptors kept open in the child under the same numbers. Every other descriptor above 2
  // is closed at exec. 0, 1 and 2 are always set as described above.
  std::vector<int> inherit_fds;
  // Set: the command runs in a sandbox (see Sandbox), and the pid returned is the sandbox's init.
  // Fails with the step and errno where the kernel refuses namespaces (e.g. a seccomp filter).
  std::optional<Sandbox> sandbox;
};

// Starts a process and returns its pid once the child has exec'd (so its group, session and
// environment are in place when the caller sees the pid). The child starts with every signal
// unblocked and at its default disposition (a parent that ignores SIGPIPE or SIGINT does not pass
// that on). Returns an error, having reaped the child, if it could not be started: "cannot execute
// 'foo.sh': Permission denied", "cannot change to working directory '/x': No such file or
// directory", ... The caller must eventually reap the pid with WaitForExit, PollExit or
// WaitForExitFor.
[[nodiscard]] absl::StatusOr<pid_t> Spawn(const SpawnOptions& options);

// The command's exit status from a sandbox's status pipe once its init (the pid Spawn returned)
// has exited with `init_status`: the command's own, or init's if it wrote none (killed first).
// `peak_rss_bytes`, if given, gets the peak RSS of the command's processes (init's own left out)
// when init reported one, and is left alone otherwise.
[[nodiscard]] ExitStatus ReadSandboxedStatus(int status_read_fd, const ExitStatus& init_status,
                                             int64_t* peak_rss_bytes = nullptr);

// Raises this process's soft limit on open files to its hard limit, at most `at_most`, and
// returns the limit now in force. A server that holds a connection per task needs more than the
// 1024 that systemd and most shells give by default, with a hard limit far above. The processes
// Spawn starts afterwards get the soft limit as it was before: a program may expect it (select()
// cannot watch a descriptor past 1023).
absl::StatusOr<int64_t> RaiseOpenFileLimit(int64_t at_most);

namespace internal {
// Children get the soft limit as it is again, as before any RaiseOpenFileLimit (tests only).
void ForgetOpenFileLimitForTesting();
}  // namespace internal

}  // namespace tony
