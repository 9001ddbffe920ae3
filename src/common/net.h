#pragma once
// Ports and host names.
//
// Threads: AdvertisedHost may be called from any thread. A ReservedPort is a plain value: one
// thread at a time may use a given instance; different instances are independent.

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

struct sockaddr;

namespace tony {

// A TCP port held by a bound, not listening, socket until Release() or destruction, so that no
// other process takes the port between the task's registration with the AM and the start of the
// user process that will listen on it (TonY issue 365). Another plain bind() to the port fails
// while it is held. With reuse_port the socket has SO_REUSEPORT, so a user process that also sets
// SO_REUSEPORT (as TensorFlow's and gRPC's servers do) can bind the port while tony still holds it;
// since the held socket never listens, it takes no connections away from the user's.
class ReservedPort {
 public:
  // port 0: any free port. Binds 0.0.0.0. Fails, naming the port, if it is taken.
  [[nodiscard]] static absl::StatusOr<ReservedPort> Reserve(int port = 0, bool reuse_port = false);

  ReservedPort(ReservedPort&& other) noexcept;
  ReservedPort& operator=(ReservedPort&& other) noexcept;
  ReservedPort(const ReservedPort&) = delete;
  ReservedPort& operator=(const ReservedPort&) = delete;
  ~ReservedPort();

  // The port number; still valid after Release().
  int port() const { return port_; }
  // Whether the socket is still held.
  bool held() const { return fd_ >= 0; }
  // Closes the socket so that the port can be bound by anyone. Idempotent.
  void Release();

 private:
  ReservedPort(int fd, int port) : fd_(fd), port_(port) {}

  int fd_ = -1;
  int port_ = 0;
};

// This machine's name as other machines should reach it: $TONY_HOST if set and not empty, else
// gethostname() if that name resolves (getaddrinfo), else "127.0.0.1".
std::string AdvertisedHost();

// `host` as the host part of "host:port": an IPv6 literal in brackets, anything else as it is.
std::string HostForAddress(const std::string& host);

// An IP address as 16 bytes, IPv4 as IPv4-mapped IPv6, so that both forms of a peer compare equal.
using IpAddress = std::array<uint8_t, 16>;

// An IPv4 or IPv6 literal; nullopt for anything else (host names are not resolved).
std::optional<IpAddress> ParseIpAddress(const std::string& text);
// The address of an AF_INET or AF_INET6 socket address; nullopt for other families or null.
std::optional<IpAddress> IpAddressOf(const sockaddr* address);
// Every address `host` (a literal or a name, through getaddrinfo) stands for; empty when it
// resolves to none. May block on the resolver.
std::vector<IpAddress> ResolveIpAddresses(const std::string& host);

// Where a server listens: the first address `bind_host` (a literal or a name; "" for every
// address) stands for, with `port` (0: the system picks). InvalidArgument, naming `what` and the
// host, if it stands for none. May block on the resolver.
struct ListenAddress {
  sockaddr_storage address{};
  socklen_t size = 0;
  int family = 0;  // AF_INET or AF_INET6
};
absl::StatusOr<ListenAddress> ResolveListenAddress(const std::string& bind_host,
                                                   std::string_view what, int port = 0);

}  // namespace tony
