#pragma once
// SASL DIGEST-MD5 (RFC 2831) with a Hadoop delegation token, Hadoop's TOKEN auth method, through
// libgsasl.
//
// As Hadoop's SaslRpcClient does: the user name is base64(token identifier), the password is
// base64(token password), the digest-uri is "<offer protocol>/<offer server id>" (for tokens the
// server offers "" and "default", so "/default"), the realm is the first one the server's
// challenge names. Only quality of protection "auth" is supported: a server configured with
// hadoop.rpc.protection=integrity or privacy is refused with a message that says so.
//
// Threads: one handshake, one thread.

#include <memory>
#include <string>
#include <string_view>

#include "hadoop/credentials.h"
#include "hadoop/sasl.h"

struct Gsasl;
struct Gsasl_session;

namespace tony::hadoop {

class DigestMd5Mechanism final : public SaslMechanism {
 public:
  explicit DigestMd5Mechanism(Token token);
  ~DigestMd5Mechanism() override;
  DigestMd5Mechanism(const DigestMd5Mechanism&) = delete;
  DigestMd5Mechanism& operator=(const DigestMd5Mechanism&) = delete;

  std::string_view method() const override { return "TOKEN"; }
  std::string_view mechanism() const override { return "DIGEST-MD5"; }
  absl::Status Start(const proto::SaslAuthOffer& offer) override;
  absl::StatusOr<std::string> Evaluate(std::string_view challenge) override;
  bool complete() const override { return complete_; }

  // What Hadoop's SASL callback hands DIGEST-MD5 for a token (standard base64, padded).
  static std::string UserName(const Token& token);
  static std::string Password(const Token& token);

 private:
  Token token_;
  Gsasl* context_ = nullptr;
  Gsasl_session* session_ = nullptr;
  bool complete_ = false;
};

// Standard base64 with '=' padding, no line breaks (what commons-codec's encodeBase64 gives).
std::string Base64Encode(std::string_view bytes);

}  // namespace tony::hadoop
