#pragma once
// For the IpcClient tests only: a scripted Hadoop IPC server on 127.0.0.1 (port 0), one thread
// serving each accepted connection in turn, and the client options the tests share.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "common/strings.h"
#include "hadoop/common/tokens.pb.h"
#include "hadoop/ipc/ipc.pb.h"
#include "hadoop/ipc/ipc_client.h"
#include "hadoop/ipc/rpc_codec.h"

namespace tony::hadoop::ipc_test {

using namespace std::literals;

constexpr char kProtocol[] = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";

inline std::string Message(const absl::Status& status) {
  return std::string(ToStd(status.message()));
}

// The server side of one accepted connection. Reads give up after 10 s so that a broken test
// fails instead of hanging.
class ServerConnection {
 public:
  explicit ServerConnection(int fd) : fd_(fd) {
    timeval timeout{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  ~ServerConnection() { Close(); }

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  bool ReadExact(size_t count, std::string* out) {
    out->resize(count);
    size_t got = 0;
    while (got < count) {
      ssize_t n = recv(fd_, out->data() + got, count - got, 0);
      if (n <= 0) return false;
      got += static_cast<size_t>(n);
    }
    return true;
  }

  std::string ReadPreamble() {
    std::string preamble;
    return ReadExact(7, &preamble) ? preamble : "";
  }

  // The body of the next frame, or nullopt at EOF.
  std::optional<std::string> ReadFrame() {
    std::string prefix, body;
    if (!ReadExact(4, &prefix)) return std::nullopt;
    absl::StatusOr<uint32_t> length = DecodeFrameLength(prefix);
    if (!length.ok() || !ReadExact(*length, &body)) return std::nullopt;
    return body;
  }

  void Write(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  }

  void Respond(int32_t call_id, proto::RpcStatus status,
               const google::protobuf::MessageLite* payload = nullptr,
               std::string exception_class = "", std::string error_message = "") {
    proto::RpcResponseHeader header;
    header.set_call_id(static_cast<uint32_t>(call_id));
    header.set_status(status);
    header.set_server_ipc_version(9);
    if (!exception_class.empty()) {
      header.set_exception_class(exception_class);
      header.set_error_message(error_message);
      header.set_error_code(proto::RPC_ERROR_APPLICATION);
    }
    Write(payload == nullptr ? EncodeFrame({&header}) : EncodeFrame({&header, payload}));
  }

  // Reads the preamble and the connection context of a SIMPLE connection.
  bool AcceptSimple(proto::IpcConnectionContext* context = nullptr) {
    if (ReadPreamble() != "hrpc\x09\x00\x00"s) return false;
    std::optional<std::string> body = ReadFrame();
    if (!body.has_value()) return false;
    size_t pos = 0;
    proto::RpcRequestHeader header;
    proto::IpcConnectionContext parsed;
    if (!ReadDelimited(*body, &pos, &header, "header").ok() ||
        !ReadDelimited(*body, &pos, &parsed, "context").ok()) {
      return false;
    }
    if (header.call_id() != kConnectionContextCallId || header.retry_count() != -1 ||
        header.client_id().size() != kClientIdBytes) {
      return false;
    }
    if (context != nullptr) *context = parsed;
    return true;
  }

  struct Call {
    proto::RpcRequestHeader header;
    proto::ProtobufRequestHeader method;
    proto::TokenMessage request;
  };

  std::optional<Call> ReadCall() {
    std::optional<std::string> body = ReadFrame();
    if (!body.has_value()) return std::nullopt;
    Call call;
    size_t pos = 0;
    if (!ReadDelimited(*body, &pos, &call.header, "header").ok() ||
        !ReadDelimited(*body, &pos, &call.method, "method").ok() ||
        !ReadDelimited(*body, &pos, &call.request, "request").ok() || pos != body->size()) {
      return std::nullopt;
    }
    return call;
  }

  // Blocks until the client closes the connection (or 10 s pass).
  void WaitForEof() {
    std::string byte;
    while (ReadExact(1, &byte)) {
    }
  }

 private:
  int fd_;
};

// A TCP server on 127.0.0.1, port 0, that hands each accepted connection, one after the other,
// to a handler on its own thread.
class FakeServer {
 public:
  using Handler = std::function<void(ServerConnection&, int index)>;

  explicit FakeServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(listen(listen_fd_, 8), 0);
    socklen_t length = sizeof(address);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }

  ~FakeServer() {
    stop_ = true;
    thread_.join();
    close(listen_fd_);
  }

  int port() const { return port_; }
  int connections() const { return connections_; }

 private:
  void Loop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ServerConnection connection(fd);
      handler_(connection, connections_++);
    }
  }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

inline IpcClientOptions Options(int port) {
  IpcClientOptions options;
  options.host = "127.0.0.1";
  options.port = port;
  options.protocol = kProtocol;
  options.user = "alice";
  options.connect_timeout = 5s;
  options.call_timeout = 10s;
  return options;
}

inline proto::TokenMessage Request(std::string kind) {
  proto::TokenMessage request;
  request.set_kind(std::move(kind));
  return request;
}

}  // namespace tony::hadoop::ipc_test
