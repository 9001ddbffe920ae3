// IpcClient under a SASL security layer (integrity or privacy): every frame after the handshake
// travels wrapped, both ways.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/strings.h"
#include "hadoop/common/tokens.pb.h"
#include "hadoop/ipc/ipc.pb.h"
#include "hadoop/ipc/ipc_client.h"
#include "hadoop/ipc/ipc_test_server.h"
#include "hadoop/ipc/rpc_codec.h"

namespace tony::hadoop {
namespace {

using namespace ipc_test;

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
