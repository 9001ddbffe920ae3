#include "common/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/statusor.h"
#include "common/scoped_fd.h"
#include "common/strings.h"

namespace tony {
namespace {

namespace fs = std::filesystem;

constexpr size_t kBlockSize = size_t{64} * 1024;

struct ReadArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct WriteArchiveFree {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* entry) const { archive_entry_free(entry); }
};
using ReadArchive = std::unique_ptr<archive, ReadArchiveFree>;
using WriteArchive = std::unique_ptr<archive, WriteArchiveFree>;
using Entry = std::unique_ptr<archive_entry, EntryFree>;

std::string LibarchiveError(archive* a) {
  const char* message = archive_error_string(a);
  return message != nullptr ? message : "unknown libarchive error";
}

// ---- Reading ----

// Whether the last 64 KiB + 22 bytes of the file (where a zip's end record must start) hold a
// whole end-of-central-directory record. libarchive's streaming zip reader accepts a zip without
// one, so a zip cut inside its central directory would otherwise pass.
bool HasZipEndRecord(const std::string& path, off_t size) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return false;
  const off_t start = std::max<off_t>(0, size - (65535 + 22));
  std::string tail(static_cast<size_t>(size - start), '\0');
  size_t done = 0;
  while (done < tail.size()) {
    ssize_t n =
        pread(fd.get(), tail.data() + done, tail.size() - done, start + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  // The record is 22 bytes; its last 2 are the length of the comment that follows it.
  constexpr size_t kRecordSize = 22;
  for (size_t at = tail.rfind(std::string_view("PK\x05\x06", 4)); at != std::string::npos;
       at = at == 0 ? std::string::npos : tail.rfind(std::string_view("PK\x05\x06", 4), at - 1)) {
    if (at + kRecordSize > tail.size()) continue;
    size_t comment_size = static_cast<unsigned char>(tail[at + 20]) |
                          static_cast<size_t>(static_cast<unsigned char>(tail[at + 21])) << 8;
    if (at + kRecordSize + comment_size <= tail.size()) return true;
  }
  return false;
}

absl::Status CorruptArchive(const std::string& path, archive* reader) {
  return absl::DataLossError(
      StrCat("archive '", path, "' is corrupt or truncated: ", LibarchiveError(reader)));
}

// Opens `path` with every format and filter libarchive supports; the format is chosen here.
absl::StatusOr<ReadArchive> OpenForRead(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    return absl::ErrnoToStatus(errno, StrCat("cannot read archive '", path, "'"));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(
        StrCat("'", path, "' is not a zip or tar archive (not a regular file)"));
  }
  if (info.st_size == 0) {
    return absl::InvalidArgumentError(
        StrCat("'", path, "' is not a zip or tar archive (the file is empty)"));
  }
  if (LooksLikeZip(path) && !HasZipEndRecord(path, info.st_size)) {
    return absl::DataLossError(
        StrCat("archive '", path, "' is corrupt or truncated: no zip end of central directory"));
  }
  ReadArchive reader(archive_read_new());
  if (reader == nullptr) return absl::ResourceExhaustedError("archive_read_new failed");
  archive_read_support_filter_all(reader.get());
  // The formats tony documents. (All formats would also link XAR's reader, and through libxml2
  // ICU's 30 MB of data, into the self-contained binary.)
  archive_read_support_format_zip(reader.get());
  archive_read_support_format_tar(reader.get());
  if (archive_read_open_filename(reader.get(), path.c_str(), kBlockSize) != ARCHIVE_OK) {
    int error = archive_errno(reader.get());
    // libarchive reports an unrecognized format as ARCHIVE_ERRNO_FILE_FORMAT, EILSEQ on Linux.
    if (error == EILSEQ) {
      return absl::InvalidArgumentError(
          StrCat("'", path, "' is not a zip or tar archive (", LibarchiveError(reader.get()), ")"));
    }
    if (error > 0) return absl::ErrnoToStatus(error, StrCat("cannot read archive '", path, "'"));
    return CorruptArchive(path, reader.get());
  }
  return reader;
}

// The entry's path as stored; falls back to the raw UTF-8 name when it does not convert to the
// current locale (the bytes then name the file, as Linux file names are bytes).
const char* EntryPathname(archive_entry* entry) {
  const char* name = archive_entry_pathname(entry);
  return name != nullptr ? name : archive_entry_pathname_utf8(entry);
}

const char* EntryHardlink(archive_entry* entry) {
  const char* name = archive_entry_hardlink(entry);
  return name != nullptr ? name : archive_entry_hardlink_utf8(entry);
}

const char* EntrySymlink(archive_entry* entry) {
  const char* name = archive_entry_symlink(entry);
  return name != nullptr ? name : archive_entry_symlink_utf8(entry);
}

// Why `name`, a path relative to the destination, would land outside it; "" when it would not.
std::string UnsafePathReason(std::string_view name) {
  if (name.empty()) return "empty path";
  if (name.front() == '/') return "absolute path";
  for (std::string_view piece : Split(name, '/')) {
    if (piece == "..") return "path contains '..'";
  }
  return "";
}

// Why the symlink at `link_path` (relative to the destination) pointing to `target` could lead
// outside the destination; "" when it cannot. The link's own directory has no symlinks in it
// (ARCHIVE_EXTRACT_SECURE_SYMLINKS), so leading ".." components are resolved lexically; a ".."
// after a name is refused because that name may itself be a symlink.
std::string UnsafeSymlinkReason(std::string_view link_path, std::string_view target) {
  if (!target.empty() && target.front() == '/') {
    return StrCat("symlink to an absolute path '", target, "'");
  }
  int depth = -1;  // Of the link's directory below the destination.
  for (std::string_view piece : Split(link_path, '/')) {
    if (!piece.empty() && piece != ".") ++depth;
  }
  bool seen_name = false;
  for (std::string_view piece : Split(target, '/')) {
    if (piece.empty() || piece == ".") continue;
    if (piece != "..") {
      seen_name = true;
    } else if (seen_name) {
      return StrCat("symlink target '", target, "' has '..' after a name");
    } else if (--depth < 0) {
      return StrCat("symlink target '", target, "' points outside the destination");
    }
  }
  return "";
}

// OK when extracting `entry` cannot write outside the destination.
absl::Status CheckEntry(const std::string& archive_path, archive_entry* entry) {
  const char* name = EntryPathname(entry);
  std::string pathname = name != nullptr ? name : "";
  std::string reason = UnsafePathReason(pathname);
  if (reason.empty()) {
    if (const char* hardlink = EntryHardlink(entry)) {
      reason = UnsafePathReason(hardlink);
      if (!reason.empty()) reason = StrCat("hard link to '", hardlink, "': ", reason);
    }
  }
  if (reason.empty() && archive_entry_filetype(entry) == AE_IFLNK) {
    const char* target = EntrySymlink(entry);
    reason = UnsafeSymlinkReason(pathname, target != nullptr ? target : "");
  }
  if (reason.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat("archive '", archive_path, "' has unsafe entry '",
                                           pathname, "' (", reason,
                                           "): it would extract outside the destination"));
}

// Copies the current entry's data from `reader` to `writer`.
absl::Status CopyEntryData(const std::string& archive_path, const std::string& entry_name,
                           const std::string& dest_dir, archive* reader, archive* writer) {
  for (;;) {
    const void* block = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    int result = archive_read_data_block(reader, &block, &size, &offset);
    if (result == ARCHIVE_EOF) return absl::OkStatus();
    // A warning here is a zip entry's bad CRC, found after its data was read.
    if (result != ARCHIVE_OK) return CorruptArchive(archive_path, reader);
    if (archive_write_data_block(writer, block, size, offset) < ARCHIVE_WARN) {
      return absl::InternalError(StrCat("cannot extract '", entry_name, "' of archive '",
                                        archive_path, "' into '", dest_dir,
                                        "': ", LibarchiveError(writer)));
    }
  }
}

// ---- Writing ----

// Appends the paths below `root`/`relative`, relative to `root`, parents before their children,
// in name order.
absl::Status ListTree(const fs::path& root, const fs::path& relative, std::vector<fs::path>& out) {
  const fs::path directory = root / relative;
  std::error_code error;
  std::vector<fs::path> children;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    children.push_back(relative / it->path().filename());
  }
  if (error) {
    return absl::ErrnoToStatus(error.value(),
                               StrCat("cannot list directory '", directory.string(), "'"));
  }
  std::sort(children.begin(), children.end());
  for (const fs::path& child : children) {
    out.push_back(child);
    fs::file_status status = fs::symlink_status(root / child, error);
    if (error) {
      return absl::ErrnoToStatus(error.value(),
                                 StrCat("cannot stat '", (root / child).string(), "'"));
    }
    if (fs::is_directory(status)) {
      if (absl::Status listed = ListTree(root, child, out); !listed.ok()) return listed;
    }
  }
  return absl::OkStatus();
}

// Writes `size` bytes of the file at `path` as the current entry's data.
absl::Status WriteFileData(const std::string& path, off_t size, archive* writer,
                           const std::string& zip_path) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return absl::ErrnoToStatus(errno, StrCat("cannot read '", path, "'"));
  std::vector<char> buffer(kBlockSize);
  off_t written = 0;
  while (written < size) {
    size_t want = std::min<size_t>(buffer.size(), static_cast<size_t>(size - written));
    ssize_t n = read(fd.get(), buffer.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, StrCat("cannot read '", path, "'"));
    if (n == 0) {
      return absl::AbortedError(StrCat("'", path, "' shrank while it was being zipped"));
    }
    if (archive_write_data(writer, buffer.data(), static_cast<size_t>(n)) != n) {
      return absl::InternalError(
          StrCat("cannot write '", zip_path, "' (adding '", path, "'): ", LibarchiveError(writer)));
    }
    written += n;
  }
  return absl::OkStatus();
}

// Writes the entry for `root`/`relative` into the zip.
absl::Status AddEntry(const fs::path& root, const fs::path& relative, archive* writer,
                      const std::string& zip_path) {
  const std::string path = (root / relative).string();
  struct stat info;
  if (lstat(path.c_str(), &info) != 0)
    return absl::ErrnoToStatus(errno, StrCat("cannot stat '", path, "'"));
  if (!S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode) && !S_ISLNK(info.st_mode)) {
    return absl::OkStatus();
  }
  std::string name = relative.generic_string();
  if (S_ISDIR(info.st_mode)) name += "/";
  Entry entry(archive_entry_new());
  if (entry == nullptr) return absl::ResourceExhaustedError("archive_entry_new failed");
  archive_entry_set_pathname(entry.get(), name.c_str());
  archive_entry_set_mode(entry.get(), info.st_mode);
  archive_entry_set_mtime(entry.get(), info.st_mtim.tv_sec, info.st_mtim.tv_nsec);
  archive_entry_set_uid(entry.get(), info.st_uid);
  archive_entry_set_gid(entry.get(), info.st_gid);
  archive_entry_set_size(entry.get(), S_ISREG(info.st_mode) ? info.st_size : 0);
  if (S_ISLNK(info.st_mode)) {
    std::error_code error;
    fs::path target = fs::read_symlink(path, error);
    if (error)
      return absl::ErrnoToStatus(error.value(), StrCat("cannot read symlink '", path, "'"));
    archive_entry_set_symlink(entry.get(), target.c_str());
  }
  if (archive_write_header(writer, entry.get()) < ARCHIVE_WARN) {
    return absl::InternalError(
        StrCat("cannot write '", zip_path, "' (adding '", path, "'): ", LibarchiveError(writer)));
  }
  if (S_ISREG(info.st_mode)) return WriteFileData(path, info.st_size, writer, zip_path);
  return absl::OkStatus();
}

// Writes the zip of `entries` below `root` to the open descriptor `fd`.
absl::Status WriteZip(const fs::path& root, const std::vector<fs::path>& entries, int fd,
                      const std::string& zip_path) {
  WriteArchive writer(archive_write_new());
  if (writer == nullptr) return absl::ResourceExhaustedError("archive_write_new failed");
  if (archive_write_set_format_zip(writer.get()) != ARCHIVE_OK ||
      archive_write_open_fd(writer.get(), fd) != ARCHIVE_OK) {
    return absl::InternalError(
        StrCat("cannot write '", zip_path, "': ", LibarchiveError(writer.get())));
  }
  for (const fs::path& relative : entries) {
    if (absl::Status added = AddEntry(root, relative, writer.get(), zip_path); !added.ok()) {
      return added;
    }
  }
  if (archive_write_close(writer.get()) != ARCHIVE_OK) {
    return absl::InternalError(
        StrCat("cannot write '", zip_path, "': ", LibarchiveError(writer.get())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CreateZipFromDirectory(const std::string& dir, const std::string& zip_path) {
  std::error_code error;
  const fs::path root = fs::canonical(dir, error);
  if (error) return absl::ErrnoToStatus(error.value(), StrCat("cannot read directory '", dir, "'"));
  if (!fs::is_directory(root, error)) {
    return absl::InvalidArgumentError(StrCat("cannot zip '", dir, "': not a directory"));
  }
  std::vector<fs::path> entries;
  if (absl::Status listed = ListTree(root, "", entries); !listed.ok()) return listed;
  const fs::path zip_absolute = fs::weakly_canonical(zip_path, error);
  if (!error) {
    std::erase_if(entries, [&](const fs::path& p) { return root / p == zip_absolute; });
  }

  std::string temp_path = zip_path + ".tmp.XXXXXX";
  ScopedFd fd(mkstemp(temp_path.data()));
  if (fd.get() < 0) return absl::ErrnoToStatus(errno, StrCat("cannot create '", temp_path, "'"));
  absl::Status status = WriteZip(root, entries, fd.get(), zip_path);
  if (status.ok() && fchmod(fd.get(), 0600) != 0) {
    status = absl::ErrnoToStatus(errno, StrCat("cannot chmod '", temp_path, "'"));
  }
  if (status.ok() && fd.Close() != 0) {
    status = absl::ErrnoToStatus(errno, StrCat("cannot write '", temp_path, "'"));
  }
  if (status.ok() && rename(temp_path.c_str(), zip_path.c_str()) != 0) {
    status =
        absl::ErrnoToStatus(errno, StrCat("cannot rename '", temp_path, "' to '", zip_path, "'"));
  }
  if (!status.ok()) unlink(temp_path.c_str());
  return status;
}

absl::Status ExtractArchive(const std::string& archive_path, const std::string& dest_dir) {
  absl::StatusOr<ReadArchive> reader = OpenForRead(archive_path);
  if (!reader.ok()) return reader.status();
  std::error_code error;
  fs::create_directories(dest_dir, error);
  if (error)
    return absl::ErrnoToStatus(error.value(), StrCat("cannot create directory '", dest_dir, "'"));
  // Canonical, because ARCHIVE_EXTRACT_SECURE_SYMLINKS refuses a symlink anywhere in the path.
  const std::string dest = fs::canonical(dest_dir, error).string();
  if (error)
    return absl::ErrnoToStatus(error.value(), StrCat("cannot read directory '", dest_dir, "'"));

  WriteArchive writer(archive_write_disk_new());
  if (writer == nullptr) return absl::ResourceExhaustedError("archive_write_disk_new failed");
  // Entry paths are made absolute below dest, so ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS would
  // refuse them all; CheckEntry refuses absolute entry paths before that.
  archive_write_disk_set_options(writer.get(), ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
                                                   ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                   ARCHIVE_EXTRACT_SECURE_SYMLINKS);
  for (;;) {
    archive_entry* entry = nullptr;
    int result = archive_read_next_header(reader->get(), &entry);
    if (result == ARCHIVE_EOF) break;
    if (result < ARCHIVE_WARN) return CorruptArchive(archive_path, reader->get());
    if (absl::Status safe = CheckEntry(archive_path, entry); !safe.ok()) return safe;
    const std::string name = EntryPathname(entry);
    archive_entry_set_pathname(entry, StrCat(dest, "/", name).c_str());
    if (const char* hardlink = EntryHardlink(entry)) {
      archive_entry_set_hardlink(entry, StrCat(dest, "/", hardlink).c_str());
    }
    if (archive_write_header(writer.get(), entry) < ARCHIVE_WARN) {
      return absl::InvalidArgumentError(StrCat("cannot extract '", name, "' of archive '",
                                               archive_path, "' into '", dest_dir,
                                               "': ", LibarchiveError(writer.get())));
    }
    if (absl::Status copied =
            CopyEntryData(archive_path, name, dest_dir, reader->get(), writer.get());
        !copied.ok()) {
      return copied;
    }
    if (archive_write_finish_entry(writer.get()) < ARCHIVE_WARN) {
      return absl::InternalError(StrCat("cannot extract '", name, "' of archive '", archive_path,
                                        "' into '", dest_dir,
                                        "': ", LibarchiveError(writer.get())));
    }
  }
  if (archive_write_close(writer.get()) < ARCHIVE_WARN) {
    return absl::InternalError(StrCat("cannot extract archive '", archive_path, "' into '",
                                      dest_dir, "': ", LibarchiveError(writer.get())));
  }
  return absl::OkStatus();
}

absl::Status CheckArchiveReadable(const std::string& archive_path) {
  absl::StatusOr<ReadArchive> reader = OpenForRead(archive_path);
  if (!reader.ok()) return reader.status();
  for (;;) {
    archive_entry* entry = nullptr;
    int result = archive_read_next_header(reader->get(), &entry);
    if (result == ARCHIVE_EOF) return absl::OkStatus();
    if (result < ARCHIVE_WARN) return CorruptArchive(archive_path, reader->get());
    if (absl::Status safe = CheckEntry(archive_path, entry); !safe.ok()) return safe;
    if (archive_read_data_skip(reader->get()) < ARCHIVE_WARN) {
      return CorruptArchive(archive_path, reader->get());
    }
  }
}

bool LooksLikeZip(const std::string& path) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return false;
  char magic[4];
  ssize_t n;
  do {
    n = read(fd.get(), magic, sizeof(magic));
  } while (n < 0 && errno == EINTR);
  if (n != sizeof(magic)) return false;
  return std::memcmp(magic, "PK\x03\x04", 4) == 0 || std::memcmp(magic, "PK\x05\x06", 4) == 0;
}

}  // namespace tony
