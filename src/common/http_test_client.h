#pragma once
// A minimal HTTP/1.0 client for the unit tests of tony's HTTP servers (the AM's and the history
// server): raw sockets, so that a test can speak from another loopback address (another "host")
// and see exactly what came back.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace tony::http_test {

// A socket connected to 127.0.0.1:port from `source`, another loopback address standing for
// another host; -1 on failure.
inline int Connect(int port, const char* source = "127.0.0.1") {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A request (or another method) from `source`, with `body` when it is not empty; the whole answer,
// headers included, as far as it came before the server closed or 5 s passed; "" when nothing
// answered.
inline std::string Request(int port, const std::string& method, const std::string& path,
                           const char* source = "127.0.0.1", const std::string& body = "") {
  const int fd = Connect(port, source);
  if (fd < 0) return "";
  std::string request = method + " " + path + " HTTP/1.0\r\nHost: x\r\n";
  if (!body.empty()) request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  request += "\r\n" + body;
  (void)!write(fd, request.data(), request.size());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::string answer;
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    pollfd ready{.fd = fd, .events = POLLIN, .revents = 0};
    if (left <= 0 || poll(&ready, 1, static_cast<int>(left)) <= 0) break;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    answer.append(buffer, n);
  }
  close(fd);
  return answer;
}

inline bool IsStatus(const std::string& answer, int code) {
  const std::string status = " " + std::to_string(code) + " ";
  return (answer.starts_with("HTTP/1.0") || answer.starts_with("HTTP/1.1")) &&
         answer.compare(8, status.size(), status) == 0;
}

// The body of an answer: what follows the blank line after the headers.
inline std::string BodyOf(const std::string& answer) {
  const size_t end = answer.find("\r\n\r\n");
  return end == std::string::npos ? "" : answer.substr(end + 4);
}

}  // namespace tony::http_test
