#include "common/net.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tony {

absl::StatusOr<ReservedPort> ReservedPort::Reserve(int port, bool reuse_port) {
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot reserve TCP port ", port, ": not in 0..65535"));
  }
  auto failure = [port](const char* what) {
    return absl::ErrnoToStatus(
        errno, port == 0 ? absl::StrCat("cannot reserve a free TCP port (", what, ")")
                         : absl::StrCat("cannot reserve TCP port ", port, " (", what, ")"));
  };
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failure("socket");
  ReservedPort reserved(fd, port);  // Closes fd on every error path.
  int one = 1;
  if (reuse_port && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
    return failure("SO_REUSEPORT");
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) < 0) {
    return failure("bind");
  }
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) < 0) {
    return failure("getsockname");
  }
  reserved.port_ = ntohs(address.sin_port);
  return reserved;
}

ReservedPort::ReservedPort(ReservedPort&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), port_(other.port_) {}

ReservedPort& ReservedPort::operator=(ReservedPort&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    port_ = other.port_;
  }
  return *this;
}

ReservedPort::~ReservedPort() { Release(); }

void ReservedPort::Release() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

std::string AdvertisedHost() {
  const char* configured = std::getenv("TONY_HOST");
  if (configured != nullptr && configured[0] != '\0') return configured;
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) == 0 && name[0] != '\0') {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* result = nullptr;
    if (getaddrinfo(name, nullptr, &hints, &result) == 0) {
      freeaddrinfo(result);
      return name;
    }
  }
  return "127.0.0.1";
}

std::optional<IpAddress> ParseIpAddress(const std::string& text) {
  IpAddress address{};
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    address[10] = address[11] = 0xff;
    std::memcpy(address.data() + 12, &v4, 4);
    return address;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    std::memcpy(address.data(), &v6, 16);
    return address;
  }
  return std::nullopt;
}

std::optional<IpAddress> IpAddressOf(const sockaddr* address) {
  if (address == nullptr) return std::nullopt;
  IpAddress ip{};
  if (address->sa_family == AF_INET) {
    ip[10] = ip[11] = 0xff;
    std::memcpy(ip.data() + 12, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, 4);
    return ip;
  }
  if (address->sa_family == AF_INET6) {
    std::memcpy(ip.data(), &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, 16);
    return ip;
  }
  return std::nullopt;
}

std::vector<IpAddress> ResolveIpAddresses(const std::string& host) {
  if (std::optional<IpAddress> literal = ParseIpAddress(host)) return {*literal};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (host.empty() || getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return {};
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, &freeaddrinfo);
  std::vector<IpAddress> addresses;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    if (std::optional<IpAddress> ip = IpAddressOf(ai->ai_addr)) addresses.push_back(*ip);
  }
  return addresses;
}

std::string HostForAddress(const std::string& host) {
  if (host.find(':') != std::string::npos && !host.starts_with("[")) {
    return absl::StrCat("[", host, "]");
  }
  return host;
}

absl::StatusOr<ListenAddress> ResolveListenAddress(const std::string& bind_host,
                                                   std::string_view what, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc =
      getaddrinfo(bind_host.empty() ? nullptr : bind_host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0 || found == nullptr) {
    if (found != nullptr) freeaddrinfo(found);
    return absl::InvalidArgumentError(absl::StrCat(std::string(what), " cannot listen on '",
                                                   bind_host,
                                                   "': ", rc != 0 ? gai_strerror(rc) : "none"));
  }
  ListenAddress address;
  std::memcpy(&address.address, found->ai_addr, found->ai_addrlen);
  address.size = found->ai_addrlen;
  address.family = found->ai_family;
  freeaddrinfo(found);
  return address;
}

}  // namespace tony
