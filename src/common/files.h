#pragma once
// Small whole-file helpers.
//
// Threads: any thread may call them. WriteFile calls for the same path from several threads or
// processes do not mix their contents: each reader sees one whole version.

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tony {

// The whole file. Errors name the path ("cannot read '/x/y': No such file or directory", code
// NotFound for a missing file).
[[nodiscard]] absl::StatusOr<std::string> ReadFile(const std::string& path);

// Replaces the file atomically: writes a temporary file in the same directory and renames it over
// path, so a reader sees the old or the new content, never a part. The file has exactly `mode`
// (not narrowed by the umask), and never more than it at any moment, so a 0600 secret is never
// readable by others, even briefly. Not fsynced: atomic for readers, not durable across a crash of
// the machine.
[[nodiscard]] absl::Status WriteFile(const std::string& path, std::string_view content,
                                     mode_t mode = 0644);

// A directory of the user's own, created 0700 whatever the umask (with its missing parents, which
// get 0700 too). One that exists must be a directory (a symbolic link to one is followed only if
// `follow_link`), owned by this user, and writable by nobody else: otherwise another user could
// replace what tony keeps there. Errors name the path and what is wrong, with code
// FailedPrecondition for a directory the user must fix ("... is writable by others (mode 0777):
// chmod go-w ...").
[[nodiscard]] absl::Status EnsurePrivateDir(const std::string& path, bool follow_link = false);

// A directory the user named for a job's outputs: one that is missing is made as EnsurePrivateDir
// makes it (0700, with its missing parents); one that exists (a link to one is followed) may be
// shared as the user chose, but must be a directory this user can write. Errors name the path and
// what is wrong (FailedPrecondition).
[[nodiscard]] absl::Status EnsureOutputDir(const std::string& path);

// The last max_lines lines of a file, without their '\n', for diagnostics ("the last lines of the
// task's stderr"). Reads at most the last 64 KiB, so a first line cut by that limit is dropped,
// unless it is the only one (then its end is returned). A last line without '\n' counts.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> ReadTailLines(const std::string& path,
                                                                     int max_lines);
// The same from a file open as `fd` (read with pread; its offset is left alone), named `what` in
// errors.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> ReadTailLines(int fd, int max_lines,
                                                                     const std::string& what);

}  // namespace tony
