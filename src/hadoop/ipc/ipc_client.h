#pragma once
// A blocking Hadoop IPC client for one protocol on one server (the ResourceManager's
// ApplicationClientProtocol, the AM-RM protocol, a NameNode...), speaking ProtobufRpcEngine over
// TCP without a JVM.
//
// Connection setup: preamble; with a token or other SASL mechanisms (KERBEROS via GSSAPI), the
// SASL handshake (TOKEN via DIGEST-MD5) else auth protocol NONE (SIMPLE); then the connection
// context naming the protocol and, for SIMPLE, the user. When the handshake agrees on a security
// layer (hadoop.rpc.protection integrity or privacy), everything after it, the connection context
// included, travels as the mechanism's wrapped tokens in SASL WRAP messages, both ways. Each Call
// sends one request and waits for its response; a connection that the server closed (idle timeout,
// restart) is re-established once and the call resent with the same call id and retry count 1,
// which Hadoop's retry cache recognizes. A call that times out closes the connection (its response
// may still arrive), and the next call reconnects.
//
// Errors: the remote Java exception as a Status from RemoteErrorStatus (GetRemoteError gives the
// class), kDeadlineExceeded on timeouts, kUnavailable when the server cannot be reached; messages
// name the method and host:port.
//
// Threads: all methods are thread-safe; calls are serialized by one mutex (one call in flight).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "google/protobuf/message_lite.h"
#include "hadoop/common/credentials.h"
#include "hadoop/ipc/rpc_codec.h"
#include "hadoop/ipc/tcp_stream.h"
#include "hadoop/sasl/sasl.h"

namespace tony::hadoop {

struct IpcClientOptions {
  std::string host;
  int port = 0;
  // The protocol interface, sent in the connection context and every call header, e.g.
  // "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB".
  std::string protocol;
  uint64_t protocol_version = 1;
  // SIMPLE auth: the user the server acts for. Empty: this process's OS user name.
  std::string user;
  // When set, authenticate with this delegation token (SASL TOKEN / DIGEST-MD5).
  std::optional<Token> token;
  // Makes the SASL mechanisms for a connection attempt, in order of preference (GSSAPI can plug
  // in here). When unset and token is set: DIGEST-MD5 with the token. When either is set, the
  // connection uses SASL.
  std::function<std::vector<std::unique_ptr<SaslMechanism>>()> sasl_mechanisms;
  std::chrono::milliseconds connect_timeout{20'000};
  // Default limit for one call (sending the request and receiving its response), and for the
  // SASL handshake.
  std::chrono::milliseconds call_timeout{60'000};
  uint8_t service_class = 0;
};

class IpcClient {
 public:
  // Connects and sets the connection up; fails if the server cannot be reached or refuses.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<IpcClient>> Connect(IpcClientOptions options);

  IpcClient(const IpcClient&) = delete;
  IpcClient& operator=(const IpcClient&) = delete;

  // Calls `method` (e.g. "getNewApplication") with the request; on success parses the response.
  [[nodiscard]] absl::Status Call(std::string_view method,
                                  const google::protobuf::MessageLite& request,
                                  google::protobuf::MessageLite* response);
  [[nodiscard]] absl::Status Call(std::string_view method,
                                  const google::protobuf::MessageLite& request,
                                  google::protobuf::MessageLite* response,
                                  std::chrono::milliseconds timeout);

  // Closes the connection; a later Call reconnects.
  void Close();

  // host:port.
  const std::string& peer() const { return peer_; }
  // The 16 random bytes that identify this client in every call header.
  const std::string& client_id() const { return client_id_; }
  // Whether the current connection authenticated with SASL (false: SIMPLE).
  bool authenticated_with_sasl() const;

 private:
  explicit IpcClient(IpcClientOptions options);

  // Opens a connection: preamble, SASL, connection context.
  absl::Status EstablishLocked() TONY_REQUIRES(mu_);
  // Sends whole frames; under a SASL security layer, wrapped in WRAP messages.
  absl::Status WriteLocked(std::string_view frames, TcpStream::Deadline deadline)
      TONY_REQUIRES(mu_);
  // Reads one whole response frame, unwrapping under a security layer.
  absl::StatusOr<ResponseFrame> ReadLocked(TcpStream::Deadline deadline) TONY_REQUIRES(mu_);
  // One attempt to send a call and read its response.
  absl::Status AttemptLocked(std::string_view method, int32_t call_id, int32_t retry_count,
                             const google::protobuf::MessageLite& request,
                             google::protobuf::MessageLite* response, TcpStream::Deadline deadline)
      TONY_REQUIRES(mu_);
  std::string CallName(std::string_view method) const;

  const IpcClientOptions options_;
  const std::string peer_;
  const std::string client_id_;

  mutable Mutex mu_;
  TcpStream stream_ TONY_GUARDED_BY(mu_);
  int32_t next_call_id_ TONY_GUARDED_BY(mu_) = 0;
  bool sasl_ TONY_GUARDED_BY(mu_) = false;
  // The mechanism whose security layer (integrity or privacy) protects the connection, and the
  // unwrapped bytes not yet read as frames; null and empty without one.
  std::unique_ptr<SaslMechanism> layer_ TONY_GUARDED_BY(mu_);
  std::string unwrapped_ TONY_GUARDED_BY(mu_);
};

}  // namespace tony::hadoop
