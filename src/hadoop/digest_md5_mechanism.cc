#include "hadoop/digest_md5_mechanism.h"

#include <gsasl.h>

#include <utility>

#include "common/strings.h"

namespace tony::hadoop {
namespace {

// Hadoop's SaslRpcServer answers TOKEN offers with this server id (its SASL_DEFAULT_REALM).
constexpr char kDefaultServerId[] = "default";

absl::Status GsaslError(int rc, std::string_view doing) {
  return absl::InternalError(
      StrCat("DIGEST-MD5: ", doing, ": ", gsasl_strerror_name(rc), " (", gsasl_strerror(rc), ")"));
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

DigestMd5Mechanism::DigestMd5Mechanism(Token token) : token_(std::move(token)) {}

DigestMd5Mechanism::~DigestMd5Mechanism() {
  if (session_ != nullptr) gsasl_finish(session_);
  if (context_ != nullptr) gsasl_done(context_);
}

absl::Status DigestMd5Mechanism::Start(const proto::SaslAuthOffer& offer) {
  if (context_ != nullptr) return absl::FailedPreconditionError("DIGEST-MD5: started twice");
  if (int rc = gsasl_init(&context_); rc != GSASL_OK) {
    context_ = nullptr;
    return GsaslError(rc, "cannot initialize libgsasl");
  }
  if (int rc = gsasl_client_start(context_, "DIGEST-MD5", &session_); rc != GSASL_OK) {
    session_ = nullptr;
    return GsaslError(rc, "cannot start a client session");
  }
  std::string server_id = offer.has_server_id() ? offer.server_id() : kDefaultServerId;
  std::string user = UserName(token_);
  std::string password = Password(token_);
  gsasl_property_set(session_, GSASL_AUTHID, user.c_str());
  gsasl_property_set(session_, GSASL_PASSWORD, password.c_str());
  gsasl_property_set(session_, GSASL_SERVICE, offer.protocol().c_str());
  gsasl_property_set(session_, GSASL_HOSTNAME, server_id.c_str());
  gsasl_property_set(session_, GSASL_QOP, "qop-auth");
  return absl::OkStatus();
}

absl::StatusOr<std::string> DigestMd5Mechanism::Evaluate(std::string_view challenge) {
  if (session_ == nullptr) return absl::FailedPreconditionError("DIGEST-MD5: not started");
  if (complete_) return absl::FailedPreconditionError("DIGEST-MD5: already complete");
  char* output = nullptr;
  size_t output_length = 0;
  int rc = gsasl_step(session_, challenge.data(), challenge.size(), &output, &output_length);
  std::string response(output != nullptr ? output : "", output != nullptr ? output_length : 0);
  gsasl_free(output);
  if (rc != GSASL_OK && rc != GSASL_NEEDS_MORE) {
    if (rc == GSASL_AUTHENTICATION_ERROR) {
      return absl::PermissionDeniedError(
          "DIGEST-MD5: the server's rspauth does not match: it does not know this token's "
          "password");
    }
    return GsaslError(rc, challenge.empty() ? "cannot start" : "cannot answer the challenge");
  }
  if (!challenge.empty() && !response.empty()) {
    // Having read the server's challenge, gsasl records the protections it offers.
    const char* qops = gsasl_property_fast(session_, GSASL_QOPS);
    if (qops != nullptr && !Contains(qops, "qop-auth")) {
      return absl::FailedPreconditionError(StrCat(
          "DIGEST-MD5: the server requires SASL protection '", qops,
          "' (hadoop.rpc.protection=integrity or privacy); tony supports only 'authentication'"));
    }
  }
  complete_ = rc == GSASL_OK;
  return response;
}

}  // namespace tony::hadoop
