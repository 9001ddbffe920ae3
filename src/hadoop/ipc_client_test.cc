#include "hadoop/ipc_client.h"

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
#include "hadoop/digest_md5_mechanism.h"
#include "hadoop/digest_md5_test_server.h"
#include "hadoop/ipc.pb.h"
#include "hadoop/rpc_codec.h"

namespace tony::hadoop {
namespace {

using namespace std::literals;

constexpr char kProtocol[] = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

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

IpcClientOptions Options(int port) {
  IpcClientOptions options;
  options.host = "127.0.0.1";
  options.port = port;
  options.protocol = kProtocol;
  options.user = "alice";
  options.connect_timeout = 5s;
  options.call_timeout = 10s;
  return options;
}

proto::TokenMessage Request(std::string kind) {
  proto::TokenMessage request;
  request.set_kind(std::move(kind));
  return request;
}

TEST(IpcClientTest, SimpleAuthCallSucceedsThenReportsRemoteErrorOnSameConnection) {
  std::optional<proto::IpcConnectionContext> seen_context;
  std::optional<ServerConnection::Call> first, second;
  auto server = std::make_unique<FakeServer>([&](ServerConnection& c, int) {
    proto::IpcConnectionContext context;
    if (!c.AcceptSimple(&context)) return;
    seen_context = context;
    first = c.ReadCall();
    if (!first) return;
    proto::TokenMessage reply;
    reply.set_kind(StrCat("echo:", first->request.kind()));
    c.Respond(first->header.call_id(), proto::RPC_STATUS_SUCCESS, &reply);
    second = c.ReadCall();
    if (!second) return;
    c.Respond(second->header.call_id(), proto::RPC_STATUS_ERROR, nullptr,
              "org.apache.hadoop.yarn.exceptions.YarnException",
              "boom\n\tat org.apache.hadoop.yarn.Foo(Foo.java:1)");
    c.WaitForEof();
  });

  const int port = server->port();
  absl::StatusOr<std::unique_ptr<IpcClient>> client = IpcClient::Connect(Options(port));
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_FALSE((*client)->authenticated_with_sasl());
  proto::TokenMessage response;
  absl::Status ok = (*client)->Call("getNewApplication", Request("a"), &response);
  ASSERT_TRUE(ok.ok()) << ok;
  EXPECT_EQ(response.kind(), "echo:a");

  absl::Status error = (*client)->Call("getNewApplication", Request("b"), &response);
  EXPECT_EQ(error.code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(Message(error),
            StrCat("ApplicationClientProtocolPB.getNewApplication on 127.0.0.1:", port,
                   ": org.apache.hadoop.yarn.exceptions.YarnException: boom"));
  ASSERT_TRUE(GetRemoteError(error).has_value());
  EXPECT_EQ(GetRemoteError(error)->class_name, "org.apache.hadoop.yarn.exceptions.YarnException");
  (*client)->Close();
  server.reset();  // joins the server thread: what it recorded is now safe to read

  ASSERT_TRUE(seen_context.has_value());
  EXPECT_EQ(seen_context->protocol(), kProtocol);
  EXPECT_EQ(seen_context->user_info().effective_user(), "alice");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->header.call_id(), 0);
  EXPECT_EQ(first->header.retry_count(), 0);
  EXPECT_EQ(first->header.rpc_kind(), proto::RPC_KIND_PROTOCOL_BUFFER);
  EXPECT_EQ(first->header.client_id(), (*client)->client_id());
  EXPECT_EQ(first->method.method_name(), "getNewApplication");
  EXPECT_EQ(first->method.declaring_class_protocol(), kProtocol);
  EXPECT_EQ(first->method.client_protocol_version(), 1u);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->header.call_id(), 1);
}

TEST(IpcClientTest, CallTimesOutWhenTheServerNeverAnswers) {
  FakeServer server([](ServerConnection& c, int) {
    if (!c.AcceptSimple()) return;
    c.ReadCall();
    c.WaitForEof();
  });
  absl::StatusOr<std::unique_ptr<IpcClient>> client = IpcClient::Connect(Options(server.port()));
  ASSERT_TRUE(client.ok()) << client.status();
  proto::TokenMessage response;
  auto start = std::chrono::steady_clock::now();
  absl::Status status = (*client)->Call("getClusterMetrics", Request("x"), &response, 200ms);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_NE(Message(status).find("getClusterMetrics"), std::string::npos);
  EXPECT_GE(elapsed, 200ms);
  EXPECT_LT(elapsed, 5s);
}

TEST(IpcClientTest, ReconnectsOnceAndResendsWithRetryCountOne) {
  std::optional<ServerConnection::Call> first, resent;
  auto server = std::make_unique<FakeServer>([&](ServerConnection& c, int index) {
    if (!c.AcceptSimple()) return;
    if (index == 0) {
      first = c.ReadCall();
      return;  // closes without answering, like a server that dropped an idle connection
    }
    resent = c.ReadCall();
    if (!resent) return;
    proto::TokenMessage reply;
    reply.set_kind("second connection");
    c.Respond(resent->header.call_id(), proto::RPC_STATUS_SUCCESS, &reply);
    c.WaitForEof();
  });
  absl::StatusOr<std::unique_ptr<IpcClient>> client = IpcClient::Connect(Options(server->port()));
  ASSERT_TRUE(client.ok()) << client.status();
  proto::TokenMessage response;
  absl::Status status = (*client)->Call("getApplications", Request("x"), &response);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(response.kind(), "second connection");
  (*client)->Close();
  server.reset();
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(resent.has_value());
  EXPECT_EQ(first->header.retry_count(), 0);
  EXPECT_EQ(resent->header.retry_count(), 1);
  EXPECT_EQ(resent->header.call_id(), first->header.call_id());
  EXPECT_EQ(resent->header.client_id(), first->header.client_id());
}

TEST(IpcClientTest, GivesUpAfterTheSecondConnectionAlsoCloses) {
  FakeServer server([](ServerConnection& c, int) {
    if (!c.AcceptSimple()) return;
    c.ReadCall();
  });
  absl::StatusOr<std::unique_ptr<IpcClient>> client = IpcClient::Connect(Options(server.port()));
  ASSERT_TRUE(client.ok()) << client.status();
  proto::TokenMessage response;
  absl::Status status = (*client)->Call("getApplications", Request("x"), &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_NE(Message(status).find("closed by 127.0.0.1"), std::string::npos) << status;
  EXPECT_EQ(server.connections(), 2);
}

TEST(IpcClientTest, ConnectionRefusedIsUnavailable) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);  // nothing listens on the port now
  absl::StatusOr<std::unique_ptr<IpcClient>> client =
      IpcClient::Connect(Options(ntohs(address.sin_port)));
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(Message(client.status()).find("127.0.0.1"), std::string::npos);
}

TEST(IpcClientTest, OversizedResponseIsDataLoss) {
  FakeServer server([](ServerConnection& c, int) {
    if (!c.AcceptSimple()) return;
    if (!c.ReadCall()) return;
    c.Write("\x7f\xff\xff\xff garbage"s);
    c.WaitForEof();
  });
  absl::StatusOr<std::unique_ptr<IpcClient>> client = IpcClient::Connect(Options(server.port()));
  ASSERT_TRUE(client.ok()) << client.status();
  proto::TokenMessage response;
  absl::Status status = (*client)->Call("getApplications", Request("x"), &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_NE(Message(status).find("exceeds"), std::string::npos) << status;
}

TEST(IpcClientTest, FatalErrorAboutTheConnectionReachesTheCaller) {
  FakeServer server([](ServerConnection& c, int) {
    if (!c.AcceptSimple()) return;
    c.Respond(kConnectionContextCallId, proto::RPC_STATUS_FATAL, nullptr,
              "org.apache.hadoop.security.authorize.AuthorizationException",
              "User alice is not authorized for protocol ApplicationClientProtocolPB");
  });
  absl::StatusOr<std::unique_ptr<IpcClient>> client = IpcClient::Connect(Options(server.port()));
  ASSERT_TRUE(client.ok()) << client.status();
  proto::TokenMessage response;
  absl::Status status = (*client)->Call("getApplications", Request("x"), &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
  EXPECT_NE(Message(status).find("User alice is not authorized"), std::string::npos) << status;
}

// The server side of Hadoop's SASL exchange for a token, with the test's DIGEST-MD5 server.
void AcceptToken(ServerConnection& c, const std::string& password_base64, bool* authenticated,
                 std::optional<proto::IpcConnectionContext>* context) {
  if (c.ReadPreamble() != "hrpc\x09\x00\xdf"s) return;
  auto read_sasl = [&](proto::RpcSasl* message) {
    std::optional<std::string> body = c.ReadFrame();
    if (!body) return false;
    size_t pos = 0;
    proto::RpcRequestHeader header;
    if (!ReadDelimited(*body, &pos, &header, "header").ok() || header.call_id() != kSaslCallId ||
        !header.client_id().empty()) {
      return false;
    }
    return ParsePayload(std::string_view(*body).substr(pos), message, "sasl").ok();
  };
  auto send_sasl = [&](const proto::RpcSasl& message) {
    c.Respond(kSaslCallId, proto::RPC_STATUS_SUCCESS, &message);
  };
  digest_test::DigestMd5TestServer server({.password = password_base64});
  proto::RpcSasl message;
  if (read_sasl(&message) && message.state() == proto::SASL_NEGOTIATE) {
    proto::RpcSasl offer;
    offer.set_state(proto::SASL_NEGOTIATE);
    proto::SaslAuthOffer* auth = offer.add_auths();
    auth->set_method("TOKEN");
    auth->set_mechanism("DIGEST-MD5");
    auth->set_protocol("");
    auth->set_server_id("default");
    auth->set_challenge(server.Challenge());
    send_sasl(offer);
    if (read_sasl(&message) && message.state() == proto::SASL_INITIATE) {
      absl::StatusOr<std::string> rspauth = server.Verify(message.token());
      if (rspauth.ok()) {
        proto::RpcSasl success;
        success.set_state(proto::SASL_SUCCESS);
        success.set_token(*rspauth);
        send_sasl(success);
        *authenticated = true;
      } else {
        c.Respond(kSaslCallId, proto::RPC_STATUS_FATAL, nullptr,
                  "javax.security.sasl.SaslException",
                  "DIGEST-MD5: digest response format violation. Mismatched response.");
      }
    }
  }
  if (!*authenticated) return;
  std::optional<std::string> body = c.ReadFrame();
  if (!body) return;
  size_t pos = 0;
  proto::RpcRequestHeader header;
  proto::IpcConnectionContext parsed;
  if (ReadDelimited(*body, &pos, &header, "header").ok() &&
      ReadDelimited(*body, &pos, &parsed, "context").ok()) {
    *context = parsed;
  }
}

const Token kAmRmToken{"\x01\x02identifier\xff"s, "\x10\x20password"s, "YARN_AM_RM_TOKEN",
                       "127.0.0.1:8030"};

TEST(IpcClientTest, TokenAuthRunsDigestMd5AndThenCalls) {
  bool authenticated = false;
  std::optional<proto::IpcConnectionContext> context;
  auto server = std::make_unique<FakeServer>([&](ServerConnection& c, int) {
    AcceptToken(c, DigestMd5Mechanism::Password(kAmRmToken), &authenticated, &context);
    std::optional<ServerConnection::Call> call = c.ReadCall();
    if (!call) return;
    proto::TokenMessage reply;
    reply.set_kind("allocated");
    c.Respond(call->header.call_id(), proto::RPC_STATUS_SUCCESS, &reply);
    c.WaitForEof();
  });
  IpcClientOptions options = Options(server->port());
  options.protocol = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB";
  options.token = kAmRmToken;
  absl::StatusOr<std::unique_ptr<IpcClient>> client = IpcClient::Connect(options);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->authenticated_with_sasl());
  proto::TokenMessage response;
  absl::Status status = (*client)->Call("allocate", Request("x"), &response);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(response.kind(), "allocated");
  (*client)->Close();
  server.reset();
  EXPECT_TRUE(authenticated);
  ASSERT_TRUE(context.has_value());
  EXPECT_EQ(context->protocol(), "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB");
  // With a token the user comes from the token: user_info is present but empty.
  EXPECT_TRUE(context->has_user_info());
  EXPECT_FALSE(context->user_info().has_effective_user());
}

TEST(IpcClientTest, TokenWithWrongPasswordIsRefused) {
  bool authenticated = false;
  std::optional<proto::IpcConnectionContext> context;
  auto server = std::make_unique<FakeServer>([&](ServerConnection& c, int) {
    AcceptToken(c, "d3JvbmcgcGFzc3dvcmQ=", &authenticated, &context);
  });
  IpcClientOptions options = Options(server->port());
  options.token = kAmRmToken;
  absl::StatusOr<std::unique_ptr<IpcClient>> client = IpcClient::Connect(options);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kPermissionDenied) << client.status();
  EXPECT_NE(Message(client.status()).find("javax.security.sasl.SaslException"), std::string::npos)
      << client.status();
  server.reset();
  EXPECT_FALSE(authenticated);
}

// A stand-in security layer: "wrapping" XORs every byte and prefixes a marker, so a test server
// can tell wrapped bytes from plain ones and check that nothing travels unwrapped.
class XorLayer final : public SaslMechanism {
 public:
  std::string_view method() const override { return "KERBEROS"; }
  std::string_view mechanism() const override { return "GSSAPI"; }
  absl::Status Start(const proto::SaslAuthOffer&) override { return absl::OkStatus(); }
  absl::StatusOr<std::string> Evaluate(std::string_view) override {
    complete_ = true;
    return std::string("hello");
  }
  bool complete() const override { return complete_; }
  SaslQop qop() const override { return SaslQop::kAuthConf; }
  absl::StatusOr<std::string> Wrap(std::string_view message) override { return Xor(message); }
  absl::StatusOr<std::string> Unwrap(std::string_view token) override {
    if (!token.starts_with("W")) return absl::DataLossError("XorLayer: not a wrapped token");
    return Xor(token.substr(1)).substr(1);
  }
  size_t max_wrap_size() const override { return 64; }

  static std::string Xor(std::string_view bytes) {
    std::string out = "W";
    for (char c : bytes) out.push_back(static_cast<char>(c ^ 0x5A));
    return out;
  }

 private:
  bool complete_ = false;
};

// The server side of a SASL connection whose security layer is XorLayer: handshake, then every
// frame both ways inside WRAP messages. Records the WRAP frames of the first call.
struct WrappedServer {
  int call_wraps = 0;
  bool plain_frame_seen = false;
  std::optional<proto::IpcConnectionContext> context;
  std::string bytes;  // unwrapped, not yet parsed

  bool ReadSasl(ServerConnection& c, proto::RpcSasl* message) {
    std::optional<std::string> body = c.ReadFrame();
    if (!body) return false;
    size_t pos = 0;
    proto::RpcRequestHeader header;
    if (!ReadDelimited(*body, &pos, &header, "header").ok()) return false;
    if (header.call_id() != kSaslCallId) plain_frame_seen = true;
    return ParsePayload(std::string_view(*body).substr(pos), message, "sasl").ok();
  }
  // The next unwrapped frame body; counts the WRAP messages it took.
  std::optional<std::string> ReadUnwrapped(ServerConnection& c, int* wraps) {
    while (true) {
      if (bytes.size() >= 4) {
        uint32_t length = *DecodeFrameLength(bytes.substr(0, 4));
        if (bytes.size() >= 4 + length) {
          std::string body = bytes.substr(4, length);
          bytes.erase(0, 4 + length);
          return body;
        }
      }
      proto::RpcSasl message;
      if (!ReadSasl(c, &message) || message.state() != proto::SASL_WRAP ||
          !message.token().starts_with("W")) {
        return std::nullopt;
      }
      bytes += XorLayer::Xor(message.token().substr(1)).substr(1);
      if (wraps != nullptr) ++*wraps;
    }
  }
  void SendWrapped(ServerConnection& c, const std::string& frame, size_t pieces) {
    size_t step = (frame.size() + pieces - 1) / pieces;
    for (size_t at = 0; at < frame.size(); at += step) {
      proto::RpcSasl message;
      message.set_state(proto::SASL_WRAP);
      message.set_token(XorLayer::Xor(frame.substr(at, step)));
      c.Respond(kSaslCallId, proto::RPC_STATUS_SUCCESS, &message);
    }
  }
  void Serve(ServerConnection& c, bool tamper) {
    if (c.ReadPreamble() != "hrpc\x09\x00\xdf"s) return;
    proto::RpcSasl message;
    if (!ReadSasl(c, &message) || message.state() != proto::SASL_NEGOTIATE) return;
    proto::RpcSasl offer;
    offer.set_state(proto::SASL_NEGOTIATE);
    proto::SaslAuthOffer* auth = offer.add_auths();
    auth->set_method("KERBEROS");
    auth->set_mechanism("GSSAPI");
    auth->set_protocol("rm");
    auth->set_server_id("localhost");
    c.Respond(kSaslCallId, proto::RPC_STATUS_SUCCESS, &offer);
    if (!ReadSasl(c, &message) || message.state() != proto::SASL_INITIATE) return;
    proto::RpcSasl success;
    success.set_state(proto::SASL_SUCCESS);
    c.Respond(kSaslCallId, proto::RPC_STATUS_SUCCESS, &success);
    std::optional<std::string> body = ReadUnwrapped(c, nullptr);
    if (!body) return;
    size_t pos = 0;
    proto::RpcRequestHeader header;
    proto::IpcConnectionContext parsed;
    if (!ReadDelimited(*body, &pos, &header, "header").ok() ||
        !ReadDelimited(*body, &pos, &parsed, "context").ok()) {
      return;
    }
    context = parsed;
    body = ReadUnwrapped(c, &call_wraps);
    if (!body) return;
    pos = 0;
    proto::ProtobufRequestHeader method;
    proto::TokenMessage request;
    if (!ReadDelimited(*body, &pos, &header, "header").ok() ||
        !ReadDelimited(*body, &pos, &method, "method").ok() ||
        !ReadDelimited(*body, &pos, &request, "request").ok()) {
      return;
    }
    proto::RpcResponseHeader response_header;
    response_header.set_call_id(static_cast<uint32_t>(header.call_id()));
    response_header.set_status(proto::RPC_STATUS_SUCCESS);
    proto::TokenMessage reply;
    reply.set_kind(StrCat("echo:", request.identifier().size()));
    std::string frame = EncodeFrame({&response_header, &reply});
    if (tamper) {
      proto::RpcSasl message;
      message.set_state(proto::SASL_WRAP);
      message.set_token("plain bytes, not a wrapped token");
      c.Respond(kSaslCallId, proto::RPC_STATUS_SUCCESS, &message);
    } else {
      SendWrapped(c, frame, 3);
    }
    c.WaitForEof();
  }
};

IpcClientOptions WrappedOptions(int port) {
  IpcClientOptions options = Options(port);
  options.sasl_mechanisms = [] {
    std::vector<std::unique_ptr<SaslMechanism>> mechanisms;
    mechanisms.push_back(std::make_unique<XorLayer>());
    return mechanisms;
  };
  return options;
}

TEST(IpcClientTest, SecurityLayerWrapsEveryFrameBothWaysInPiecesTheServerCanTake) {
  WrappedServer state;
  auto server = std::make_unique<FakeServer>(
      [&](ServerConnection& c, int) { state.Serve(c, /*tamper=*/false); });
  absl::StatusOr<std::unique_ptr<IpcClient>> client =
      IpcClient::Connect(WrappedOptions(server->port()));
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->authenticated_with_sasl());
  proto::TokenMessage request = Request("x");
  request.set_identifier(std::string(300, 'i'));  // more than one wrap's 64 bytes
  proto::TokenMessage response;
  absl::Status status = (*client)->Call("getApplications", request, &response);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(response.kind(), "echo:300");
  (*client)->Close();
  server.reset();
  EXPECT_FALSE(state.plain_frame_seen);
  ASSERT_TRUE(state.context.has_value());
  EXPECT_EQ(state.context->protocol(), kProtocol);
  EXPECT_GE(state.call_wraps, 5);  // 300+ bytes in pieces of at most 64
}

TEST(IpcClientTest, ResponseThatFailsTheSecurityLayersCheckIsDataLoss) {
  WrappedServer state;
  auto server = std::make_unique<FakeServer>(
      [&](ServerConnection& c, int) { state.Serve(c, /*tamper=*/true); });
  absl::StatusOr<std::unique_ptr<IpcClient>> client =
      IpcClient::Connect(WrappedOptions(server->port()));
  ASSERT_TRUE(client.ok()) << client.status();
  proto::TokenMessage response;
  absl::Status status = (*client)->Call("getApplications", Request("x"), &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_NE(Message(status).find("not a wrapped token"), std::string::npos) << status;
  (*client)->Close();
}

}  // namespace
}  // namespace tony::hadoop
