#pragma once
// A blocking TCP connection in which every connect, read and write ends by a deadline.
//
// Deadlines are steady_clock time points rather than an injected tony::Clock: they bound real
// waits in poll(2), which only real time can end.
//
// Errors: kDeadlineExceeded when the deadline passes, kUnavailable when the connection cannot be
// made or is closed or reset by the peer (the message says "closed by" for an orderly EOF), each
// naming host:port.
//
// Threads: one thread at a time per instance.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tony::hadoop {

class TcpStream {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  // Resolves host (blocking getaddrinfo, not bounded by the deadline) and tries each address
  // until one connects. Sets TCP_NODELAY and SO_KEEPALIVE.
  [[nodiscard]] static absl::StatusOr<TcpStream> Connect(const std::string& host, int port,
                                                         Deadline deadline);

  TcpStream() = default;
  TcpStream(TcpStream&& other) noexcept;
  TcpStream& operator=(TcpStream&& other) noexcept;
  TcpStream(const TcpStream&) = delete;
  TcpStream& operator=(const TcpStream&) = delete;
  ~TcpStream();

  [[nodiscard]] absl::Status WriteAll(std::string_view data, Deadline deadline);
  // Reads exactly count bytes and appends them to *out.
  [[nodiscard]] absl::Status ReadExact(size_t count, std::string* out, Deadline deadline);

  bool is_open() const { return fd_ >= 0; }
  // host:port, for messages.
  const std::string& peer() const { return peer_; }
  void Close();

 private:
  TcpStream(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}

  int fd_ = -1;
  std::string peer_;
};

}  // namespace tony::hadoop
