#pragma once
// Zip and tar archives: packing a directory for upload, unpacking a job's archives (the Python
// virtual environment, src_dir) into a task's working directory. Built on libarchive.
//
// Threads: any thread may call these; calls share no state. One process-wide effect: libarchive's
// disk writer reads the umask by setting it to 0 and back, so a file another thread creates in
// that instant is not narrowed by the umask.

#include <string>

#include "absl/status/status.h"

namespace tony {

// Writes every regular file, directory and symlink below `dir` (not `dir` itself) into a new zip
// file at `zip_path`. Entry names are relative to `dir` with '/' separators, directories end in
// '/'. Each entry keeps its unix permissions (the executable bit included) and mtime; a symlink
// is stored as a link, never followed. Other file types (sockets, fifos, devices) are skipped.
// `zip_path` may lie inside `dir`: an existing file there is not packed into itself.
// Atomic: written to a temporary file next to `zip_path` and renamed over it, so a reader sees
// the old file or the whole new one; on error no temporary file is left. The zip has mode 0644.
// Errors name the path that failed.
[[nodiscard]] absl::Status CreateZipFromDirectory(const std::string& dir,
                                                  const std::string& zip_path);

// Unpacks a zip or tar archive (plain, or compressed with gzip, bzip2, xz or another filter
// libarchive supports) into `dest_dir`, created if missing; existing files there are overwritten by
// entries of the same name. Permissions are kept (the executable bit included) and not narrowed
// by the umask; owners are not.
//
// An entry that would land outside `dest_dir` is rejected with InvalidArgument naming the entry:
// an absolute path, a ".." component, a hard link to such a path, an absolute symlink target, a
// relative target that climbs above `dest_dir`, or a target with ".." after a name (that name may
// itself be a symlink), and any entry whose path goes through a symlink on disk.
//
// Errors name the archive: NotFound for a missing one, the errno's code when it cannot be read,
// InvalidArgument when it is not an archive, DataLoss when it is corrupt or truncated. On error,
// entries before the failing one may already be in `dest_dir`.
[[nodiscard]] absl::Status ExtractArchive(const std::string& archive_path,
                                          const std::string& dest_dir);

// OK when ExtractArchive could read `archive_path`: it is a zip or tar archive whose entry headers
// all read and whose entry paths all pass ExtractArchive's checks. Entry data (its compression and
// CRCs) is not read, so a file corrupted inside an entry's data passes. Meant for checking a
// user's archive (--python_venv) before a job starts. Errors as for ExtractArchive, e.g.
// "'/x/venv.zip' is not a zip or tar archive" or "cannot read archive '/x/venv.zip': ...".
[[nodiscard]] absl::Status CheckArchiveReadable(const std::string& archive_path);

// Whether the file at `path` starts with a zip file's magic bytes (a local file header, or the
// end record of an empty zip). False when it cannot be read.
bool LooksLikeZip(const std::string& path);

}  // namespace tony
