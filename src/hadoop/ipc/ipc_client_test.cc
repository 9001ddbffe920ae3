#include "hadoop/ipc/ipc_client.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/strings.h"
#include "hadoop/common/tokens.pb.h"
#include "hadoop/ipc/ipc.pb.h"
#include "hadoop/ipc/ipc_test_server.h"
#include "hadoop/ipc/rpc_codec.h"
#include "hadoop/sasl/digest_md5_mechanism.h"
#include "hadoop/sasl/digest_md5_test_server.h"

namespace tony::hadoop {
namespace {

using namespace ipc_test;

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

}  // namespace
}  // namespace tony::hadoop
