#include "executor/task_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "spdlog/spdlog.h"

namespace tony::executor {

// Opens a file of the task's (its output, its progress file) before the task runs, creating it,
// never through a symbolic link, never blocking on a FIFO; -1 if it cannot be. The executor keeps
// the descriptor and never opens the file by its name again: the task can rename or replace
// what is at that name (and could point it anywhere the executor may write), never the file the
// executor holds.
int OpenTaskFile(const std::string& path, int flags, mode_t mode) {
  const int fd = open(path.c_str(), flags | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
  if (fd < 0) {
    spdlog::warn("cannot open {}: {}", path, std::strerror(errno));
    return -1;
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    spdlog::warn("{} is not a regular file", path);
    close(fd);
    return -1;
  }
  return fd;
}

// Feeds what was appended to a task's file (held open as `fd`) since `*offset` to the tracker.
void FeedTaskFile(int fd, ProgressTracker::Stream stream, int64_t* offset,
                  ProgressTracker& tracker) {
  if (fd < 0) return;
  struct stat info {};
  if (fstat(fd, &info) != 0) return;
  if (info.st_size < *offset) {
    // Started again (written over, not appended to): read it from its start.
    *offset = 0;
    tracker.OnRestarted(stream);
  }
  if (info.st_size > *offset) {
    if (info.st_size - *offset > kMaxProgressReadBytes) {
      *offset = info.st_size - kMaxProgressReadBytes;
      tracker.OnSkipped(stream);
    }
    std::string bytes(static_cast<size_t>(info.st_size - *offset), '\0');
    const ssize_t n = pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(*offset));
    if (n > 0) {
      bytes.resize(static_cast<size_t>(n));
      *offset += n;
      tracker.OnOutput(stream, bytes);
    }
  }
  // The reports file is read only here: once a MiB of it has been read, it starts again, so a
  // task that reports every step for days does not fill the disk (a report written between the
  // read and the truncation is lost; the next one counts).
  if (stream == ProgressTracker::Stream::kReports && *offset >= kMaxProgressReadBytes &&
      ftruncate(fd, 0) == 0) {
    *offset = 0;
    tracker.OnRestarted(stream);
  }
}

}  // namespace tony::executor
