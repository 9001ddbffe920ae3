#include "history/history_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/files.h"
#include "common/strings.h"

namespace tony::history {
namespace {

namespace fs = std::filesystem;

absl::Status ErrnoStatus(int error, std::string_view what, const std::string& path) {
  return absl::Status(absl::ErrnoToStatusCode(error),
                      StrCat(what, " '", path, "': ", std::strerror(error)));
}

int64_t ModifiedMs(const struct stat& info) {
  return int64_t{info.st_mtim.tv_sec} * 1000 + info.st_mtim.tv_nsec / 1000000;
}

class LocalFs final : public HistoryFs {
 public:
  explicit LocalFs(std::vector<std::string> roots) : roots_(std::move(roots)) {
    for (std::string& root : roots_) {
      while (root.size() > 1 && root.back() == '/') root.pop_back();
    }
  }

  absl::Status MakeDirs(const std::string& path) override {
    std::error_code ec;
    fs::path built;
    for (const fs::path& part : fs::path(path)) {
      built /= part;
      if (fs::is_directory(built, ec)) continue;
      if (mkdir(built.c_str(), 0700) != 0 && (errno != EEXIST || !fs::is_directory(built, ec))) {
        return ErrnoStatus(errno == EEXIST ? ENOTDIR : errno, "cannot create directory",
                           built.string());
      }
    }
    return absl::OkStatus();
  }

  absl::Status Write(const std::string& path, std::string_view data) override {
    return WriteFile(path, data, 0600);
  }

  absl::Status Append(const std::string& path, std::string_view data) override {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = write(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int error = n < 0 ? errno : EIO;
        close(fd);
        return ErrnoStatus(error, "cannot write", path);
      }
      done += static_cast<size_t>(n);
    }
    if (close(fd) != 0) return ErrnoStatus(errno, "cannot write", path);
    return absl::OkStatus();
  }

  absl::Status Rename(const std::string& from, const std::string& to) override {
    if (rename(from.c_str(), to.c_str()) != 0) return ErrnoStatus(errno, "cannot rename", from);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<HistoryEntry>> List(const std::string& dir) override {
    absl::StatusOr<int> fd = Open(dir, O_RDONLY | O_DIRECTORY);
    if (!fd.ok()) return fd.status();
    DIR* stream = fdopendir(*fd);
    if (stream == nullptr) {
      const int error = errno;
      close(*fd);
      return ErrnoStatus(error, "cannot list", dir);
    }
    std::vector<HistoryEntry> entries;
    while (const dirent* entry = readdir(stream)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      struct stat info {};
      if (fstatat(dirfd(stream), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
      entries.push_back(
          {name, S_ISDIR(info.st_mode), static_cast<int64_t>(info.st_size), ModifiedMs(info)});
    }
    closedir(stream);
    std::sort(entries.begin(), entries.end(),
              [](const HistoryEntry& a, const HistoryEntry& b) { return a.name < b.name; });
    return entries;
  }

  absl::StatusOr<std::string> Read(const std::string& path, int64_t offset,
                                   int64_t length) override {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    absl::StatusOr<int> opened = Open(path, O_RDONLY | O_NONBLOCK);
    if (!opened.ok()) return opened.status();
    const int fd = *opened;
    struct stat info {};
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
      close(fd);
      return absl::FailedPreconditionError(StrCat("'", path, "' is not a regular file"));
    }
    offset = std::max<int64_t>(offset, 0);
    length = std::clamp<int64_t>(length, 0, std::max<int64_t>(info.st_size - offset, 0));
    std::string data(static_cast<size_t>(length), '\0');
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = pread(fd, data.data() + done, data.size() - done,
                              static_cast<off_t>(offset + static_cast<int64_t>(done)));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int error = errno;
        close(fd);
        return ErrnoStatus(error, "cannot read", path);
      }
      if (n == 0) break;  // shrank meanwhile
      done += static_cast<size_t>(n);
    }
    close(fd);
    data.resize(done);
    return data;
  }

  absl::StatusOr<HistoryEntry> Stat(const std::string& path) override {
    absl::StatusOr<int> fd = Open(path, O_PATH);
    if (!fd.ok()) return fd.status();
    struct stat info {};
    const int result = fstat(*fd, &info);
    const int error = errno;
    close(*fd);
    if (result != 0) return ErrnoStatus(error, "cannot read", path);
    return HistoryEntry{fs::path(path).filename().string(), S_ISDIR(info.st_mode),
                        static_cast<int64_t>(info.st_size), ModifiedMs(info)};
  }

  absl::Status Remove(const std::string& path) override {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) return ErrnoStatus(ec.value(), "cannot remove", path);
    return absl::OkStatus();
  }

 private:
  // `path` opened with `flags` (O_CLOEXEC added). Under roots: beneath the root it names, with no
  // symbolic link followed below that root; else with none followed in its last component.
  absl::StatusOr<int> Open(const std::string& path, int flags) const {
    if (roots_.empty()) {
      const int fd = open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0) return ErrnoStatus(errno == ELOOP ? EACCES : errno, "cannot read", path);
      return fd;
    }
    for (const std::string& root : roots_) {
      std::string relative;
      if (path == root) {
        relative = ".";
      } else if (path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/') {
        relative = path.substr(root.size() + 1);
      } else {
        continue;
      }
      const int root_fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (root_fd < 0) return ErrnoStatus(errno, "cannot read", path);
      open_how how{};
      how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
      how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
      const int fd =
          static_cast<int>(syscall(SYS_openat2, root_fd, relative.c_str(), &how, sizeof(how)));
      const int error = errno;
      close(root_fd);
      if (fd >= 0) return fd;
      if (error == ELOOP || error == EXDEV) {
        return absl::PermissionDeniedError(
            StrCat("'", path, "' leads through a symbolic link or out of the history store"));
      }
      if (error != ENOSYS) return ErrnoStatus(error, "cannot read", path);
      // A kernel before openat2 (5.6): the last component at least is no link.
      const int fallback = open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
      if (fallback < 0) return ErrnoStatus(errno, "cannot read", path);
      return fallback;
    }
    return absl::PermissionDeniedError(StrCat("'", path, "' is outside the history store"));
  }

  std::vector<std::string> roots_;
};

}  // namespace

std::shared_ptr<HistoryFs> LocalHistoryFs(std::vector<std::string> roots) {
  return std::make_shared<LocalFs>(std::move(roots));
}

}  // namespace tony::history
