#pragma once
// Where a job's history is kept: a directory tree on the local disk (LocalHistoryFs) or on HDFS
// (an implementation the wiring provides, over WebHDFS). The history writer and reader see only
// this interface, so they know no backend.
//
// Paths are absolute paths of that file system ("/home/alice/.tony/history/..." or
// "/user/alice/.tony/history/..."). Directories are private to the user (0700) and files are
// created 0600, because a job's history carries its output and configuration.
//
// Threads: implementations are safe to call from any thread; each call blocks until done.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tony::history {

struct HistoryEntry {
  std::string name;  // within its directory
  bool is_directory = false;
  int64_t size = 0;
  int64_t modified_ms = 0;  // ms since the epoch
};

class HistoryFs {
 public:
  virtual ~HistoryFs() = default;
  // Creates the directory and its missing parents (0700); an existing one is success.
  [[nodiscard]] virtual absl::Status MakeDirs(const std::string& path) = 0;
  // Replaces the whole file (readers see the old or the new content where the file system
  // allows; HDFS replaces it in one create).
  [[nodiscard]] virtual absl::Status Write(const std::string& path, std::string_view data) = 0;
  // Appends to the file, creating it if it is missing.
  [[nodiscard]] virtual absl::Status Append(const std::string& path, std::string_view data) = 0;
  // Renames a file or directory; kNotFound when `from` is missing.
  [[nodiscard]] virtual absl::Status Rename(const std::string& from, const std::string& to) = 0;
  // The directory's entries by name; kNotFound for a missing directory.
  [[nodiscard]] virtual absl::StatusOr<std::vector<HistoryEntry>> List(const std::string& dir) = 0;
  // At most `length` bytes from `offset` (fewer at the end); kNotFound for a missing file.
  [[nodiscard]] virtual absl::StatusOr<std::string> Read(const std::string& path, int64_t offset,
                                                         int64_t length) = 0;
  // The file's or directory's entry; kNotFound when missing.
  [[nodiscard]] virtual absl::StatusOr<HistoryEntry> Stat(const std::string& path) = 0;
  // Removes a file or a whole directory tree; a missing path is success.
  [[nodiscard]] virtual absl::Status Remove(const std::string& path) = 0;
  // How paths of this file system are named in messages ("hdfs://nn:8020" or "").
  virtual std::string Describe(const std::string& path) const { return path; }
};

// The local disk. With `roots` (the store's directories), every path is resolved beneath one of
// them, and no symbolic link below a root is followed (a root itself may be one): a history
// whose owner replaced a log or a job's directory with a link to a file elsewhere serves none
// of it, whoever reads it. Reads take regular files only, opened without blocking, so a FIFO in
// the store is an error at once. A path outside every root is refused.
std::shared_ptr<HistoryFs> LocalHistoryFs(std::vector<std::string> roots = {});

}  // namespace tony::history
