#pragma once
// SASL DIGEST-MD5 (RFC 2831) with a Hadoop delegation token, Hadoop's TOKEN auth method, on
// OpenSSL's libcrypto, with all three qualities of protection.
//
// As Hadoop's SaslRpcClient does: the user name is base64(token identifier), the password is
// base64(token password), the digest-uri is "<offer protocol>/<offer server id>" (for tokens the
// server offers "" and "default", so "/default"; "default" too when the offer names no server
// id), the realm is the first one the server's challenge names. The server proves it knows the
// password with rspauth in SUCCESS, which must match.
//
// Protection: the strongest the server offers, auth-conf > auth-int > auth. (Hadoop's Java client
// takes the first of its own hadoop.rpc.protection list that the server offers; tony reads no such
// setting, and the server's list is what the cluster requires.) For auth-conf the cipher is 3des,
// or rc4 when the server offers no 3des and OpenSSL's legacy provider is there
// (digest_md5_security_layer.h). A server whose offers are all beyond that (say auth-conf with
// des only) is refused with a message that names its offers.
//
// libgsasl, which this replaced, has no auth-conf.
//
// Threads: one handshake, one thread; after it, Wrap and Unwrap belong to the connection.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hadoop/common/credentials.h"
#include "hadoop/sasl/digest_md5_challenge.h"
#include "hadoop/sasl/digest_md5_security_layer.h"
#include "hadoop/sasl/sasl.h"

namespace tony::hadoop {

struct DigestMd5Options {
  // Makes the client nonce; by default 16 bytes from RAND_bytes as 32 hex digits. Tests replay
  // the RFC's examples with a fixed one.
  std::function<absl::StatusOr<std::string>()> cnonce;
  // The receive buffer the client announces (maxbuf in its response).
  size_t maxbuf = kDefaultDigestMd5MaxBuf;
  // The ciphers auth-conf may use, most preferred first (tests narrow it to reach rc4).
  std::vector<DigestMd5Cipher> ciphers = {DigestMd5Cipher::k3Des, DigestMd5Cipher::kRc4};
};

class DigestMd5Mechanism final : public SaslMechanism {
 public:
  using Options = DigestMd5Options;

  explicit DigestMd5Mechanism(const Token& token, Options options = {});
  // Plain credentials, for tests and the RFC's examples; a token's are UserName and Password.
  DigestMd5Mechanism(std::string username, std::string password, Options options);
  ~DigestMd5Mechanism() override;
  DigestMd5Mechanism(const DigestMd5Mechanism&) = delete;
  DigestMd5Mechanism& operator=(const DigestMd5Mechanism&) = delete;

  std::string_view method() const override { return "TOKEN"; }
  std::string_view mechanism() const override { return "DIGEST-MD5"; }
  absl::Status Start(const proto::SaslAuthOffer& offer) override;
  absl::StatusOr<std::string> Evaluate(std::string_view challenge) override;
  bool complete() const override { return state_ == State::kComplete; }

  SaslQop qop() const override { return qop_; }
  absl::StatusOr<std::string> Wrap(std::string_view message) override;
  absl::StatusOr<std::string> Unwrap(std::string_view token) override;
  size_t max_wrap_size() const override;
  // After the challenge: the cipher of auth-conf.
  std::optional<DigestMd5Cipher> cipher() const { return cipher_; }

  // What Hadoop's SASL callback hands DIGEST-MD5 for a token (standard base64, padded).
  static std::string UserName(const Token& token);
  static std::string Password(const Token& token);

 private:
  enum class State { kNew, kStarted, kAwaitingRspauth, kComplete, kFailed };

  absl::StatusOr<std::string> Respond(std::string_view challenge_text);
  absl::Status CheckRspauth(std::string_view text);

  std::string username_;
  std::string password_;
  Options options_;
  State state_ = State::kNew;
  std::string digest_uri_;
  SaslQop qop_ = SaslQop::kAuth;
  std::optional<DigestMd5Cipher> cipher_;
  size_t server_maxbuf_ = kDefaultDigestMd5MaxBuf;
  std::string ha1_;               // H(A1), 16 bytes, once the response is sent
  std::string expected_rspauth_;  // hex
  std::unique_ptr<DigestMd5SecurityLayer> layer_;
};

// Standard base64 with '=' padding, no line breaks (what commons-codec's encodeBase64 gives).
std::string Base64Encode(std::string_view bytes);

}  // namespace tony::hadoop
