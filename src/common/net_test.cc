#include "common/net.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

// Binds a fresh TCP socket to 0.0.0.0:port; returns 0 or the errno of bind.
int TryBind(int port, bool reuse_port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  int one = 1;
  if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  int result =
      bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0 ? 0 : errno;
  close(fd);
  return result;
}

TEST(HostForAddressTest, OnlyIpv6LiteralsGetBrackets) {
  EXPECT_EQ(HostForAddress("fd00::5"), "[fd00::5]");
  EXPECT_EQ(HostForAddress("[fd00::5]"), "[fd00::5]");
  EXPECT_EQ(HostForAddress("10.0.0.5"), "10.0.0.5");
  EXPECT_EQ(HostForAddress("node1.example"), "node1.example");
}

TEST(ReservedPortTest, HoldsThePortUntilReleased) {
  auto reserved = ReservedPort::Reserve();
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  const int port = reserved->port();
  EXPECT_GT(port, 0);
  EXPECT_TRUE(reserved->held());
  EXPECT_EQ(TryBind(port, false), EADDRINUSE);
  EXPECT_EQ(TryBind(port, true), EADDRINUSE);  // The holder did not opt in to sharing.
  reserved->Release();
  EXPECT_FALSE(reserved->held());
  EXPECT_EQ(reserved->port(), port);
  EXPECT_EQ(TryBind(port, false), 0);
}

TEST(ReservedPortTest, ReusePortLetsAnotherReusePortSocketBind) {
  auto reserved = ReservedPort::Reserve(0, /*reuse_port=*/true);
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  EXPECT_EQ(TryBind(reserved->port(), true), 0);
  EXPECT_EQ(TryBind(reserved->port(), false), EADDRINUSE);
}

TEST(ReservedPortTest, ReservingATakenPortNamesIt) {
  auto first = ReservedPort::Reserve();
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = ReservedPort::Reserve(first->port());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find(std::to_string(first->port())), std::string::npos)
      << second.status();
  EXPECT_NE(second.status().message().find("Address already in use"), std::string::npos);
  EXPECT_FALSE(ReservedPort::Reserve(70000).ok());
}

TEST(ReservedPortTest, MovingKeepsTheReservation) {
  auto reserved = ReservedPort::Reserve();
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  const int port = reserved->port();
  ReservedPort moved = std::move(*reserved);
  reserved->Release();  // The moved-from object holds nothing.
  EXPECT_EQ(moved.port(), port);
  EXPECT_EQ(TryBind(port, false), EADDRINUSE);
  auto other = ReservedPort::Reserve();
  ASSERT_TRUE(other.ok());
  moved = std::move(*other);  // Releases the first port.
  EXPECT_EQ(TryBind(port, false), 0);
  EXPECT_EQ(TryBind(moved.port(), false), EADDRINUSE);
}

TEST(AdvertisedHostTest, PrefersTonyHost) {
  ASSERT_EQ(setenv("TONY_HOST", "worker-7.example.com", 1), 0);
  EXPECT_EQ(AdvertisedHost(), "worker-7.example.com");
  ASSERT_EQ(setenv("TONY_HOST", "", 1), 0);
  EXPECT_FALSE(AdvertisedHost().empty());
  unsetenv("TONY_HOST");
  EXPECT_FALSE(AdvertisedHost().empty());
}

TEST(ResolveListenAddressTest, ALiteralIsItsAddressAndAHostOfNoneIsNamed) {
  absl::StatusOr<ListenAddress> v4 = ResolveListenAddress("127.0.0.1", "the store");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->family, AF_INET);
  EXPECT_EQ(v4->size, sizeof(sockaddr_in));
  EXPECT_EQ(IpAddressOf(reinterpret_cast<const sockaddr*>(&v4->address)),
            ParseIpAddress("127.0.0.1"));
  absl::StatusOr<ListenAddress> none = ResolveListenAddress("no-such-host.invalid", "the store");
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::StartsWith(none.status().message(),
                               "the store cannot listen on 'no-such-host.invalid': "))
      << none.status();
}

}  // namespace
}  // namespace tony
