#include "hadoop/sasl/digest_md5_mechanism.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "common/strings.h"

namespace tony::hadoop {
namespace {

// Hadoop's SaslRpcServer answers TOKEN offers with this server id (its SASL_DEFAULT_REALM).
constexpr char kDefaultServerId[] = "default";
// The only nonce count tony sends: one authentication per connection, no reauthentication.
constexpr char kNonceCount[] = "00000001";
constexpr char kZeroBodyHash[] = ":00000000000000000000000000000000";

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    out.push_back(kDigits[static_cast<uint8_t>(c) >> 4]);
    out.push_back(kDigits[static_cast<uint8_t>(c) & 15]);
  }
  return out;
}

absl::StatusOr<std::string> RandomCnonce() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    return absl::InternalError("DIGEST-MD5: RAND_bytes cannot make a client nonce");
  }
  return Hex(std::string_view(reinterpret_cast<char*>(bytes), sizeof(bytes)));
}

// RFC 2831 2.1.2.1: with charset=utf-8, a user name, realm or password whose characters all lie in
// ISO 8859-1 is hashed in ISO 8859-1 (each on its own, as Java's server does); anything else is
// hashed as sent.
std::string HashEncoding(std::string_view text, bool utf8) {
  if (!utf8) return std::string(text);
  std::string latin1;
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<uint8_t>(text[i]);
    if (c < 0x80) {
      latin1.push_back(static_cast<char>(c));
    } else if ((c == 0xc2 || c == 0xc3) && i + 1 < text.size() &&
               (static_cast<uint8_t>(text[i + 1]) & 0xc0) == 0x80) {
      latin1.push_back(static_cast<char>(((c & 0x03) << 6) | (text[i + 1] & 0x3f)));
      ++i;
    } else {
      return std::string(text);  // beyond U+00FF, or not UTF-8
    }
  }
  return latin1;
}

std::string Quoted(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

bool Offers(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string_view QopName(SaslQop qop) {
  switch (qop) {
    case SaslQop::kAuth:
      return "auth";
    case SaslQop::kAuthInt:
      return "auth-int";
    case SaslQop::kAuthConf:
      return "auth-conf";
  }
  return "?";
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) |
                 (static_cast<uint8_t>(bytes[i + 1]) << 8) | static_cast<uint8_t>(bytes[i + 2]);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(kAlphabet[(n >> 6) & 63]);
    out.push_back(kAlphabet[n & 63]);
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    if (rest == 2) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string DigestMd5Mechanism::UserName(const Token& token) {
  return Base64Encode(token.identifier);
}

std::string DigestMd5Mechanism::Password(const Token& token) {
  return Base64Encode(token.password);
}

DigestMd5Mechanism::DigestMd5Mechanism(const Token& token, Options options)
    : DigestMd5Mechanism(UserName(token), Password(token), std::move(options)) {}

DigestMd5Mechanism::DigestMd5Mechanism(std::string username, std::string password, Options options)
    : username_(std::move(username)), password_(std::move(password)), options_(std::move(options)) {
  if (!options_.cnonce) options_.cnonce = RandomCnonce;
}

DigestMd5Mechanism::~DigestMd5Mechanism() = default;

absl::Status DigestMd5Mechanism::Start(const proto::SaslAuthOffer& offer) {
  if (state_ != State::kNew) return absl::FailedPreconditionError("DIGEST-MD5: started twice");
  digest_uri_ =
      StrCat(offer.protocol(), "/", offer.has_server_id() ? offer.server_id() : kDefaultServerId);
  state_ = State::kStarted;
  return absl::OkStatus();
}

absl::StatusOr<std::string> DigestMd5Mechanism::Evaluate(std::string_view challenge) {
  switch (state_) {
    case State::kNew:
      return absl::FailedPreconditionError("DIGEST-MD5: not started");
    case State::kComplete:
      return absl::FailedPreconditionError("DIGEST-MD5: already complete");
    case State::kFailed:
      return absl::FailedPreconditionError("DIGEST-MD5: the handshake failed earlier");
    case State::kStarted: {
      // DIGEST-MD5 has no initial response: the client waits for the server's challenge.
      if (challenge.empty()) return std::string();
      absl::StatusOr<std::string> response = Respond(challenge);
      state_ = response.ok() ? State::kAwaitingRspauth : State::kFailed;
      return response;
    }
    case State::kAwaitingRspauth: {
      absl::Status status = CheckRspauth(challenge);
      state_ = status.ok() ? State::kComplete : State::kFailed;
      if (!status.ok()) return status;
      return std::string();
    }
  }
  return absl::InternalError("DIGEST-MD5: unknown state");
}

absl::StatusOr<std::string> DigestMd5Mechanism::Respond(std::string_view challenge_text) {
  absl::StatusOr<DigestMd5Challenge> challenge = ParseDigestMd5Challenge(challenge_text);
  if (!challenge.ok()) return challenge.status();

  // The strongest protection the server offers that tony has.
  std::optional<DigestMd5Cipher> cipher;
  if (Offers(challenge->qops, "auth-conf")) {
    for (DigestMd5Cipher c : options_.ciphers) {
      if (Offers(challenge->ciphers, DigestMd5CipherName(c)) && DigestMd5CipherAvailable(c)) {
        cipher = c;
        break;
      }
    }
  }
  if (cipher.has_value()) {
    qop_ = SaslQop::kAuthConf;
  } else if (Offers(challenge->qops, "auth-int")) {
    qop_ = SaslQop::kAuthInt;
  } else if (Offers(challenge->qops, "auth")) {
    qop_ = SaslQop::kAuth;
  } else {
    std::string offered = StrCat("qop ", Join(challenge->qops, ","));
    if (Offers(challenge->qops, "auth-conf")) {
      offered += StrCat(" with cipher ",
                        challenge->ciphers.empty() ? "(none)" : Join(challenge->ciphers, ","));
    }
    bool rc4 = DigestMd5CipherAvailable(DigestMd5Cipher::kRc4);
    return absl::FailedPreconditionError(
        StrCat("DIGEST-MD5: the server offers no protection tony supports (", offered,
               "); tony has auth, auth-int and auth-conf with ", rc4 ? "3des or rc4" : "3des",
               rc4 ? "" : " (rc4 needs OpenSSL's legacy provider, which cannot be loaded)"));
  }
  cipher_ = cipher;
  server_maxbuf_ = challenge->maxbuf;

  absl::StatusOr<std::string> cnonce = options_.cnonce();
  if (!cnonce.ok()) return cnonce.status();
  const std::string realm = challenge->realms.empty() ? "" : challenge->realms.front();
  const std::string& nonce = challenge->nonce;
  const bool utf8 = challenge->utf8;

  const std::string a1 =
      StrCat(Md5(StrCat(HashEncoding(username_, utf8), ":", HashEncoding(realm, utf8), ":",
                        HashEncoding(password_, utf8))),
             ":", nonce, ":", *cnonce);
  ha1_ = Md5(a1);
  if (ha1_.size() != 16) return absl::InternalError("DIGEST-MD5: MD5 failed");
  const std::string_view qop = QopName(qop_);
  const std::string body_hash = qop_ == SaslQop::kAuth ? "" : kZeroBodyHash;
  auto digest = [&](std::string_view a2_method) {
    std::string a2 = StrCat(a2_method, ":", digest_uri_, body_hash);
    return Hex(Md5(StrCat(Hex(ha1_), ":", nonce, ":", kNonceCount, ":", *cnonce, ":", qop, ":",
                          Hex(Md5(a2)))));
  };
  expected_rspauth_ = digest("");

  std::string response;
  if (utf8) response += "charset=utf-8,";
  response += StrCat("username=", Quoted(username_), ",");
  if (!realm.empty()) response += StrCat("realm=", Quoted(realm), ",");
  response += StrCat("nonce=", Quoted(nonce), ",nc=", kNonceCount, ",cnonce=", Quoted(*cnonce),
                     ",digest-uri=", Quoted(digest_uri_), ",maxbuf=", options_.maxbuf,
                     ",response=", digest("AUTHENTICATE"), ",qop=", qop);
  if (cipher_.has_value()) response += StrCat(",cipher=", DigestMd5CipherName(*cipher_));
  return response;
}

absl::Status DigestMd5Mechanism::CheckRspauth(std::string_view text) {
  absl::StatusOr<std::string> rspauth = ParseDigestMd5ResponseAuth(text);
  if (!rspauth.ok()) return rspauth.status();
  if (rspauth->size() != expected_rspauth_.size() ||
      CRYPTO_memcmp(rspauth->data(), expected_rspauth_.data(), expected_rspauth_.size()) != 0) {
    return absl::PermissionDeniedError(
        "DIGEST-MD5: the server's rspauth does not match: it does not know this token's password");
  }
  if (qop_ != SaslQop::kAuth) {
    absl::StatusOr<std::unique_ptr<DigestMd5SecurityLayer>> layer =
        DigestMd5SecurityLayer::Create(ha1_, cipher_, server_maxbuf_);
    if (!layer.ok()) return layer.status();
    layer_ = *std::move(layer);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> DigestMd5Mechanism::Wrap(std::string_view message) {
  if (layer_ == nullptr) {
    return absl::FailedPreconditionError(StrCat("DIGEST-MD5: no security layer (qop ",
                                                QopName(qop_),
                                                complete() ? ")" : ", handshake not complete)"));
  }
  return layer_->Wrap(message);
}

absl::StatusOr<std::string> DigestMd5Mechanism::Unwrap(std::string_view token) {
  if (layer_ == nullptr) {
    return absl::FailedPreconditionError(StrCat("DIGEST-MD5: no security layer (qop ",
                                                QopName(qop_),
                                                complete() ? ")" : ", handshake not complete)"));
  }
  return layer_->Unwrap(token);
}

size_t DigestMd5Mechanism::max_wrap_size() const {
  return layer_ == nullptr ? 0 : layer_->max_wrap_size();
}

}  // namespace tony::hadoop
