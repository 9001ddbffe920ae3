#include "history/history_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
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
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) return ErrnoStatus(ec.value(), "cannot list", dir);
    std::vector<HistoryEntry> entries;
    for (const fs::directory_entry& entry : it) {
      struct stat info {};
      if (lstat(entry.path().c_str(), &info) != 0) continue;  // gone meanwhile
      entries.push_back({entry.path().filename().string(), S_ISDIR(info.st_mode),
                         static_cast<int64_t>(info.st_size), ModifiedMs(info)});
    }
    std::sort(entries.begin(), entries.end(),
              [](const HistoryEntry& a, const HistoryEntry& b) { return a.name < b.name; });
    return entries;
  }

  absl::StatusOr<std::string> Read(const std::string& path, int64_t offset,
                                   int64_t length) override {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, "cannot read", path);
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
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) return ErrnoStatus(errno, "cannot read", path);
    return HistoryEntry{fs::path(path).filename().string(), S_ISDIR(info.st_mode),
                        static_cast<int64_t>(info.st_size), ModifiedMs(info)};
  }

  absl::Status Remove(const std::string& path) override {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) return ErrnoStatus(ec.value(), "cannot remove", path);
    return absl::OkStatus();
  }
};

}  // namespace

std::shared_ptr<HistoryFs> LocalHistoryFs() { return std::make_shared<LocalFs>(); }

}  // namespace tony::history
