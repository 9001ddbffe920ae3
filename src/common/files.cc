#include "common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/scoped_fd.h"

namespace tony {
namespace {

constexpr off_t kTailBytes = off_t{64} * 1024;

absl::Status ReadError(const std::string& path, int error) {
  return absl::ErrnoToStatus(error, absl::StrCat("cannot read '", path, "'"));
}

// Reads from fd at offset until EOF or `limit` bytes (negative: no limit), retrying EINTR.
absl::StatusOr<std::string> ReadFrom(int fd, off_t offset, off_t limit, const std::string& path) {
  std::string content;
  char buffer[16 * 1024];
  while (limit < 0 || static_cast<off_t>(content.size()) < limit) {
    size_t want = sizeof(buffer);
    if (limit >= 0) want = std::min(want, static_cast<size_t>(limit) - content.size());
    ssize_t n = pread(fd, buffer, want, offset + static_cast<off_t>(content.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ReadError(path, errno);
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  return content;
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ReadError(path, errno);
  return ReadFrom(fd.get(), 0, -1, path);
}

absl::Status WriteFile(const std::string& path, std::string_view content, mode_t mode) {
  static std::atomic<uint64_t> counter{0};
  auto error = [&path](const char* what, int errnum) {
    return absl::ErrnoToStatus(errnum, absl::StrCat("cannot write '", path, "' (", what, ")"));
  };
  std::string temp_path;
  int raw_fd = -1;
  // A stale temporary file left by a crashed writer that had the same pid is skipped.
  for (int attempt = 0; attempt < 100 && raw_fd < 0; ++attempt) {
    temp_path = absl::StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
    raw_fd = open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (raw_fd < 0 && errno != EEXIST) return error("create", errno);
  }
  if (raw_fd < 0) return error("create", EEXIST);
  ScopedFd fd(raw_fd);
  auto fail = [&](const char* what) {
    absl::Status status = error(what, errno);
    unlink(temp_path.c_str());
    return status;
  };
  // The umask can only have narrowed the mode at creation; widen it to exactly what was asked.
  if (fchmod(fd.get(), mode) < 0) return fail("chmod");
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = write(fd.get(), content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write");
    written += static_cast<size_t>(n);
  }
  if (fd.Close() < 0) return fail("close");
  if (rename(temp_path.c_str(), path.c_str()) < 0) return fail("rename");
  return absl::OkStatus();
}

absl::Status EnsurePrivateDir(const std::string& path, bool follow_link) {
  if (path.empty()) return absl::InvalidArgumentError("an empty directory name");
  struct stat info {};
  if ((follow_link ? stat(path.c_str(), &info) : lstat(path.c_str(), &info)) != 0) {
    if (errno != ENOENT) {
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot use '", path, "'"));
    }
    const size_t slash = path.find_last_of('/');
    if (slash != std::string::npos && slash > 0) {
      const std::string parent = path.substr(0, slash);
      struct stat parent_info {};
      if (stat(parent.c_str(), &parent_info) != 0) {
        if (absl::Status made = EnsurePrivateDir(parent, true); !made.ok()) return made;
      }
    }
    if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot create '", path, "'"));
    }
    if (lstat(path.c_str(), &info) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot create '", path, "'"));
    }
  }
  if (S_ISLNK(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' is a symbolic link, not a directory of tony's"));
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("'", path, "' is not a directory"));
  }
  if (info.st_uid != geteuid()) {
    return absl::FailedPreconditionError(absl::StrCat("'", path, "' belongs to uid ", info.st_uid,
                                                      ", not to this user (uid ", geteuid(), ")"));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("'", path, "' is writable by others (mode ",
                                                      absl::StrFormat("%04o", info.st_mode & 07777),
                                                      "): chmod go-w '", path, "'"));
  }
  return absl::OkStatus();
}

absl::Status EnsureOutputDir(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) return absl::ErrnoToStatus(errno, absl::StrCat("cannot use '", path, "'"));
    return EnsurePrivateDir(path, /*follow_link=*/true);
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("'", path, "' is not a directory"));
  }
  if (access(path.c_str(), W_OK | X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' is not writable by this user: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ReadTailLines(const std::string& path, int max_lines) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ReadError(path, errno);
  return ReadTailLines(fd.get(), max_lines, path);
}

absl::StatusOr<std::vector<std::string>> ReadTailLines(int fd, int max_lines,
                                                       const std::string& what) {
  const std::string& path = what;
  struct stat info {};
  if (fstat(fd, &info) < 0) return ReadError(path, errno);
  std::vector<std::string> lines;
  if (max_lines <= 0) return lines;

  // One byte more than the window tells whether the window starts at a line start.
  const bool cut = info.st_size > kTailBytes;
  const off_t offset = cut ? info.st_size - kTailBytes - 1 : 0;
  auto window = ReadFrom(fd, offset, cut ? kTailBytes + 1 : kTailBytes, path);
  if (!window.ok()) return window.status();
  absl::string_view text = *window;
  bool first_line_partial = false;
  if (cut) {
    first_line_partial = text.front() != '\n';
    text.remove_prefix(1);
  }
  if (text.empty()) return lines;
  if (text.back() == '\n') text.remove_suffix(1);
  std::vector<absl::string_view> all = absl::StrSplit(text, '\n');
  size_t begin = first_line_partial && all.size() > 1 ? 1 : 0;
  begin = std::max(begin, all.size() > static_cast<size_t>(max_lines)
                              ? all.size() - static_cast<size_t>(max_lines)
                              : size_t{0});
  for (size_t i = begin; i < all.size(); ++i) lines.emplace_back(all[i]);
  return lines;
}

}  // namespace tony
