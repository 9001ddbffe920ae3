#include "executor/task_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "common/strings.h"
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

namespace {

// The parameters go to the AM in a protobuf string, which must be UTF-8.
absl::StatusOr<std::string> ValidUtf8(std::string params) {
  for (size_t at = 0; at < params.size();) {
    const size_t length = Utf8SequenceLength(params, at);
    if (length == 0) {
      return absl::InvalidArgumentError(
          StrCat("the text after the marker is not UTF-8 (byte ", at + 1, ")"));
    }
    at += length;
  }
  return params;
}

}  // namespace

absl::StatusOr<std::string> FindModelParams(int fd, std::string_view marker) {
  if (fd < 0) return absl::FailedPreconditionError("the task's stdout is not open");
  std::string pending;  // the current line, or its end once it is longer than needed
  std::vector<char> buffer(1 << 16);
  int64_t offset = 0;
  auto params_in = [&](const std::string& line) -> std::optional<std::string> {
    const size_t at = line.find(marker);
    if (at == std::string::npos) return std::nullopt;
    std::string params = line.substr(at + marker.size());
    if (!params.empty() && params.back() == '\r') params.pop_back();
    return params;
  };
  while (true) {
    const ssize_t got = pread(fd, buffer.data(), buffer.size(), offset);
    if (got < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(StrCat("cannot read the task's stdout: ", std::strerror(errno)));
    }
    if (got == 0) break;
    offset += got;
    pending.append(buffer.data(), static_cast<size_t>(got));
    size_t start = 0;
    for (size_t newline = pending.find('\n'); newline != std::string::npos;
         newline = pending.find('\n', start)) {
      if (std::optional<std::string> params = params_in(pending.substr(start, newline - start))) {
        if (params->size() > kMaxModelParamsBytes) break;
        return ValidUtf8(*std::move(params));
      }
      start = newline + 1;
    }
    pending.erase(0, start);
    const size_t at = pending.find(marker);
    if (at != std::string::npos && pending.size() - at - marker.size() > kMaxModelParamsBytes) {
      return absl::InvalidArgumentError(StrCat("its line with '", marker, "' hands on more than ",
                                               kMaxModelParamsBytes,
                                               " bytes, the most tony passes to the tasks"));
    }
    // A long line without the marker: keep only what may begin it.
    if (at == std::string::npos && pending.size() > marker.size()) {
      pending.erase(0, pending.size() - marker.size());
    }
  }
  if (std::optional<std::string> params = params_in(pending)) {
    if (params->size() <= kMaxModelParamsBytes) return ValidUtf8(*std::move(params));
  } else {
    return std::string();
  }
  return absl::InvalidArgumentError(StrCat("its line with '", marker, "' hands on more than ",
                                           kMaxModelParamsBytes,
                                           " bytes, the most tony passes to the tasks"));
}

}  // namespace tony::executor
