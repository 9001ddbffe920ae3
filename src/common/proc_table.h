#pragma once
// Reading the process table from /proc, and signalling whole process trees.
//
// Threads: every function may be called from any thread; they keep no state between calls. What
// they return is a snapshot: processes start and exit while /proc is read, and a pid may be reused
// once its process has been reaped.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tony {

struct ProcessInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgid = 0;
  pid_t sid = 0;
  char state = '?';          // As in /proc/<pid>/stat: 'R', 'S', 'D', 'Z' (zombie), ...
  int64_t rss_bytes = 0;     // Resident set size; pages shared between processes count in each.
  uint64_t cpu_ticks = 0;    // utime + stime, in clock ticks (sysconf(_SC_CLK_TCK) per second).
  uint64_t start_ticks = 0;  // Start time after boot in clock ticks; (pid, start_ticks) is unique.
};

// Every process on the machine (in this pid namespace) that could be read. Processes that exit
// while it reads are left out. Empty if /proc cannot be read.
std::vector<ProcessInfo> ListProcesses();

// root and every process below it by ppid, plus, if root leads a session or a process group, every
// process in it and everything below those. Group and session members are found even after root
// itself has exited (Linux does not reuse a pid while a group or session of that id exists), which
// catches background processes of a shell that have been reparented. Parents come before their
// children; root, if it is in the table, comes first. A process reparented away from the tree
// (to init or a subreaper) outside root's group and session is not found: see ProcessesWithEnv.
// Empty if root <= 0.
std::vector<pid_t> ProcessTree(pid_t root, const std::vector<ProcessInfo>& table);

// Sums of rss_bytes and cpu_ticks over ProcessTree(root), read fresh; 0 if none is found. When
// root leads neither a group nor a session, only root's descendants are read (through the
// kernel's children lists), not all of /proc, so the cost follows the tree's size.
struct TreeUsage {
  int64_t rss_bytes = 0;
  uint64_t cpu_ticks = 0;
};
TreeUsage MeasureTree(pid_t root);
// MeasureTree for many roots at once, from one snapshot of all of /proc: what a backend that
// watches many containers uses, so that a check costs one pass over the process table.
std::unordered_map<pid_t, TreeUsage> MeasureTrees(const std::vector<pid_t>& roots);
// The proportional set size of ProcessTree(root), from each process's /proc/<pid>/smaps_rollup:
// a page shared by n of them counts 1/n in each, so pages a fork shares with its parent (the
// sandbox's init and the executor it was copied from) count once, as they cost. Slower than
// MeasureTree (the kernel walks each process's page tables); processes it cannot read count
// their RSS.
int64_t TreeProportionalBytes(pid_t root);

// MeasureTree(root) without root's own use: what runs below it (below a sandbox's init).
TreeUsage MeasureDescendants(pid_t root);

// One process's own entry, read fresh; nullopt if it cannot be read (it exited).
std::optional<ProcessInfo> ReadProcessInfo(pid_t pid);
int64_t TreeRssBytes(pid_t root);
uint64_t TreeCpuTicks(pid_t root);

// Every process whose environment contains KEY=VALUE exactly, read from /proc/<pid>/environ. That
// file shows the environment the process was started with (later setenv calls do not show), so
// it finds every process of one job whatever reparenting or new sessions happened. Processes whose
// environment cannot be read (another user's, zombies, kernel threads) are skipped. The calling
// process is included if it matches.
std::vector<pid_t> ProcessesWithEnv(std::string_view key, std::string_view value);

// Sends sig to every process in ProcessTree(root), without freezing the tree: it takes a snapshot,
// signals what it has not signalled yet, and repeats until a pass finds nothing new, so that
// children forked meanwhile are caught. A child forked by a process that is then killed before the
// next snapshot is reparented and escapes unless it is in root's group or session. Root is
// signalled first (a task sandbox's init learns of a stop before its command can end). Returns how
// many processes were signalled (zombies included).
int SignalTree(pid_t root, int sig);

// SignalTree(getpid(), sig) without the caller itself: every process below the caller, which for
// a subreaper includes the orphans it adopted, and for a group or session leader every member.
// A subreaper's tree is read through the kernel's children lists, not a scan of all of /proc:
// what starts below it stays below it (a process of its session that joined its group from
// elsewhere would be missed).
int SignalDescendants(int sig);

}  // namespace tony
