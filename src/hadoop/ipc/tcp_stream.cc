#include "hadoop/ipc/tcp_stream.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/strings.h"

namespace tony::hadoop {
namespace {

// Milliseconds left until the deadline for poll(2), rounded up so that a wait never ends before
// the deadline; 0 once it has passed.
int PollTimeoutMs(TcpStream::Deadline deadline) {
  auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
}

// Waits until fd is ready for `events`. OK, kDeadlineExceeded, or kUnavailable on poll errors.
absl::Status WaitFor(int fd, short events, TcpStream::Deadline deadline, std::string_view doing,
                     std::string_view peer) {
  while (true) {
    int timeout = PollTimeoutMs(deadline);
    if (timeout == 0) {
      return absl::DeadlineExceededError(StrCat("timed out ", doing, " ", peer));
    }
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, timeout);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(
          StrCat("poll failed ", doing, " ", peer, ": ", std::strerror(errno)));
    }
    if (n > 0) return absl::OkStatus();  // readiness or an error condition the next call reports
  }
}

}  // namespace

absl::StatusOr<TcpStream> TcpStream::Connect(const std::string& host, int port, Deadline deadline) {
  std::string peer = StrCat(host, ":", port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &addresses);
  if (rc != 0) {
    return absl::UnavailableError(StrCat("cannot resolve ", peer, ": ", gai_strerror(rc)));
  }
  std::string last_error = "no addresses";
  for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    TcpStream stream(fd, peer);
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last_error = std::strerror(errno);
        continue;
      }
      absl::Status waited = WaitFor(fd, POLLOUT, deadline, "connecting to", peer);
      if (!waited.ok()) {
        freeaddrinfo(addresses);
        return waited;
      }
      int error = 0;
      socklen_t length = sizeof(error);
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
      if (error != 0) {
        last_error = std::strerror(error);
        continue;
      }
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    freeaddrinfo(addresses);
    return stream;
  }
  freeaddrinfo(addresses);
  return absl::UnavailableError(StrCat("cannot connect to ", peer, ": ", last_error));
}

TcpStream::TcpStream(TcpStream&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), peer_(std::move(other.peer_)) {}

TcpStream& TcpStream::operator=(TcpStream&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = std::exchange(other.fd_, -1);
    peer_ = std::move(other.peer_);
  }
  return *this;
}

TcpStream::~TcpStream() { Close(); }

void TcpStream::Close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

absl::Status TcpStream::WriteAll(std::string_view data, Deadline deadline) {
  if (fd_ < 0) return absl::UnavailableError(StrCat("connection to ", peer_, " is closed"));
  while (!data.empty()) {
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (absl::Status s = WaitFor(fd_, POLLOUT, deadline, "writing to", peer_); !s.ok()) return s;
      continue;
    }
    return absl::UnavailableError(
        StrCat("cannot write to ", peer_, ": ", std::strerror(n < 0 ? errno : EPIPE)));
  }
  return absl::OkStatus();
}

absl::Status TcpStream::ReadExact(size_t count, std::string* out, Deadline deadline) {
  if (fd_ < 0) return absl::UnavailableError(StrCat("connection to ", peer_, " is closed"));
  size_t start = out->size();
  out->resize(start + count);
  size_t got = 0;
  while (got < count) {
    ssize_t n = ::recv(fd_, out->data() + start + got, count - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      out->resize(start + got);
      return absl::UnavailableError(
          StrCat("connection closed by ", peer_, " after ", got, " of ", count, " expected bytes"));
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (absl::Status s = WaitFor(fd_, POLLIN, deadline, "reading from", peer_); !s.ok()) {
        out->resize(start + got);
        return s;
      }
      continue;
    }
    int error = errno;
    out->resize(start + got);
    return absl::UnavailableError(StrCat("cannot read from ", peer_, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace tony::hadoop
