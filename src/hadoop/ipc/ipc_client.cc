#include "hadoop/ipc/ipc_client.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <random>
#include <utility>

#include "common/strings.h"
#include "hadoop/ipc/ipc.pb.h"
#include "hadoop/ipc/rpc_codec.h"
#include "hadoop/sasl/digest_md5_mechanism.h"

namespace tony::hadoop {
namespace {

TcpStream::Deadline DeadlineIn(std::chrono::milliseconds timeout) {
  return std::chrono::steady_clock::now() + timeout;
}

std::string RandomClientId() {
  std::random_device device;
  std::string id(kClientIdBytes, '\0');
  for (char& c : id) c = static_cast<char>(device());
  return id;
}

std::string OsUserName() {
  if (const passwd* entry = getpwuid(geteuid()); entry != nullptr && entry->pw_name != nullptr) {
    return entry->pw_name;
  }
  return std::to_string(geteuid());
}

// Reads one whole response frame.
absl::StatusOr<ResponseFrame> ReadFrame(TcpStream& stream, TcpStream::Deadline deadline) {
  std::string prefix;
  if (absl::Status s = stream.ReadExact(4, &prefix, deadline); !s.ok()) return s;
  absl::StatusOr<uint32_t> length = DecodeFrameLength(prefix);
  if (!length.ok()) {
    return absl::DataLossError(
        StrCat("bad response from ", stream.peer(), ": ", ToStd(length.status().message())));
  }
  std::string body;
  if (absl::Status s = stream.ReadExact(*length, &body, deadline); !s.ok()) return s;
  absl::StatusOr<ResponseFrame> frame = DecodeResponseBody(body);
  if (!frame.ok()) {
    return absl::DataLossError(
        StrCat("bad response from ", stream.peer(), ": ", ToStd(frame.status().message())));
  }
  return frame;
}

// SASL frames over the connection's socket.
class SocketSaslTransport final : public SaslTransport {
 public:
  SocketSaslTransport(TcpStream& stream, TcpStream::Deadline deadline)
      : stream_(stream), deadline_(deadline) {}

  absl::Status Send(const proto::RpcSasl& message) override {
    proto::RpcRequestHeader header = MakeRequestHeader(kSaslCallId, "", -1);
    return stream_.WriteAll(EncodeFrame({&header, &message}), deadline_);
  }

  absl::StatusOr<proto::RpcSasl> Receive() override {
    absl::StatusOr<ResponseFrame> frame = ReadFrame(stream_, deadline_);
    if (!frame.ok()) return frame.status();
    if (frame->header.status() != proto::RPC_STATUS_SUCCESS) {
      return RemoteErrorStatus(frame->header, StrCat("SASL with ", stream_.peer()));
    }
    if (frame->call_id != kSaslCallId) {
      return absl::DataLossError(StrCat("SASL with ", stream_.peer(), ": response for call ",
                                        frame->call_id, " during the handshake"));
    }
    proto::RpcSasl message;
    if (absl::Status s = ParsePayload(frame->payload, &message, "SASL message"); !s.ok()) {
      return absl::DataLossError(StrCat("SASL with ", stream_.peer(), ": ", ToStd(s.message())));
    }
    return message;
  }

 private:
  TcpStream& stream_;
  TcpStream::Deadline deadline_;
};

}  // namespace

IpcClient::IpcClient(IpcClientOptions options)
    : options_(std::move(options)),
      peer_(StrCat(options_.host, ":", options_.port)),
      client_id_(RandomClientId()) {}

absl::StatusOr<std::unique_ptr<IpcClient>> IpcClient::Connect(IpcClientOptions options) {
  if (options.host.empty() || options.port <= 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        StrCat("Hadoop IPC: bad server address '", options.host, ":", options.port, "'"));
  }
  if (options.protocol.empty()) {
    return absl::InvalidArgumentError(
        StrCat("Hadoop IPC to ", options.host, ":", options.port, ": no protocol name"));
  }
  if (options.user.empty()) options.user = OsUserName();
  std::unique_ptr<IpcClient> client(new IpcClient(std::move(options)));
  MutexLock lock(client->mu_);
  if (absl::Status s = client->EstablishLocked(); !s.ok()) return s;
  return client;
}

bool IpcClient::authenticated_with_sasl() const {
  MutexLock lock(mu_);
  return sasl_;
}

void IpcClient::Close() {
  MutexLock lock(mu_);
  stream_.Close();
}

std::string IpcClient::CallName(std::string_view method) const {
  std::string_view protocol = options_.protocol;
  size_t dot = protocol.rfind('.');
  if (dot != std::string_view::npos) protocol.remove_prefix(dot + 1);
  return StrCat(protocol, ".", method, " on ", peer_);
}

absl::Status IpcClient::WriteLocked(std::string_view frames, TcpStream::Deadline deadline) {
  if (layer_ == nullptr) return stream_.WriteAll(frames, deadline);
  const size_t chunk = std::max<size_t>(layer_->max_wrap_size(), 1);
  proto::RpcRequestHeader header = MakeRequestHeader(kSaslCallId, "", -1);
  std::string out;
  for (size_t at = 0; at < frames.size(); at += chunk) {
    absl::StatusOr<std::string> token = layer_->Wrap(frames.substr(at, chunk));
    if (!token.ok()) return token.status();
    proto::RpcSasl message;
    message.set_state(proto::SASL_WRAP);
    message.set_token(*std::move(token));
    out += EncodeFrame({&header, &message});
  }
  return stream_.WriteAll(out, deadline);
}

absl::StatusOr<ResponseFrame> IpcClient::ReadLocked(TcpStream::Deadline deadline) {
  if (layer_ == nullptr) return ReadFrame(stream_, deadline);
  while (true) {
    if (unwrapped_.size() >= 4) {
      absl::StatusOr<uint32_t> length =
          DecodeFrameLength(std::string_view(unwrapped_).substr(0, 4));
      if (!length.ok()) {
        return absl::DataLossError(
            StrCat("bad response from ", peer_, ": ", ToStd(length.status().message())));
      }
      if (unwrapped_.size() >= 4 + static_cast<size_t>(*length)) {
        absl::StatusOr<ResponseFrame> frame =
            DecodeResponseBody(std::string_view(unwrapped_).substr(4, *length));
        unwrapped_.erase(0, 4 + static_cast<size_t>(*length));
        if (!frame.ok()) {
          return absl::DataLossError(
              StrCat("bad response from ", peer_, ": ", ToStd(frame.status().message())));
        }
        return frame;
      }
    }
    absl::StatusOr<ResponseFrame> raw = ReadFrame(stream_, deadline);
    if (!raw.ok()) return raw.status();
    // A fatal error (the server's SASL layer failed, say) may come unwrapped.
    if (raw->call_id != kSaslCallId) {
      if (raw->header.status() == proto::RPC_STATUS_FATAL) return raw;
      return absl::DataLossError(StrCat("bad response from ", peer_, ": call ", raw->call_id,
                                        " outside the SASL security layer"));
    }
    proto::RpcSasl message;
    if (absl::Status s = ParsePayload(raw->payload, &message, "SASL message");
        !s.ok() || message.state() != proto::SASL_WRAP) {
      return absl::DataLossError(
          StrCat("bad response from ", peer_, ": a SASL frame that is not WRAP"));
    }
    absl::StatusOr<std::string> plain = layer_->Unwrap(message.token());
    if (!plain.ok()) {
      return absl::DataLossError(StrCat("from ", peer_, ": ", ToStd(plain.status().message())));
    }
    if (unwrapped_.size() + plain->size() > kMaxFrameBytes + 4) {
      return absl::DataLossError(StrCat("bad response from ", peer_, ": frame too long"));
    }
    unwrapped_ += *plain;
  }
}

absl::Status IpcClient::EstablishLocked() {
  stream_.Close();
  sasl_ = false;
  layer_.reset();
  unwrapped_.clear();
  absl::StatusOr<TcpStream> stream =
      TcpStream::Connect(options_.host, options_.port, DeadlineIn(options_.connect_timeout));
  if (!stream.ok()) return stream.status();
  stream_ = std::move(*stream);

  std::vector<std::unique_ptr<SaslMechanism>> mechanisms;
  if (options_.sasl_mechanisms) {
    mechanisms = options_.sasl_mechanisms();
  } else if (options_.token.has_value()) {
    mechanisms.push_back(std::make_unique<DigestMd5Mechanism>(*options_.token));
  }
  bool use_sasl = options_.sasl_mechanisms || options_.token.has_value();
  TcpStream::Deadline deadline = DeadlineIn(options_.call_timeout);
  absl::Status s =
      stream_.WriteAll(ConnectionPreamble(use_sasl ? AuthProtocol::kSasl : AuthProtocol::kNone,
                                          options_.service_class),
                       deadline);
  SaslOutcome outcome = SaslOutcome::kSwitchedToSimple;
  if (s.ok() && use_sasl) {
    std::vector<SaslMechanism*> raw;
    raw.reserve(mechanisms.size());
    for (auto& mechanism : mechanisms) raw.push_back(mechanism.get());
    SocketSaslTransport transport(stream_, deadline);
    SaslMechanism* used = nullptr;
    absl::StatusOr<SaslOutcome> result = RunSaslHandshake(transport, raw, peer_, &used);
    if (result.ok()) {
      outcome = *result;
      for (auto& mechanism : mechanisms) {
        if (mechanism.get() == used && used->qop() != SaslQop::kAuth) layer_ = std::move(mechanism);
      }
    } else {
      s = result.status();
    }
  }
  if (s.ok()) {
    proto::IpcConnectionContext context;
    context.set_protocol(options_.protocol);
    proto::UserInformation* user = context.mutable_user_info();
    // With a token the server learns the user from the token; SIMPLE names it here.
    if (outcome == SaslOutcome::kSwitchedToSimple) user->set_effective_user(options_.user);
    proto::RpcRequestHeader header = MakeRequestHeader(kConnectionContextCallId, client_id_, -1);
    s = WriteLocked(EncodeFrame({&header, &context}), deadline);
  }
  if (!s.ok()) {
    stream_.Close();
    layer_.reset();
    return absl::Status(s.code(), StrCat("Hadoop IPC connection to ", peer_, " for ",
                                         options_.protocol, ": ", ToStd(s.message())));
  }
  sasl_ = outcome == SaslOutcome::kAuthenticated;
  return absl::OkStatus();
}

absl::Status IpcClient::Call(std::string_view method, const google::protobuf::MessageLite& request,
                             google::protobuf::MessageLite* response) {
  return Call(method, request, response, options_.call_timeout);
}

absl::Status IpcClient::Call(std::string_view method, const google::protobuf::MessageLite& request,
                             google::protobuf::MessageLite* response,
                             std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  int32_t call_id = next_call_id_;
  next_call_id_ = next_call_id_ == std::numeric_limits<int32_t>::max() ? 0 : next_call_id_ + 1;
  absl::Status status;
  for (int32_t retry = 0; retry < 2; ++retry) {
    if (!stream_.is_open()) {
      if (absl::Status s = EstablishLocked(); !s.ok()) {
        return absl::Status(s.code(), StrCat(CallName(method), ": ", ToStd(s.message())));
      }
    }
    status = AttemptLocked(method, call_id, retry, request, response, DeadlineIn(timeout));
    // Only a connection lost before the response arrived is worth one more try.
    if (status.code() != absl::StatusCode::kUnavailable || GetRemoteError(status).has_value()) {
      break;
    }
    stream_.Close();
  }
  return status;
}

absl::Status IpcClient::AttemptLocked(std::string_view method, int32_t call_id, int32_t retry_count,
                                      const google::protobuf::MessageLite& request,
                                      google::protobuf::MessageLite* response,
                                      TcpStream::Deadline deadline) {
  proto::RpcRequestHeader header = MakeRequestHeader(call_id, client_id_, retry_count);
  proto::ProtobufRequestHeader method_header;
  method_header.set_method_name(std::string(method));
  method_header.set_declaring_class_protocol(options_.protocol);
  method_header.set_client_protocol_version(options_.protocol_version);
  std::string name = CallName(method);
  auto fail = [&](const absl::Status& s) {
    mu_.AssertHeld();  // called only below, with it held
    if (s.code() == absl::StatusCode::kDeadlineExceeded) stream_.Close();
    return absl::Status(s.code(), StrCat(name, ": ", ToStd(s.message())));
  };
  if (absl::Status s = WriteLocked(EncodeCallFrame(header, method_header, request), deadline);
      !s.ok()) {
    return fail(s);
  }
  absl::StatusOr<ResponseFrame> frame = ReadLocked(deadline);
  if (!frame.ok()) {
    if (frame.status().code() == absl::StatusCode::kDataLoss) stream_.Close();
    return fail(frame.status());
  }
  const proto::RpcResponseHeader& h = frame->header;
  if (h.status() == proto::RPC_STATUS_FATAL) {
    stream_.Close();
    return RemoteErrorStatus(h, name);
  }
  if (!h.client_id().empty() && h.client_id() != client_id_) {
    stream_.Close();
    return absl::DataLossError(StrCat(name, ": response carries another client's id"));
  }
  if (frame->call_id != call_id) {
    stream_.Close();
    return absl::DataLossError(
        StrCat(name, ": response for call ", frame->call_id, " while waiting for call ", call_id));
  }
  if (h.status() == proto::RPC_STATUS_ERROR) return RemoteErrorStatus(h, name);
  if (absl::Status s = ParsePayload(frame->payload, response, "response message"); !s.ok()) {
    return absl::DataLossError(StrCat(name, ": ", ToStd(s.message())));
  }
  return absl::OkStatus();
}

}  // namespace tony::hadoop
