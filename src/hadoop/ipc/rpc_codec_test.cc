#include "hadoop/ipc/rpc_codec.h"

#include <gtest/gtest.h>

#include <string>

#include "common/strings.h"
#include "hadoop/common/tokens.pb.h"
#include "hadoop/ipc/ipc.pb.h"

namespace tony::hadoop {
namespace {

using std::string_literals::operator""s;

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

std::string Prefix(uint32_t length) {
  return {static_cast<char>(length >> 24), static_cast<char>(length >> 16),
          static_cast<char>(length >> 8), static_cast<char>(length)};
}

TEST(VarintTest, EncodesKnownValuesToExactBytes) {
  struct Case {
    uint32_t value;
    std::string bytes;
  };
  const Case cases[] = {
      {0, "\x00"s},
      {1, "\x01"s},
      {127, "\x7f"s},
      {128, "\x80\x01"s},
      {300, "\xac\x02"s},
      {16383, "\xff\x7f"s},
      {16384, "\x80\x80\x01"s},
      {(1u << 28) - 1, "\xff\xff\xff\x7f"s},
      {1u << 28, "\x80\x80\x80\x80\x01"s},
      {0xFFFFFFFFu, "\xff\xff\xff\xff\x0f"s},
  };
  for (const Case& c : cases) {
    std::string out;
    AppendVarint32(c.value, &out);
    EXPECT_EQ(out, c.bytes) << c.value;
    size_t pos = 0;
    absl::StatusOr<uint32_t> back = ReadVarint32(out, &pos);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, c.value);
    EXPECT_EQ(pos, out.size());
  }
}

TEST(VarintTest, ReadsFromTheMiddleAndAdvances) {
  std::string data = "xy";
  AppendVarint32(1000, &data);
  data += "z";
  size_t pos = 2;
  absl::StatusOr<uint32_t> value = ReadVarint32(data, &pos);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, 1000u);
  EXPECT_EQ(pos, 4u);
}

TEST(VarintTest, RejectsTruncatedOverlongAndOverflowingVarints) {
  for (const std::string& bad : {""s, "\x80"s, "\xff\xff"s, "\xff\xff\xff\xff\x10"s,
                                 "\xff\xff\xff\xff\xff\x01"s, "\x80\x80\x80\x80\x80\x00"s}) {
    size_t pos = 0;
    absl::StatusOr<uint32_t> value = ReadVarint32(bad, &pos);
    EXPECT_FALSE(value.ok()) << "accepted " << bad.size() << " bytes";
    EXPECT_EQ(pos, 0u) << "moved on a failed read";
  }
}

TEST(PreambleTest, HasMagicVersionServiceClassAndAuthProtocol) {
  EXPECT_EQ(ConnectionPreamble(AuthProtocol::kNone), "hrpc\x09\x00\x00"s);
  EXPECT_EQ(ConnectionPreamble(AuthProtocol::kSasl), "hrpc\x09\x00\xdf"s);
  EXPECT_EQ(ConnectionPreamble(AuthProtocol::kNone, 3), "hrpc\x09\x03\x00"s);
  EXPECT_EQ(static_cast<int8_t>(AuthProtocol::kSasl), -33);
}

TEST(RequestHeaderTest, SaslHeaderHasExactHadoopWireBytes) {
  // rpcKind=2 (field 1), rpcOp=0 (field 2), callId=-33 as sint32 (zigzag 65, field 3), empty
  // clientId (field 4, present), retryCount=-1 as sint32 (zigzag 1, field 5).
  proto::RpcRequestHeader header = MakeRequestHeader(kSaslCallId, "", -1);
  EXPECT_EQ(header.SerializeAsString(), "\x08\x02\x10\x00\x18\x41\x22\x00\x28\x01"s);
}

TEST(RequestHeaderTest, CallIdZeroIsStillSent) {
  // Hadoop requires callId; proto2 presence must put a 0 on the wire.
  proto::RpcRequestHeader header = MakeRequestHeader(0, std::string(16, 'c'), 0);
  std::string bytes = header.SerializeAsString();
  EXPECT_NE(bytes.find("\x18\x00"s), std::string::npos);
  EXPECT_NE(bytes.find("\x28\x00"s), std::string::npos);
}

TEST(CallFrameTest, DecodesBackFieldByField) {
  std::string client_id = "0123456789abcdef";
  proto::RpcRequestHeader header = MakeRequestHeader(7, client_id, 0);
  proto::ProtobufRequestHeader method;
  method.set_method_name("getNewApplication");
  method.set_declaring_class_protocol("org.apache.hadoop.yarn.api.ApplicationClientProtocolPB");
  method.set_client_protocol_version(1);
  proto::TokenMessage request;
  request.set_kind("K");
  request.set_identifier("\x00\x01"s);

  std::string frame = EncodeCallFrame(header, method, request);
  absl::StatusOr<uint32_t> length = DecodeFrameLength(frame.substr(0, 4));
  ASSERT_TRUE(length.ok()) << length.status();
  ASSERT_EQ(*length, frame.size() - 4);

  std::string_view body = std::string_view(frame).substr(4);
  size_t pos = 0;
  proto::RpcRequestHeader header_back;
  ASSERT_TRUE(ReadDelimited(body, &pos, &header_back, "header").ok());
  EXPECT_EQ(header_back.rpc_kind(), proto::RPC_KIND_PROTOCOL_BUFFER);
  EXPECT_EQ(header_back.rpc_op(), proto::RPC_OP_FINAL_PACKET);
  EXPECT_EQ(header_back.call_id(), 7);
  EXPECT_EQ(header_back.client_id(), client_id);
  EXPECT_EQ(header_back.retry_count(), 0);

  proto::ProtobufRequestHeader method_back;
  ASSERT_TRUE(ReadDelimited(body, &pos, &method_back, "method header").ok());
  EXPECT_EQ(method_back.method_name(), "getNewApplication");
  EXPECT_EQ(method_back.declaring_class_protocol(),
            "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB");
  EXPECT_EQ(method_back.client_protocol_version(), 1u);

  proto::TokenMessage request_back;
  ASSERT_TRUE(ReadDelimited(body, &pos, &request_back, "request").ok());
  EXPECT_EQ(request_back.kind(), "K");
  EXPECT_EQ(request_back.identifier(), "\x00\x01"s);
  EXPECT_EQ(pos, body.size());
}

std::string ResponseFrameBytes(const proto::RpcResponseHeader& header,
                               const proto::TokenMessage* payload) {
  if (payload == nullptr) return EncodeFrame({&header});
  return EncodeFrame({&header, payload});
}

TEST(ResponseTest, DecodesSuccessWithPayload) {
  proto::RpcResponseHeader header;
  header.set_call_id(5);
  header.set_status(proto::RPC_STATUS_SUCCESS);
  header.set_server_ipc_version(9);
  proto::TokenMessage payload;
  payload.set_service("rm:8032");

  absl::StatusOr<ResponseFrame> frame = DecodeResponseFrame(ResponseFrameBytes(header, &payload));
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->call_id, 5);
  EXPECT_EQ(frame->header.status(), proto::RPC_STATUS_SUCCESS);
  EXPECT_EQ(frame->header.server_ipc_version(), 9u);
  proto::TokenMessage back;
  ASSERT_TRUE(ParsePayload(frame->payload, &back, "response").ok());
  EXPECT_EQ(back.service(), "rm:8032");
}

TEST(ResponseTest, SaslCallIdComesBackNegative) {
  proto::RpcResponseHeader header;
  header.set_call_id(static_cast<uint32_t>(kSaslCallId));
  header.set_status(proto::RPC_STATUS_SUCCESS);
  // uint32 on the wire: -33 is the 5-byte varint of 4294967263.
  EXPECT_EQ(header.SerializeAsString().substr(0, 6), "\x08\xdf\xff\xff\xff\x0f"s);
  absl::StatusOr<ResponseFrame> frame = DecodeResponseFrame(EncodeFrame({&header}));
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->call_id, kSaslCallId);
  EXPECT_TRUE(frame->payload.empty());
}

TEST(ResponseTest, ErrorBecomesStatusWithJavaClassAndMessage) {
  proto::RpcResponseHeader header;
  header.set_call_id(3);
  header.set_status(proto::RPC_STATUS_ERROR);
  header.set_exception_class("org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException");
  header.set_error_message(
      "Application with id 'application_1_0001' doesn't exist in RM.\n\tat org.apache.Foo.bar"
      "(Foo.java:1)\n");
  header.set_error_code(proto::RPC_ERROR_APPLICATION);
  absl::StatusOr<ResponseFrame> frame = DecodeResponseFrame(EncodeFrame({&header}));
  ASSERT_TRUE(frame.ok()) << frame.status();

  absl::Status status = RemoteErrorStatus(frame->header, "getApplicationReport on rm:8032");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Message(status),
            "getApplicationReport on rm:8032: "
            "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException: "
            "Application with id 'application_1_0001' doesn't exist in RM.");
  std::optional<RemoteError> remote = GetRemoteError(status);
  ASSERT_TRUE(remote.has_value());
  EXPECT_EQ(remote->class_name, "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException");
  EXPECT_NE(remote->message.find("Foo.java:1"), std::string::npos);
  EXPECT_FALSE(GetRemoteError(absl::InternalError("x")).has_value());
}

TEST(ResponseTest, MapsErrorKindsToStatusCodes) {
  auto code = [](std::string class_name, std::optional<proto::RpcErrorCode> error_code) {
    return RemoteErrorStatus(RemoteError{std::move(class_name), "m"}, "c", error_code).code();
  };
  EXPECT_EQ(code("org.apache.hadoop.yarn.exceptions.YarnException", proto::RPC_ERROR_APPLICATION),
            absl::StatusCode::kUnknown);
  EXPECT_EQ(code("org.apache.hadoop.ipc.RpcNoSuchMethodException", proto::RPC_ERROR_NO_SUCH_METHOD),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(code("org.apache.hadoop.security.token.SecretManager$InvalidToken", std::nullopt),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(code("org.apache.hadoop.security.AccessControlException", std::nullopt),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(code("org.apache.hadoop.ipc.StandbyException", std::nullopt),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(code("org.apache.hadoop.ipc.RPC$VersionMismatch", proto::RPC_FATAL_VERSION_MISMATCH),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ResponseTest, EveryTruncationIsAnError) {
  proto::RpcResponseHeader header;
  header.set_call_id(1);
  header.set_status(proto::RPC_STATUS_SUCCESS);
  proto::TokenMessage payload;
  payload.set_kind("kind");
  std::string frame = ResponseFrameBytes(header, &payload);
  for (size_t n = 0; n < frame.size(); ++n) {
    EXPECT_FALSE(DecodeResponseFrame(frame.substr(0, n)).ok()) << "prefix of " << n << " bytes";
  }
  EXPECT_FALSE(DecodeResponseFrame(frame + "x").ok());
  // A body cut inside the payload decodes the header but not the payload.
  absl::StatusOr<ResponseFrame> cut =
      DecodeResponseBody(std::string_view(frame).substr(4, frame.size() - 5));
  ASSERT_TRUE(cut.ok()) << cut.status();
  proto::TokenMessage back;
  absl::Status parsed = ParsePayload(cut->payload, &back, "response message");
  EXPECT_FALSE(parsed.ok());
  EXPECT_NE(Message(parsed).find("remain"), std::string::npos) << parsed;
}

TEST(ResponseTest, RejectsZeroAndOversizedLengths) {
  EXPECT_FALSE(DecodeFrameLength(Prefix(0)).ok());
  EXPECT_TRUE(DecodeFrameLength(Prefix(kMaxFrameBytes)).ok());
  absl::StatusOr<uint32_t> big = DecodeFrameLength(Prefix(kMaxFrameBytes + 1));
  ASSERT_FALSE(big.ok());
  EXPECT_NE(Message(big.status()).find("exceeds"), std::string::npos);
  EXPECT_FALSE(DecodeFrameLength("\xff\xff\xff\xff"s).ok());
  EXPECT_FALSE(DecodeFrameLength("abc").ok());
  EXPECT_FALSE(DecodeResponseFrame(Prefix(0xFFFFFFF0u) + "abc").ok());
}

TEST(ResponseTest, RejectsGarbage) {
  // A header whose delimited length runs past the frame.
  EXPECT_FALSE(DecodeResponseBody("\x40\x08\x01"s).ok());
  // A header that is not a protobuf message (field 0 / bad wire type).
  absl::StatusOr<ResponseFrame> bad = DecodeResponseBody("\x03\xff\xff\xff"s);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(Message(bad.status()).find("RPC response header"), std::string::npos);
  // A header without call id, and one with an unknown status.
  proto::RpcResponseHeader no_call_id;
  no_call_id.set_status(proto::RPC_STATUS_SUCCESS);
  absl::StatusOr<ResponseFrame> missing = DecodeResponseFrame(EncodeFrame({&no_call_id}));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(Message(missing.status()).find("no call id"), std::string::npos);
  std::string unknown_status = "\x08\x01\x10\x07"s;  // call id 1, status 7
  std::string body;
  AppendVarint32(static_cast<uint32_t>(unknown_status.size()), &body);
  body += unknown_status;
  EXPECT_FALSE(DecodeResponseBody(body).ok());
  // Trailing bytes after a success payload.
  proto::TokenMessage payload;
  std::string delimited;
  AppendDelimited(payload, &delimited);
  EXPECT_FALSE(ParsePayload(delimited + "zz", &payload, "response").ok());
}

}  // namespace
}  // namespace tony::hadoop
