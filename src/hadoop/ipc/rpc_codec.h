#pragma once
// Hadoop IPC framing (the wire format of Hadoop 2.10 and 3.x RPC), as pure functions over byte
// strings, so that every rule is testable without sockets.
//
// A connection starts with a 7-byte preamble ("hrpc", version 9, service class, auth protocol).
// Every later message in either direction is a frame: a 4-byte big-endian length of the rest,
// then protobuf messages, each prefixed by its varint32 length ("delimited"):
//   call:     RpcRequestHeader, ProtobufRequestHeader, request message
//   context:  RpcRequestHeader (call id -3), IpcConnectionContext
//   SASL:     RpcRequestHeader (call id -33), RpcSasl       (and the same shape back)
//   response: RpcResponseHeader, then on success the response message
//
// Threads: every function is pure and may be called from any thread.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message_lite.h"
#include "hadoop/common/delimited.h"
#include "hadoop/ipc/ipc.pb.h"

namespace tony::hadoop {

inline constexpr std::string_view kRpcMagic = "hrpc";
inline constexpr uint8_t kIpcVersion = 9;
inline constexpr int32_t kConnectionContextCallId = -3;
inline constexpr int32_t kPingCallId = -4;
inline constexpr int32_t kSaslCallId = -33;
// The largest frame tony accepts (Hadoop's ipc.maximum.response.length default).
inline constexpr uint32_t kMaxFrameBytes = 128u << 20;
inline constexpr size_t kClientIdBytes = 16;

// The last preamble byte. SASL is -33 as a signed byte.
enum class AuthProtocol : uint8_t { kNone = 0, kSasl = 0xDF };

// "hrpc", kIpcVersion, service_class, auth.
std::string ConnectionPreamble(AuthProtocol auth, uint8_t service_class = 0);

// A frame: 4-byte big-endian length, then each message delimited, in order.
std::string EncodeFrame(std::initializer_list<const google::protobuf::MessageLite*> messages);

// A request header of a protocol-buffer RPC: final packet, the given call id and client id.
// retry_count -1 means "not a retry".
proto::RpcRequestHeader MakeRequestHeader(int32_t call_id, std::string_view client_id,
                                          int32_t retry_count = -1);

// The frame of one call: header, ProtobufRpcEngine header (method, protocol, version), request.
std::string EncodeCallFrame(const proto::RpcRequestHeader& header,
                            const proto::ProtobufRequestHeader& method,
                            const google::protobuf::MessageLite& request);

// The length in a frame's 4-byte prefix. Fails if prefix is not 4 bytes or the length is 0 or
// above kMaxFrameBytes.
[[nodiscard]] absl::StatusOr<uint32_t> DecodeFrameLength(std::string_view prefix);

// One decoded response frame.
struct ResponseFrame {
  proto::RpcResponseHeader header;
  // header.call_id() read back as the signed id the request carried (-33 for SASL).
  int32_t call_id = 0;
  // The bytes after the header: on success the delimited response message (or RpcSasl).
  std::string payload;
};

// Decodes a frame body (the bytes after the 4-byte length). The header must carry a call id and
// a status.
[[nodiscard]] absl::StatusOr<ResponseFrame> DecodeResponseBody(std::string_view body);
// Decodes exactly one whole frame, length prefix included; a short or long buffer is an error.
[[nodiscard]] absl::StatusOr<ResponseFrame> DecodeResponseFrame(std::string_view frame);

// A Java exception reported by the server.
struct RemoteError {
  std::string class_name;  // e.g. org.apache.hadoop.yarn.exceptions.YarnException
  std::string message;     // the server's message, stack trace included when it sent one
};

// The Status for an ERROR or FATAL response header: the message reads
// "<context>: <class_name>: <message without the Java stack trace>", the code follows the error
// (no such method -> kUnimplemented, unauthorized or invalid token -> kPermissionDenied,
// *NotFoundException -> kNotFound, standby/retriable -> kUnavailable, otherwise kUnknown), and
// the RemoteError travels as a payload that GetRemoteError reads back.
absl::Status RemoteErrorStatus(const proto::RpcResponseHeader& header, std::string_view context);
absl::Status RemoteErrorStatus(const RemoteError& error, std::string_view context,
                               std::optional<proto::RpcErrorCode> code = std::nullopt);
// The RemoteError carried by a status from RemoteErrorStatus, if any.
std::optional<RemoteError> GetRemoteError(const absl::Status& status);

// "<context>: <message>", with the status's code and payloads (a RemoteError, a mark of
// failover.h) kept.
absl::Status WithContext(const absl::Status& status, std::string_view context);

}  // namespace tony::hadoop
