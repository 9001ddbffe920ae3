#include "hadoop/ipc/rpc_codec.h"

#include "absl/strings/cord.h"
#include "common/strings.h"

namespace tony::hadoop {
namespace {

// Type URL of the RemoteError payload on a Status.
constexpr char kRemoteErrorPayload[] = "tony.hadoop/RemoteError";

void AppendBigEndian32(uint32_t value, std::string* out) {
  out->push_back(static_cast<char>(value >> 24));
  out->push_back(static_cast<char>(value >> 16));
  out->push_back(static_cast<char>(value >> 8));
  out->push_back(static_cast<char>(value));
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Java error messages often carry the whole stack trace; the first "\n\tat " starts it.
std::string_view WithoutStackTrace(std::string_view message) {
  size_t at = message.find("\n\tat ");
  if (at != std::string_view::npos) message = message.substr(0, at);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' ||
                              message.back() == ' ' || message.back() == '\t')) {
    message.remove_suffix(1);
  }
  return message;
}

absl::StatusCode CodeFor(const RemoteError& error, std::optional<proto::RpcErrorCode> code) {
  std::string_view name = error.class_name;
  if (code == proto::RPC_ERROR_NO_SUCH_METHOD || code == proto::RPC_ERROR_NO_SUCH_PROTOCOL) {
    return absl::StatusCode::kUnimplemented;
  }
  if (code == proto::RPC_FATAL_UNAUTHORIZED || EndsWith(name, "AccessControlException") ||
      EndsWith(name, "AuthorizationException") || EndsWith(name, "$InvalidToken") ||
      EndsWith(name, "SaslException")) {
    return absl::StatusCode::kPermissionDenied;
  }
  if (EndsWith(name, "NotFoundException")) return absl::StatusCode::kNotFound;
  if (EndsWith(name, "StandbyException") || EndsWith(name, "RetriableException") ||
      EndsWith(name, "ServerTooBusyException")) {
    return absl::StatusCode::kUnavailable;
  }
  if (code == proto::RPC_ERROR_RPC_VERSION_MISMATCH || code == proto::RPC_FATAL_VERSION_MISMATCH) {
    return absl::StatusCode::kFailedPrecondition;
  }
  return absl::StatusCode::kUnknown;
}

}  // namespace

std::string ConnectionPreamble(AuthProtocol auth, uint8_t service_class) {
  std::string out(kRpcMagic);
  out.push_back(static_cast<char>(kIpcVersion));
  out.push_back(static_cast<char>(service_class));
  out.push_back(static_cast<char>(auth));
  return out;
}

std::string EncodeFrame(std::initializer_list<const google::protobuf::MessageLite*> messages) {
  std::string out(4, '\0');
  for (const google::protobuf::MessageLite* message : messages) AppendDelimited(*message, &out);
  std::string prefix;
  AppendBigEndian32(static_cast<uint32_t>(out.size() - 4), &prefix);
  out.replace(0, 4, prefix);
  return out;
}

proto::RpcRequestHeader MakeRequestHeader(int32_t call_id, std::string_view client_id,
                                          int32_t retry_count) {
  proto::RpcRequestHeader header;
  header.set_rpc_kind(proto::RPC_KIND_PROTOCOL_BUFFER);
  header.set_rpc_op(proto::RPC_OP_FINAL_PACKET);
  header.set_call_id(call_id);
  header.set_client_id(std::string(client_id));
  header.set_retry_count(retry_count);
  return header;
}

std::string EncodeCallFrame(const proto::RpcRequestHeader& header,
                            const proto::ProtobufRequestHeader& method,
                            const google::protobuf::MessageLite& request) {
  return EncodeFrame({&header, &method, &request});
}

absl::StatusOr<uint32_t> DecodeFrameLength(std::string_view prefix) {
  if (prefix.size() != 4) {
    return absl::InvalidArgumentError(
        StrCat("frame length prefix has ", prefix.size(), " bytes, expected 4"));
  }
  uint32_t length = 0;
  for (char c : prefix) length = (length << 8) | static_cast<uint8_t>(c);
  if (length == 0) return absl::InvalidArgumentError("frame of length 0");
  if (length > kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        StrCat("frame of ", length, " bytes exceeds the limit of ", kMaxFrameBytes, " bytes"));
  }
  return length;
}

absl::StatusOr<ResponseFrame> DecodeResponseBody(std::string_view body) {
  ResponseFrame frame;
  size_t pos = 0;
  if (absl::Status s = ReadDelimited(body, &pos, &frame.header, "RPC response header"); !s.ok()) {
    return s;
  }
  if (!frame.header.has_call_id()) {
    return absl::InvalidArgumentError("RPC response header has no call id");
  }
  if (!frame.header.has_status()) {
    return absl::InvalidArgumentError(
        StrCat("RPC response header for call ", frame.header.call_id(), " has no known status"));
  }
  frame.call_id = static_cast<int32_t>(frame.header.call_id());
  frame.payload.assign(body.substr(pos));
  return frame;
}

absl::StatusOr<ResponseFrame> DecodeResponseFrame(std::string_view frame) {
  if (frame.size() < 4) {
    return absl::InvalidArgumentError(
        StrCat("truncated response frame: ", frame.size(), " bytes, no complete length"));
  }
  absl::StatusOr<uint32_t> length = DecodeFrameLength(frame.substr(0, 4));
  if (!length.ok()) return length.status();
  if (frame.size() - 4 != *length) {
    return absl::InvalidArgumentError(
        StrCat("response frame says ", *length, " bytes but has ", frame.size() - 4));
  }
  return DecodeResponseBody(frame.substr(4));
}

absl::Status RemoteErrorStatus(const proto::RpcResponseHeader& header, std::string_view context) {
  RemoteError error{header.exception_class(), header.error_message()};
  if (error.class_name.empty()) {
    error.class_name = header.status() == proto::RPC_STATUS_FATAL ? "fatal RPC error" : "RPC error";
  }
  std::optional<proto::RpcErrorCode> code;
  if (header.has_error_code()) code = header.error_code();
  return RemoteErrorStatus(error, context, code);
}

absl::Status RemoteErrorStatus(const RemoteError& error, std::string_view context,
                               std::optional<proto::RpcErrorCode> code) {
  std::string_view brief = WithoutStackTrace(error.message);
  std::string message = StrCat(context, ": ", error.class_name);
  if (!brief.empty()) message += StrCat(": ", brief);
  absl::Status status(CodeFor(error, code), message);
  // The payload is the class name, a NUL, then the full message.
  std::string payload = StrCat(error.class_name, '\0', error.message);
  status.SetPayload(kRemoteErrorPayload, absl::Cord(payload));
  return status;
}

absl::Status WithContext(const absl::Status& status, std::string_view context) {
  absl::Status out(status.code(), StrCat(context, ": ", ToStd(status.message())));
  status.ForEachPayload([&out](absl::string_view type_url, const absl::Cord& payload) {
    out.SetPayload(type_url, payload);
  });
  return out;
}

std::optional<RemoteError> GetRemoteError(const absl::Status& status) {
  auto payload = status.GetPayload(kRemoteErrorPayload);
  if (!payload.has_value()) return std::nullopt;
  std::string flat(*payload);
  size_t nul = flat.find('\0');
  if (nul == std::string::npos) return RemoteError{flat, ""};
  return RemoteError{flat.substr(0, nul), flat.substr(nul + 1)};
}

}  // namespace tony::hadoop
