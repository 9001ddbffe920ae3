#pragma once
// The client side of Hadoop's SASL handshake, independent of sockets.
//
// After a preamble with AuthProtocol::kSasl the client sends NEGOTIATE; the server answers
// NEGOTIATE with the authentications it accepts (method, SASL mechanism, protocol, server id and,
// for DIGEST-MD5, its first challenge). The client picks the first offer it has a mechanism for
// and answers INITIATE (the picked offer without its challenge, plus the mechanism's response);
// then CHALLENGE/RESPONSE rounds until the server says SUCCESS, whose token (DIGEST-MD5's
// rspauth) the mechanism must accept. A server that runs without security answers SUCCESS to
// NEGOTIATE at once: the connection then continues as SIMPLE.
//
// A SaslMechanism is one client mechanism: DIGEST-MD5 for delegation tokens today, GSSAPI for
// Kerberos later.
//
// Threads: a mechanism and a handshake belong to one connection attempt, on one thread.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hadoop/sasl/sasl.pb.h"

namespace tony::hadoop {

// Quality of protection (RFC 2222's security layers; Hadoop's hadoop.rpc.protection
// authentication, integrity, privacy), weakest first.
enum class SaslQop { kAuth, kAuthInt, kAuthConf };

class SaslMechanism {
 public:
  virtual ~SaslMechanism() = default;

  // Hadoop's auth method name ("TOKEN", "KERBEROS") and the SASL mechanism ("DIGEST-MD5").
  virtual std::string_view method() const = 0;
  virtual std::string_view mechanism() const = 0;

  // Binds the mechanism to the server's offer (its SASL protocol and server id). Called once,
  // before the first Evaluate.
  [[nodiscard]] virtual absl::Status Start(const proto::SaslAuthOffer& offer) = 0;
  // Answers one server challenge; an empty challenge asks for the initial response.
  [[nodiscard]] virtual absl::StatusOr<std::string> Evaluate(std::string_view challenge) = 0;
  // Whether the mechanism has finished (and, for DIGEST-MD5, verified the server).
  virtual bool complete() const = 0;

  // After complete(): the protection the handshake agreed on (a mechanism picks the strongest the
  // server offers). Other than kAuth, every byte after the handshake travels through Wrap and
  // Unwrap: the connection sends Wrap's tokens in WRAP messages and reads the server's the same
  // way.
  virtual SaslQop qop() const { return SaslQop::kAuth; }
  // Protects one message for the server (integrity, or integrity and confidentiality).
  [[nodiscard]] virtual absl::StatusOr<std::string> Wrap(std::string_view message) {
    return absl::FailedPreconditionError(std::string(mechanism()) + ": no security layer");
  }
  // Checks (and decrypts) one token from the server; a token that fails its check is an error.
  [[nodiscard]] virtual absl::StatusOr<std::string> Unwrap(std::string_view token) {
    return absl::FailedPreconditionError(std::string(mechanism()) + ": no security layer");
  }
  // The largest message one Wrap may take (the server's receive buffer less the overhead).
  virtual size_t max_wrap_size() const { return 0; }
};

// How the handshake ended.
enum class SaslOutcome {
  kAuthenticated,     // a mechanism completed; the connection is authenticated by it
  kSwitchedToSimple,  // the server runs without security; continue as SIMPLE
};

// One frame each way: the handshake sends an RpcSasl and receives the server's RpcSasl. The
// transport adds and checks the RPC headers (call id -33) and maps error responses to Status.
class SaslTransport {
 public:
  virtual ~SaslTransport() = default;
  [[nodiscard]] virtual absl::Status Send(const proto::RpcSasl& message) = 0;
  [[nodiscard]] virtual absl::StatusOr<proto::RpcSasl> Receive() = 0;
};

// Runs the handshake with the given mechanisms (in order of preference). `peer` names the server
// in errors. On kAuthenticated, *used (if not null) is set to the mechanism that completed.
[[nodiscard]] absl::StatusOr<SaslOutcome> RunSaslHandshake(
    SaslTransport& transport, const std::vector<SaslMechanism*>& mechanisms, std::string_view peer,
    SaslMechanism** used = nullptr);

}  // namespace tony::hadoop
