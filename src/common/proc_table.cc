#include "common/proc_table.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tony {
namespace {

// The whole of a small /proc file; nullopt if it cannot be opened (the process is gone, or it
// belongs to someone else).
std::optional<std::string> ReadProcFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string content;
  char buffer[4096];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      if (n < 0) return std::nullopt;
      return content;
    }
    content.append(buffer, static_cast<size_t>(n));
  }
}

// The numeric entries of /proc.
std::vector<pid_t> ListPids() {
  std::vector<pid_t> pids;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return pids;
  while (dirent* entry = readdir(dir)) {
    int pid = 0;
    if (absl::SimpleAtoi(entry->d_name, &pid) && pid > 0) pids.push_back(pid);
  }
  closedir(dir);
  return pids;
}

// Parses /proc/<pid>/stat (proc(5)). The command name, field 2, is in parentheses and may itself
// contain spaces and parentheses, so the fields are counted from the last ')'.
std::optional<ProcessInfo> ParseStat(pid_t pid, absl::string_view stat, int64_t page_size) {
  size_t close_paren = stat.rfind(')');
  if (close_paren == absl::string_view::npos) return std::nullopt;
  std::vector<absl::string_view> fields =
      absl::StrSplit(stat.substr(close_paren + 1), ' ', absl::SkipEmpty());
  // fields[0] is field 3 of proc(5).
  auto field = [&](int number) { return fields[static_cast<size_t>(number - 3)]; };
  if (fields.size() < 22 || field(3).size() != 1) return std::nullopt;
  ProcessInfo info;
  info.pid = pid;
  info.state = field(3)[0];
  uint64_t utime = 0, stime = 0;
  int64_t rss_pages = 0;
  if (!absl::SimpleAtoi(field(4), &info.ppid) || !absl::SimpleAtoi(field(5), &info.pgid) ||
      !absl::SimpleAtoi(field(6), &info.sid) || !absl::SimpleAtoi(field(14), &utime) ||
      !absl::SimpleAtoi(field(15), &stime) || !absl::SimpleAtoi(field(22), &info.start_ticks) ||
      !absl::SimpleAtoi(field(24), &rss_pages)) {
    return std::nullopt;
  }
  info.cpu_ticks = utime + stime;
  info.rss_bytes = rss_pages * page_size;
  return info;
}

}  // namespace

std::vector<ProcessInfo> ListProcesses() {
  const int64_t page_size = sysconf(_SC_PAGESIZE);
  std::vector<ProcessInfo> table;
  for (pid_t pid : ListPids()) {
    std::optional<std::string> stat = ReadProcFile(absl::StrCat("/proc/", pid, "/stat"));
    if (!stat.has_value()) continue;
    std::optional<ProcessInfo> info = ParseStat(pid, *stat, page_size);
    if (info.has_value()) table.push_back(*info);
  }
  return table;
}

namespace {

// ProcessTree's lookups, built once for a table so that many trees cost one pass.
class ProcessIndex {
 public:
  explicit ProcessIndex(const std::vector<ProcessInfo>& table) {
    for (const ProcessInfo& info : table) {
      present_.insert(info.pid);
      children_[info.ppid].push_back(info.pid);
      if (info.pgid > 0) members_[info.pgid].push_back(info.pid);
      if (info.sid > 0 && info.sid != info.pgid) members_[info.sid].push_back(info.pid);
    }
  }

  std::vector<pid_t> Tree(pid_t root) const {
    // Kernel threads have group and session 0; pid 0 is no process to start a tree from.
    if (root <= 0) return {};
    std::vector<pid_t> tree;
    std::unordered_set<pid_t> seen;
    auto add = [&](pid_t pid) {
      if (seen.insert(pid).second) tree.push_back(pid);
    };
    if (present_.contains(root)) add(root);
    // Members of the group or session root leads, whose parent is outside the tree (reparented).
    if (auto it = members_.find(root); it != members_.end()) {
      for (pid_t pid : it->second) add(pid);
    }
    // `tree` grows while it is walked: an index, not iterators.
    for (size_t next = 0; next < tree.size(); ++next) {  // NOLINT(modernize-loop-convert)
      auto it = children_.find(tree[next]);
      if (it == children_.end()) continue;
      for (pid_t child : it->second) {
        if (child != root) add(child);
      }
    }
    return tree;
  }

 private:
  std::unordered_set<pid_t> present_;
  std::unordered_map<pid_t, std::vector<pid_t>> children_;
  std::unordered_map<pid_t, std::vector<pid_t>> members_;  // by group and by session
};

}  // namespace

std::vector<pid_t> ProcessTree(pid_t root, const std::vector<ProcessInfo>& table) {
  return ProcessIndex(table).Tree(root);
}

std::unordered_map<pid_t, TreeUsage> MeasureTrees(const std::vector<pid_t>& roots) {
  const std::vector<ProcessInfo> table = ListProcesses();
  const ProcessIndex index(table);
  std::unordered_map<pid_t, const ProcessInfo*> by_pid;
  for (const ProcessInfo& info : table) by_pid[info.pid] = &info;
  std::unordered_map<pid_t, TreeUsage> usage;
  for (pid_t root : roots) {
    TreeUsage& sum = usage[root];
    for (pid_t pid : index.Tree(root)) {
      sum.rss_bytes += by_pid.at(pid)->rss_bytes;
      sum.cpu_ticks += by_pid.at(pid)->cpu_ticks;
    }
  }
  return usage;
}

namespace {

// The children of every thread of `pid` (/proc/<pid>/task/<tid>/children), or nullopt where the
// kernel has no such files. A process that is gone has none.
std::optional<std::vector<pid_t>> ChildrenOf(pid_t pid) {
  std::vector<pid_t> children;
  std::error_code ec;
  std::filesystem::directory_iterator tasks(absl::StrCat("/proc/", pid, "/task"), ec);
  if (ec) return children;
  for (const auto& task : tasks) {
    std::optional<std::string> listed = ReadProcFile((task.path() / "children").string());
    if (!listed.has_value()) {
      if (std::filesystem::exists(task.path())) return std::nullopt;  // no children files
      continue;                                                       // the thread ended
    }
    for (absl::string_view word : absl::StrSplit(*listed, ' ', absl::SkipWhitespace())) {
      pid_t child = 0;
      if (absl::SimpleAtoi(word, &child)) children.push_back(child);
    }
  }
  return children;
}

// The processes of ProcessTree(root), read without a scan of all of /proc where that gives the
// same answer: when root leads neither a process group nor a session, its tree is root and its
// descendants, found through the kernel's children lists, so what one task costs does not grow
// with the number of processes on the machine. nullopt where a full scan is needed.
std::optional<std::vector<ProcessInfo>> DescendantsOnly(pid_t root, bool descendants_suffice) {
  const int64_t page_size = sysconf(_SC_PAGESIZE);
  auto read = [&](pid_t pid) -> std::optional<ProcessInfo> {
    std::optional<std::string> stat = ReadProcFile(absl::StrCat("/proc/", pid, "/stat"));
    return stat.has_value() ? ParseStat(pid, *stat, page_size) : std::nullopt;
  };
  std::optional<ProcessInfo> root_info = read(root);
  if (!root_info.has_value()) return std::nullopt;
  if (!descendants_suffice && (root_info->pgid == root || root_info->sid == root)) {
    return std::nullopt;
  }
  std::vector<ProcessInfo> tree = {*root_info};
  std::unordered_set<pid_t> seen = {root};
  for (size_t next = 0; next < tree.size(); ++next) {
    std::optional<std::vector<pid_t>> children = ChildrenOf(tree[next].pid);
    if (!children.has_value()) return std::nullopt;
    for (pid_t child : *children) {
      if (!seen.insert(child).second) continue;
      if (std::optional<ProcessInfo> info = read(child)) tree.push_back(*info);
    }
  }
  return tree;
}

}  // namespace

TreeUsage MeasureTree(pid_t root) {
  if (root <= 0) return {};
  std::optional<std::vector<ProcessInfo>> tree = DescendantsOnly(root, false);
  if (!tree.has_value()) return MeasureTrees({root})[root];
  TreeUsage usage;
  for (const ProcessInfo& info : *tree) {
    usage.rss_bytes += info.rss_bytes;
    usage.cpu_ticks += info.cpu_ticks;
  }
  return usage;
}

TreeUsage MeasureDescendants(pid_t root) {
  TreeUsage usage = MeasureTree(root);
  if (std::optional<ProcessInfo> own = ReadProcessInfo(root)) {
    usage.rss_bytes = std::max<int64_t>(usage.rss_bytes - own->rss_bytes, 0);
    usage.cpu_ticks -= std::min(usage.cpu_ticks, own->cpu_ticks);
  }
  return usage;
}

int64_t TreeProportionalBytes(pid_t root) {
  const std::vector<ProcessInfo> table = ListProcesses();
  std::unordered_map<pid_t, int64_t> rss;
  for (const ProcessInfo& info : table) rss[info.pid] = info.rss_bytes;
  int64_t total = 0;
  for (pid_t pid : ProcessTree(root, table)) {
    std::optional<std::string> rollup = ReadProcFile(absl::StrCat("/proc/", pid, "/smaps_rollup"));
    int64_t pss_kb = -1;
    if (rollup.has_value()) {
      for (absl::string_view line : absl::StrSplit(*rollup, '\n')) {
        if (!absl::ConsumePrefix(&line, "Pss:")) continue;
        line = absl::StripAsciiWhitespace(line);
        absl::ConsumeSuffix(&line, "kB");
        int64_t value = 0;
        if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &value)) pss_kb = value;
        break;
      }
    }
    total += pss_kb >= 0 ? pss_kb * 1024 : rss[pid];
  }
  return total;
}

std::optional<ProcessInfo> ReadProcessInfo(pid_t pid) {
  std::optional<std::string> stat = ReadProcFile(absl::StrCat("/proc/", pid, "/stat"));
  return stat.has_value() ? ParseStat(pid, *stat, sysconf(_SC_PAGESIZE)) : std::nullopt;
}

int64_t TreeRssBytes(pid_t root) { return MeasureTree(root).rss_bytes; }

uint64_t TreeCpuTicks(pid_t root) { return MeasureTree(root).cpu_ticks; }

std::vector<pid_t> ProcessesWithEnv(std::string_view key, std::string_view value) {
  std::string wanted;
  wanted.reserve(key.size() + 1 + value.size());
  wanted.append(key).append("=").append(value);
  std::vector<pid_t> matches;
  for (pid_t pid : ListPids()) {
    std::optional<std::string> environ = ReadProcFile(absl::StrCat("/proc/", pid, "/environ"));
    if (!environ.has_value()) continue;
    for (absl::string_view entry : absl::StrSplit(*environ, '\0')) {
      if (entry == wanted) {
        matches.push_back(pid);
        break;
      }
    }
  }
  return matches;
}

namespace {

// SignalTree without `spared` (0: none).
// The processes of ProcessTree(root) with their stat: through the children lists when
// `descendants_suffice` or root leads no group or session, else from a full scan.
std::vector<ProcessInfo> TreeOf(pid_t root, bool descendants_suffice) {
  if (std::optional<std::vector<ProcessInfo>> tree = DescendantsOnly(root, descendants_suffice)) {
    return *std::move(tree);
  }
  const std::vector<ProcessInfo> table = ListProcesses();
  std::unordered_map<pid_t, const ProcessInfo*> by_pid;
  for (const ProcessInfo& info : table) by_pid[info.pid] = &info;
  std::vector<ProcessInfo> tree;
  for (pid_t pid : ProcessIndex(table).Tree(root)) tree.push_back(*by_pid.at(pid));
  return tree;
}

int SignalTreeSparing(pid_t root, pid_t spared, int sig, bool descendants_suffice) {
  // A process is identified by (pid, start time) so that a pid reused between passes by a new
  // process of the tree is signalled too.
  std::set<std::pair<pid_t, uint64_t>> attempted;
  int signalled = 0;
  // Bounds the work against a tree that forks faster than it can be signalled (a fork bomb).
  constexpr int kMaxPasses = 100;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    bool found_new = false;
    for (const ProcessInfo& info : TreeOf(root, descendants_suffice)) {
      if (info.pid == spared) continue;
      if (!attempted.emplace(info.pid, info.start_ticks).second) continue;
      found_new = true;
      if (kill(info.pid, sig) == 0) ++signalled;
    }
    if (!found_new) break;
  }
  return signalled;
}

}  // namespace

int SignalTree(pid_t root, int sig) { return SignalTreeSparing(root, 0, sig, false); }

int SignalDescendants(int sig) {
  // Everything that starts below a subreaper stays below it (orphans are adopted by it), and a
  // group or session it leads holds only such processes unless another process of its session
  // joined its group: its descendants are the tree, found without a scan of all of /proc.
  int subreaper = 0;
  const bool is_subreaper = prctl(PR_GET_CHILD_SUBREAPER, &subreaper) == 0 && subreaper != 0;
  return SignalTreeSparing(getpid(), getpid(), sig, is_subreaper);
}

}  // namespace tony
