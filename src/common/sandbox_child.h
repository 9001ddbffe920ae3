#pragma once
// The child's side of a Sandbox (common/process.h): what Spawn's child does between clone and
// exec to enter the namespaces, cover paths and become the namespace's init. Internal to Spawn.
//
// Threads: PrepareSandbox runs in the parent and allocates; everything else runs in the child of
// a multi-threaded parent and makes async-signal-safe system calls only, with no allocation.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/process.h"

namespace tony::internal {

// A Sandbox with every string and number the child needs made in advance.
struct SandboxPlan {
  struct Keep {
    std::string path;
    std::vector<std::string> parents;  // directories to create inside the cover, outermost first
  };
  struct Cover {
    std::string path;
    std::vector<Keep> keep;
  };
  std::vector<Cover> covers;
  std::string working_dir;
  int status_fd = -1;
  std::string uid_map;  // "<uid> <uid> 1\n": the user keeps its own id in each namespace
  // Init's command line as /proc and ps show it ("tony\0sandbox-init" for a tony process),
  // written over the parent's arguments (arg_area, arg_size bytes); nothing if arg_area is null.
  std::string init_title;
  char* arg_area = nullptr;
  size_t arg_size = 0;
  std::string gid_map;
  // What init writes to the namespace's /proc/sys/kernel/ns_last_pid before it starts the command:
  // the spawning process's own PID, so that the command's PID in the namespace is that plus one,
  // unique among the sandboxes of this host's tony processes. Otherwise every task's command has
  // PID 2, and whatever names a process by host and PID (torchrun's agents in a rendezvous, for
  // one) takes two tasks on one host for the same process. "" writes nothing.
  std::string ns_last_pid;
  // tony's helper program (common/helper_program.h), readable by nobody, which init executes
  // once it has forked the command, so that init is not a copy of its parent; -1: init stays
  // that copy. The spawning process owns it and closes it once the child is started.
  int init_program_fd = -1;
};

// What init writes to SandboxPlan::status_fd when the command has exited.
struct SandboxedExit {
  int wait_status;
  int64_t peak_rss_bytes;  // the largest process init reaped (the command's, or one it started)
};

// What failed, for the parent's message: the step, and which cover (steps kCover and kKeep).
enum class SandboxStep : int {
  kNamespaces,       // clone with CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID
  kIdMaps,           // /proc/self/{setgroups,uid_map,gid_map}
  kPrivateMounts,    // making every mount private to the namespace
  kCover,            // mounting the cover over SandboxPlan::covers[detail]
  kKeep,             // binding back a kept path of covers[detail]
  kProc,             // mounting the namespace's own /proc
  kInnerNamespaces,  // the command's own user and mount namespaces, which lock the covers
  kWorkingDir,       // entering the working directory again
  kFork,             // init forking the command
};

struct SandboxFailure {
  SandboxStep step;
  int detail;
  int error;  // errno
};

[[nodiscard]] SandboxPlan PrepareSandbox(const Sandbox& sandbox);

// The parent's description of a failure, e.g. "cannot cover /x/jobs with an empty directory".
[[nodiscard]] std::string DescribeSandboxFailure(const SandboxPlan& plan, SandboxStep step,
                                                 int detail);

// In the child of clone(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID): sets the namespaces up, forks
// the command's process and returns in it (in its own inner user and mount namespaces, in the
// working directory) with true. The init process never returns: it reaps until the command exits,
// writes the command's wait status to plan.status_fd, and exits. On a failure before the fork it
// returns false with *failure set; `close_after_fork` (the error pipe) is closed in init once the
// command's process holds it.
[[nodiscard]] bool EnterSandbox(const SandboxPlan& plan, int close_after_fork,
                                SandboxFailure* failure);

// The clone flags of a sandboxed child.
int SandboxCloneFlags();

}  // namespace tony::internal
