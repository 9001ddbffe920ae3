#include "am/c10d_store.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace tony::am {
namespace {

// A client that speaks torch's store protocol byte by byte (the wire format in c10d_store.h).
class Client {
 public:
  explicit Client(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~Client() { close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }

  Client& Byte(uint8_t value) {
    pending_.push_back(static_cast<char>(value));
    return *this;
  }
  Client& U64(uint64_t value) {
    char bytes[8];
    std::memcpy(bytes, &value, 8);
    pending_.append(bytes, 8);
    return *this;
  }
  Client& Str(const std::string& value) {
    U64(value.size());
    pending_ += value;
    return *this;
  }
  // Sends what was built, `piece` bytes at a time.
  void Send(size_t piece = 0) {
    if (piece == 0) piece = pending_.size();
    for (size_t at = 0; at < pending_.size(); at += piece) {
      ASSERT_GT(
          send(fd_, pending_.data() + at, std::min(piece, pending_.size() - at), MSG_NOSIGNAL), 0);
    }
    pending_.clear();
  }

  // Reads exactly n bytes within 10 s; nullopt when the connection ended or nothing came.
  std::optional<std::string> Read(size_t n, int timeout_ms = 10000) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (out.size() < n) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0)
        return std::nullopt;
      char buffer[4096];
      const ssize_t got = read(fd_, buffer, std::min(sizeof(buffer), n - out.size()));
      if (got <= 0) return std::nullopt;
      out.append(buffer, static_cast<size_t>(got));
    }
    return out;
  }
  std::optional<uint64_t> ReadU64() {
    std::optional<std::string> bytes = Read(8);
    if (!bytes) return std::nullopt;
    uint64_t value = 0;
    std::memcpy(&value, bytes->data(), 8);
    return value;
  }
  std::optional<std::string> ReadStr() {
    std::optional<uint64_t> size = ReadU64();
    if (!size) return std::nullopt;
    return Read(*size);
  }
  // Whether the store closed the connection within 10 s.
  bool Closed() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 10000) <= 0) return false;
    char byte;
    return read(fd_, &byte, 1) <= 0;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
};

class C10dStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<int> port = store_.Start("127.0.0.1");
    ASSERT_TRUE(port.ok()) << port.status();
    port_ = *port;
    store_.AllowHost("127.0.0.1");
  }

  C10dStore store_;
  int port_ = 0;
};

TEST_F(C10dStoreTest, AnswersEveryQueryAsTorchsStoreDoes) {
  Client c(port_);
  ASSERT_TRUE(c.connected());
  c.Byte(0).Str("/a").Str("one").Send();  // SET: no answer
  c.Byte(2).Str("/a").Send();             // GET
  EXPECT_EQ(c.ReadStr(), "one");
  c.Byte(3).Str("/n").U64(5).Send();  // ADD to an absent key
  EXPECT_EQ(c.ReadU64(), 5u);
  c.Byte(3).Str("/n").U64(static_cast<uint64_t>(-7)).Send();
  EXPECT_EQ(static_cast<int64_t>(*c.ReadU64()), -2);
  c.Byte(2).Str("/n").Send();
  EXPECT_EQ(c.ReadStr(), "-2") << "ADD keeps the value as decimal text";
  // COMPARE_SET: absent with "" expected sets it; absent with another expected answers that and
  // sets nothing; present and equal swaps; present and different answers what is there.
  c.Byte(1).Str("/s").Str("").Str("v1").Send();
  EXPECT_EQ(c.ReadStr(), "v1");
  c.Byte(1).Str("/t").Str("x").Str("v1").Send();
  EXPECT_EQ(c.ReadStr(), "x");
  c.Byte(1).Str("/s").Str("v1").Str("v2").Send();
  EXPECT_EQ(c.ReadStr(), "v2");
  c.Byte(1).Str("/s").Str("v1").Str("v3").Send();
  EXPECT_EQ(c.ReadStr(), "v2");
  c.Byte(6).Send();  // GETNUMKEYS: /a, /n, /s
  EXPECT_EQ(c.ReadU64(), 3u);
  c.Byte(4).U64(2).Str("/a").Str("/s").Send();  // CHECK
  EXPECT_EQ(c.Read(1), std::string(1, '\0'));
  c.Byte(4).U64(2).Str("/a").Str("/t").Send();
  EXPECT_EQ(c.Read(1), std::string(1, '\1'));
  c.Byte(8).Str("/a").Send();  // DELETE_KEY
  EXPECT_EQ(c.ReadU64(), 1u);
  c.Byte(8).Str("/a").Send();
  EXPECT_EQ(c.ReadU64(), 0u);
  EXPECT_EQ(store_.size(), 2u);
  // GET of an absent key ends the connection, as torch's own store does.
  c.Byte(2).Str("/a").Send();
  EXPECT_TRUE(c.Closed());
}

TEST_F(C10dStoreTest, AWaiterIsAnsweredOnceEveryKeyIsThereWhoeverWroteIt) {
  Client waiter(port_);
  Client writer(port_);
  waiter.Byte(5).U64(3).Str("/k1").Str("/k2").Str("/k2").Send();  // WAIT
  EXPECT_EQ(waiter.Read(1, 300), std::nullopt) << "no key is there yet";
  writer.Byte(0).Str("/k1").Str("1").Send();
  EXPECT_EQ(waiter.Read(1, 300), std::nullopt) << "one of two keys";
  writer.Byte(3).Str("/k2").U64(1).Send();  // an ADD makes a key too
  EXPECT_EQ(writer.ReadU64(), 1u);
  EXPECT_EQ(waiter.Read(1), std::string(1, '\0'));
  // Keys that are there answer at once; the connection goes on.
  waiter.Byte(5).U64(1).Str("/k1").Send();
  EXPECT_EQ(waiter.Read(1), std::string(1, '\0'));
  // A waiter that leaves is forgotten: the key it waited for still sets.
  {
    Client gone(port_);
    gone.Byte(5).U64(1).Str("/later").Send();
  }
  writer.Byte(1).Str("/later").Str("").Str("x").Send();  // COMPARE_SET wakes waiters too
  EXPECT_EQ(writer.ReadStr(), "x");
  Client late(port_);
  late.Byte(5).U64(1).Str("/later").Send();
  EXPECT_EQ(late.Read(1), std::string(1, '\0'));
}

TEST_F(C10dStoreTest, AQueryArrivingInPiecesIsAnsweredWhenWhole) {
  Client c(port_);
  c.Byte(0).Str("/piece").Str(std::string(100000, 'v')).Send(7);
  c.Byte(2).Str("/piece").Send(1);
  EXPECT_EQ(c.ReadStr(), std::string(100000, 'v'));
}

TEST_F(C10dStoreTest, QueriesPastTheLimitsOrUnknownEndOnlyTheirConnection) {
  Client other(port_);
  other.Byte(0).Str("/kept").Str("1").Send();
  Client unknown(port_);
  unknown.Byte(9).Send();
  EXPECT_TRUE(unknown.Closed());
  Client watch(port_);
  watch.Byte(7).Str("/kept").Send();  // WATCH_KEY is not served
  EXPECT_TRUE(watch.Closed());
  Client long_key(port_);
  long_key.Byte(0).U64(C10dStore::kMaxKeyBytes + 1).Send();  // the length alone is enough
  EXPECT_TRUE(long_key.Closed());
  Client long_value(port_);
  long_value.Byte(0).Str("/v").U64(C10dStore::kMaxValueBytes + 1).Send();
  EXPECT_TRUE(long_value.Closed());
  Client many_keys(port_);
  many_keys.Byte(5).U64(uint64_t{1} << 40).Send();
  EXPECT_TRUE(many_keys.Closed());
  Client not_a_number(port_);
  not_a_number.Byte(0).Str("/text").Str("abc").Byte(3).Str("/text").U64(1).Send();
  EXPECT_TRUE(not_a_number.Closed());
  other.Byte(2).Str("/kept").Send();
  EXPECT_EQ(other.ReadStr(), "1");
}

TEST_F(C10dStoreTest, AllTheValuesTogetherHaveALimit) {
  Client c(port_);
  const std::string big(C10dStore::kMaxValueBytes, 'x');
  const size_t fit = C10dStore::kMaxTotalBytes / (big.size() + 8);
  for (size_t i = 0; i < fit; ++i) c.Byte(0).Str("/" + std::to_string(i)).Str(big).Send();
  c.Byte(6).Send();
  EXPECT_EQ(c.ReadU64(), fit);
  // Replacing a value within the limit is fine; one more is not.
  c.Byte(0).Str("/0").Str(big).Send();
  c.Byte(6).Send();
  EXPECT_EQ(c.ReadU64(), fit);
  c.Byte(0).Str("/one-more").Str(big).Send();
  EXPECT_TRUE(c.Closed());
  EXPECT_EQ(store_.size(), fit);
  store_.Clear();
  EXPECT_EQ(store_.size(), 0u);
  Client after(port_);
  after.Byte(0).Str("/one-more").Str(big).Byte(6).Send();
  EXPECT_EQ(after.ReadU64(), 1u) << "Clear frees the room";
}

TEST_F(C10dStoreTest, QueriesSentBehindAParkedWaitAreAnsweredAfterIt) {
  Client c(port_);
  // A WAIT for an absent key, then a GET, in one go: the GET's answer must not come first.
  c.Byte(0).Str("/here").Str("v").Byte(5).U64(1).Str("/later").Byte(2).Str("/here").Send();
  EXPECT_EQ(c.Read(1, 300), std::nullopt) << "nothing is answered while the WAIT is parked";
  Client writer(port_);
  writer.Byte(0).Str("/later").Str("x").Send();
  EXPECT_EQ(c.Read(1), std::string(1, '\0')) << "the WAIT first";
  EXPECT_EQ(c.ReadStr(), "v") << "then the GET behind it";
}

TEST_F(C10dStoreTest, AnswersNotReadHoldFurtherQueriesBackUntilTheClientReads) {
  Client c(port_);
  const std::string big(C10dStore::kMaxValueBytes, 'b');
  c.Byte(0).Str("/big").Str(big).Send();
  // Ten times the value in answers, asked for at once: the store answers as the client reads.
  for (int i = 0; i < 10; ++i) c.Byte(2).Str("/big").Send();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(c.ReadStr(), big) << "answer " << i;
  c.Byte(6).Send();
  EXPECT_EQ(c.ReadU64(), 1u);
}

TEST(C10dStoreLimitsTest, ConnectionsPastTheLimitAreClosedAndStopEndsTheRest) {
  C10dStore store(/*max_connections=*/2);
  absl::StatusOr<int> port = store.Start("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.status();
  store.AllowHost("127.0.0.1");
  Client first(*port);
  Client second(*port);
  first.Byte(0).Str("/k").Str("1").Byte(6).Send();
  EXPECT_EQ(first.ReadU64(), 1u);
  second.Byte(6).Send();
  EXPECT_EQ(second.ReadU64(), 1u);
  Client third(*port);
  third.Byte(6).Send();
  EXPECT_TRUE(third.Closed());
  // A parked waiter and an idle client do not hold Stop up.
  first.Byte(5).U64(1).Str("/never").Send();
  store.Stop();
  EXPECT_TRUE(first.Closed());
  EXPECT_TRUE(second.Closed());
}

TEST(C10dStoreAccessTest, APeerThatIsNotTheJobsIsClosedBeforeAnythingIsRead) {
  C10dStore store;
  absl::StatusOr<int> port = store.Start("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.status();
  store.AllowHost("192.0.2.7");  // TEST-NET: never this machine
  Client stranger(*port);
  ASSERT_TRUE(stranger.connected()) << "the kernel accepts; the store closes";
  stranger.Byte(0).Str("/x").Str("1").Send();
  EXPECT_TRUE(stranger.Closed());
  EXPECT_EQ(store.size(), 0u);
  store.AllowHost("localhost");  // a name, resolved on the next unknown peer
  Client known(*port);
  known.Byte(0).Str("/x").Str("1").Byte(6).Send();
  EXPECT_EQ(known.ReadU64(), 1u);
}

// torch's own client (Debian's python3-torch, 1.13) against the store: TCPStore's operations and
// the c10d rendezvous backend's state exchange, as torchrun's agents use them.
TEST_F(C10dStoreTest, TorchsOwnClientAndRendezvousBackendWorkAgainstIt) {
  if (system("/usr/bin/python3 -c 'import torch.distributed' >/dev/null 2>&1") != 0) {
    if (getenv("TONY_REQUIRE_TORCH") != nullptr) FAIL() << "torch is required";
    GTEST_SKIP() << "no torch for /usr/bin/python3";
  }
  const std::string script = testing::TempDir() + "/c10d_client.py";
  std::ofstream(script) << R"(
import sys, threading
from datetime import timedelta
from torch.distributed import TCPStore
from torch.distributed.elastic.rendezvous.c10d_rendezvous_backend import C10dRendezvousBackend
port = int(sys.argv[1])
s = TCPStore("127.0.0.1", port, is_master=False, timeout=timedelta(seconds=20))
s.set("a", "1")
assert s.get("a") == b"1"
assert s.add("n", 3) == 3 and s.add("n", 4) == 7
assert s.compare_set("c", "", "x") == b"x"
assert s.compare_set("c", "y", "z") == b"x"
assert s.num_keys() >= 3
assert s.delete_key("a") and not s.delete_key("a")
other = TCPStore("127.0.0.1", port, is_master=False, timeout=timedelta(seconds=20))
threading.Timer(0.3, lambda: other.set("late", "v")).start()
s.wait(["late"])
assert s.get("late") == b"v"
b1 = C10dRendezvousBackend(s, "job")
b2 = C10dRendezvousBackend(other, "job")
assert b1.get_state() is None
state, token, ok = b1.set_state(b"round-1")
assert ok and state == b"round-1"
_, _, ok2 = b2.set_state(b"stale", b"wrong-token")
assert not ok2
assert b2.get_state()[0] == b"round-1"
print("ok")
)";
  FILE* out =
      popen(("/usr/bin/python3 " + script + " " + std::to_string(port_) + " 2>&1").c_str(), "r");
  ASSERT_NE(out, nullptr);
  std::string text;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), out) != nullptr) text += buffer;
  const int status = pclose(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_EQ(text, "ok\n");
}

}  // namespace
}  // namespace tony::am
