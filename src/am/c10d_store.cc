#include "am/c10d_store.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "common/net.h"
#include "common/strings.h"

namespace tony::am {
namespace {

// Query types, in torch's order.
enum Query : uint8_t {
  kSet = 0,
  kCompareSet = 1,
  kGet = 2,
  kAdd = 3,
  kCheck = 4,
  kWait = 5,
  kGetNumKeys = 6,
  kWatchKey = 7,
  kDeleteKey = 8,
};
constexpr uint8_t kReady = 0;
constexpr uint8_t kNotReady = 1;
constexpr uint8_t kStopWaiting = 0;

// The most keys one CHECK or WAIT may name, and the most input one connection may hold unread:
// the largest query (COMPARE_SET of a key and two values) and some.
constexpr uint64_t kMaxKeysPerQuery = 1 << 16;
constexpr size_t kMaxInputBytes = 2 * C10dStore::kMaxValueBytes + C10dStore::kMaxKeyBytes + 4096;

// Reads one query's fields from a connection's input. A field that has not fully arrived sets
// `partial`; one past its limit sets `bad`; either way the read fails and the query waits or the
// connection ends.
class Cursor {
 public:
  explicit Cursor(const std::string& input) : input_(input) {}

  bool Byte(uint8_t* out) {
    if (input_.size() - pos_ < 1) return Short();
    *out = static_cast<uint8_t>(input_[pos_++]);
    return true;
  }
  bool U64(uint64_t* out) {
    if (input_.size() - pos_ < sizeof(*out)) return Short();
    std::memcpy(out, input_.data() + pos_, sizeof(*out));
    pos_ += sizeof(*out);
    return true;
  }
  bool Bytes(std::string* out, size_t max) {
    uint64_t size = 0;
    if (!U64(&size)) return false;
    if (size > max) {
      bad = true;
      return false;
    }
    if (input_.size() - pos_ < size) return Short();
    out->assign(input_, pos_, size);
    pos_ += size;
    return true;
  }
  size_t consumed() const { return pos_; }

  bool partial = false;
  bool bad = false;

 private:
  bool Short() {
    partial = true;
    return false;
  }
  const std::string& input_;
  size_t pos_ = 0;
};

void AppendU64(std::string* out, uint64_t value) {
  char bytes[sizeof(value)];
  std::memcpy(bytes, &value, sizeof(value));
  out->append(bytes, sizeof(value));
}

void AppendBytes(std::string* out, const std::string& value) {
  AppendU64(out, value.size());
  out->append(value);
}

}  // namespace

struct C10dStore::Connection {
  int fd = -1;
  uint64_t id = 0;
  std::string in;
  std::string out;
};

C10dStore::~C10dStore() { Stop(); }

absl::StatusOr<int> C10dStore::Start(const std::string& bind_host) {
  if (thread_.joinable()) return absl::FailedPreconditionError("the c10d store already runs");
  absl::StatusOr<ListenAddress> address = ResolveListenAddress(bind_host, "the c10d store");
  if (!address.ok()) return address.status();
  const int fd = socket(address->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(StrCat("socket: ", std::strerror(errno)));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage bound{};
  socklen_t bound_size = sizeof(bound);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address->address), address->size) != 0 ||
      listen(fd, 128) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_size) != 0) {
    const int error = errno;
    close(fd);
    return absl::InternalError(
        StrCat("the c10d store cannot listen on '", bind_host, "': ", std::strerror(error)));
  }
  const int port = bound.ss_family == AF_INET6
                       ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                       : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  const int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    const int error = errno;
    close(fd);
    return absl::InternalError(StrCat("eventfd: ", std::strerror(error)));
  }
  listen_fd_ = fd;
  wake_fd_ = wake;
  thread_ = std::thread([this] { Serve(); });
  return port;
}

void C10dStore::Stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
  thread_.join();
  close(listen_fd_);
  close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
}

void C10dStore::Clear() {
  MutexLock lock(mu_);
  data_.clear();
  total_bytes_ = 0;
}

size_t C10dStore::size() const {
  MutexLock lock(mu_);
  return data_.size();
}

void C10dStore::Serve() {
  std::map<uint64_t, std::unique_ptr<Connection>> owned;
  uint64_t next_id = 1;
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;  // the connection of fds[i + 2]
  char buffer[64 << 10];
  // After accept failed for want of descriptors or memory, the listening socket stays readable:
  // it is left alone until then (steady clock, ms) instead of spinning.
  int64_t accept_paused_until_ms = 0;
  const auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  bool pending = false;  // queries wait to be answered without the peer sending more
  while (true) {
    const int64_t pause_left = accept_paused_until_ms - now_ms();
    fds.assign(
        {{wake_fd_, POLLIN, 0}, {listen_fd_, static_cast<short>(pause_left > 0 ? 0 : POLLIN), 0}});
    ids.clear();
    for (const auto& [id, conn] : owned) {
      fds.push_back({conn->fd, static_cast<short>(POLLIN | (conn->out.empty() ? 0 : POLLOUT)), 0});
      ids.push_back(id);
    }
    const int timeout = pending ? 0 : pause_left > 0 ? static_cast<int>(pause_left) : -1;
    if (poll(fds.data(), fds.size(), timeout) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) break;
    std::vector<uint64_t> ended;
    // Reading needs no lock: the buffers are this thread's alone. A round reads a bounded amount
    // of each connection, so that one fast sender does not hold the others (or Stop) up.
    for (size_t i = 0; i < ids.size(); ++i) {
      if ((fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      Connection& conn = *owned.at(ids[i]);
      for (size_t round = 0; round < 4; ++round) {
        const ssize_t got = read(conn.fd, buffer, sizeof(buffer));
        if (got > 0) {
          conn.in.append(buffer, static_cast<size_t>(got));
          if (conn.in.size() > kMaxInputBytes) {
            ended.push_back(conn.id);
            break;
          }
        } else if (got < 0 && errno == EINTR) {
          continue;
        } else {
          if (got == 0 || errno != EAGAIN) ended.push_back(conn.id);
          break;
        }
      }
    }
    // New peers: only the job's hosts (resolving a name may take the resolver's time, so outside
    // the lock), and only as many as allowed; nothing of a refused peer is read.
    std::vector<std::unique_ptr<Connection>> accepted;
    if ((fds[1].revents & POLLIN) != 0) {
      while (true) {
        sockaddr_storage peer{};
        socklen_t peer_size = sizeof(peer);
        const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &peer_size,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
          if (errno == EINTR || errno == ECONNABORTED) continue;
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            accept_paused_until_ms = now_ms() + 200;
          }
          break;  // EAGAIN: none left
        }
        if (owned.size() + accepted.size() >= max_connections_ ||
            !peers_.Admits(reinterpret_cast<sockaddr*>(&peer))) {
          close(fd);
          continue;
        }
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        auto conn = std::make_unique<Connection>();
        conn->fd = fd;
        conn->id = next_id++;
        accepted.push_back(std::move(conn));
      }
    }
    {
      MutexLock lock(mu_);
      for (std::unique_ptr<Connection>& conn : accepted) {
        connections_[conn->id] = conn.get();
        owned[conn->id] = std::move(conn);
      }
      // Every connection with queries to answer: those that sent some, and those whose parked
      // WAIT was answered or whose answers were read meanwhile; again while a pass answered
      // something, since a query of one connection may release another's.
      for (bool progress = true; progress;) {
        progress = false;
        for (auto& [id, conn] : owned) {
          if (conn->in.empty() || std::find(ended.begin(), ended.end(), id) != ended.end()) {
            continue;
          }
          const size_t before = conn->in.size();
          if (!Process(*conn)) {
            ended.push_back(id);
          } else if (conn->in.size() != before) {
            progress = true;
          }
        }
      }
    }
    // Answers, including those a query of another connection released. A connection whose
    // client read enough of them to go below the limit may answer more at once, without new
    // input: the next round does not wait.
    pending = false;
    for (auto& [id, conn] : owned) {
      const bool held_back = conn->out.size() >= kMaxUnreadAnswerBytes;
      while (!conn->out.empty()) {
        const ssize_t sent = send(conn->fd, conn->out.data(), conn->out.size(), MSG_NOSIGNAL);
        if (sent > 0) {
          conn->out.erase(0, static_cast<size_t>(sent));
        } else {
          if (sent < 0 && errno == EINTR) continue;
          if (sent < 0 && errno != EAGAIN) ended.push_back(id);
          break;
        }
      }
      if (held_back && conn->out.size() < kMaxUnreadAnswerBytes && !conn->in.empty()) {
        pending = true;
      }
    }
    if (ended.empty()) continue;
    MutexLock lock(mu_);
    for (uint64_t id : ended) {
      auto it = owned.find(id);
      if (it == owned.end()) continue;  // listed twice
      close(it->second->fd);
      for (auto waiting = waiting_.begin(); waiting != waiting_.end();) {
        waiting->second.erase(id);
        waiting = waiting->second.empty() ? waiting_.erase(waiting) : std::next(waiting);
      }
      awaited_.erase(id);
      connections_.erase(id);
      owned.erase(it);
    }
  }
  MutexLock lock(mu_);
  for (auto& [id, conn] : owned) close(conn->fd);
  connections_.clear();
  waiting_.clear();
  awaited_.clear();
}

bool C10dStore::Put(const std::string& key, std::string value) {
  size_t total = total_bytes_ + key.size() + value.size();
  auto existing = data_.find(key);
  if (existing != data_.end()) total -= key.size() + existing->second.size();
  if (total > kMaxTotalBytes) return false;
  total_bytes_ = total;
  data_[key] = std::move(value);
  auto waiting = waiting_.find(key);
  if (waiting == waiting_.end()) return true;
  for (uint64_t id : waiting->second) {
    auto left = awaited_.find(id);
    if (left == awaited_.end() || left->second == 0 || --left->second > 0) continue;
    awaited_.erase(left);
    if (auto conn = connections_.find(id); conn != connections_.end()) {
      conn->second->out.push_back(static_cast<char>(kStopWaiting));
    }
  }
  waiting_.erase(waiting);
  return true;
}

bool C10dStore::Process(Connection& conn) {
  // A parked WAIT is answered before anything after it; answers the client has not read hold its
  // further queries back.
  while (!conn.in.empty() && !awaited_.contains(conn.id) &&
         conn.out.size() < kMaxUnreadAnswerBytes) {
    Cursor in(conn.in);
    uint8_t type = 0;
    in.Byte(&type);
    std::string key;
    std::string value;
    std::string expected;
    uint64_t number = 0;
    std::vector<std::string> keys;
    switch (type) {
      case kSet:
        if (in.Bytes(&key, kMaxKeyBytes)) in.Bytes(&value, kMaxValueBytes);
        break;
      case kCompareSet:
        if (in.Bytes(&key, kMaxKeyBytes) && in.Bytes(&expected, kMaxValueBytes)) {
          in.Bytes(&value, kMaxValueBytes);
        }
        break;
      case kGet:
      case kDeleteKey:
        in.Bytes(&key, kMaxKeyBytes);
        break;
      case kAdd:
        if (in.Bytes(&key, kMaxKeyBytes)) in.U64(&number);
        break;
      case kCheck:
      case kWait:
        if (!in.U64(&number)) break;
        if (number > kMaxKeysPerQuery) {
          in.bad = true;
          break;
        }
        for (uint64_t i = 0; i < number; ++i) {
          std::string one;
          if (!in.Bytes(&one, kMaxKeyBytes)) break;
          keys.push_back(std::move(one));
        }
        break;
      case kGetNumKeys:
        break;
      default:  // kWatchKey and unknown types
        return false;
    }
    if (in.bad) return false;
    if (in.partial) return true;  // the rest of the query has not arrived yet
    conn.in.erase(0, in.consumed());

    switch (type) {
      case kSet:
        if (!Put(key, std::move(value))) return false;
        break;
      case kCompareSet: {
        auto current = data_.find(key);
        if (current == data_.end()) {
          if (expected.empty()) {
            AppendBytes(&conn.out, value);
            if (!Put(key, std::move(value))) return false;
          } else {
            AppendBytes(&conn.out, expected);
          }
        } else if (current->second == expected) {
          AppendBytes(&conn.out, value);
          if (!Put(key, std::move(value))) return false;
        } else {
          AppendBytes(&conn.out, current->second);
        }
        break;
      }
      case kGet: {
        auto current = data_.find(key);
        if (current == data_.end()) return false;
        AppendBytes(&conn.out, current->second);
        break;
      }
      case kAdd: {
        auto sum = static_cast<int64_t>(number);
        if (auto current = data_.find(key); current != data_.end()) {
          int64_t before = 0;
          const std::string& text = current->second;
          auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), before);
          if (error != std::errc() || end != text.data() + text.size() ||
              __builtin_add_overflow(before, sum, &sum)) {
            return false;
          }
        }
        AppendU64(&conn.out, static_cast<uint64_t>(sum));
        if (!Put(key, std::to_string(sum))) return false;
        break;
      }
      case kCheck: {
        bool all = true;
        for (const std::string& k : keys) all = all && data_.contains(k);
        conn.out.push_back(static_cast<char>(all ? kReady : kNotReady));
        break;
      }
      case kWait: {
        std::set<std::string> absent;
        for (std::string& k : keys) {
          if (!data_.contains(k)) absent.insert(std::move(k));
        }
        if (absent.empty()) {
          conn.out.push_back(static_cast<char>(kStopWaiting));
          break;
        }
        awaited_[conn.id] = absent.size();
        for (const std::string& k : absent) waiting_[k].insert(conn.id);
        break;
      }
      case kGetNumKeys:
        AppendU64(&conn.out, data_.size());
        break;
      case kDeleteKey: {
        auto current = data_.find(key);
        uint64_t removed = 0;
        if (current != data_.end()) {
          total_bytes_ -= current->first.size() + current->second.size();
          data_.erase(current);
          removed = 1;
        }
        AppendU64(&conn.out, removed);
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

}  // namespace tony::am
