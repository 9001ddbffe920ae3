#include "hadoop/sasl/gssapi_mechanism.h"

#include <gssapi/gssapi_krb5.h>

#include <utility>

#include "common/strings.h"

namespace tony::hadoop {
namespace {

// RFC 4752's security layer bits.
constexpr uint8_t kLayerNone = 1;
constexpr uint8_t kLayerIntegrity = 2;
constexpr uint8_t kLayerPrivacy = 4;
// What tony can receive in one wrapped token (RFC 4752's 3-byte size).
constexpr uint32_t kReceiveBuffer = 0xFFFFFF;

std::string TakeBuffer(gss_buffer_desc* buffer) {
  std::string bytes(static_cast<const char*>(buffer->value), buffer->length);
  OM_uint32 minor = 0;
  gss_release_buffer(&minor, buffer);
  return bytes;
}

gss_buffer_desc AsBuffer(std::string_view bytes) {
  return {bytes.size(), const_cast<char*>(bytes.data())};
}

// gss_unwrap's output. MIT's gss_unwrap rearranges an integrity-only token in place, so it gets a
// copy: the caller's token is const.
OM_uint32 UnwrapCopy(OM_uint32* minor, gss_ctx_id_t context, std::string_view token,
                     gss_buffer_desc* output, int* conf) {
  std::string copy(token);
  gss_buffer_desc input = {copy.size(), copy.data()};
  return gss_unwrap(minor, context, &input, output, conf, nullptr);
}

}  // namespace

GssapiMechanism::GssapiMechanism(std::shared_ptr<const KerberosCredentials> credentials,
                                 std::string expected_principal)
    : credentials_(std::move(credentials)), expected_principal_(std::move(expected_principal)) {}

GssapiMechanism::~GssapiMechanism() {
  OM_uint32 minor = 0;
  if (context_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &context_, GSS_C_NO_BUFFER);
  if (target_ != GSS_C_NO_NAME) gss_release_name(&minor, &target_);
}

absl::Status GssapiMechanism::Start(const proto::SaslAuthOffer& offer) {
  if (target_ != GSS_C_NO_NAME) return absl::FailedPreconditionError("GSSAPI: started twice");
  if (offer.protocol().empty() || offer.server_id().empty()) {
    return absl::InvalidArgumentError(
        "GSSAPI: the server's KERBEROS offer names no principal (protocol and server id)");
  }
  gss_OID name_type = GSS_C_NT_HOSTBASED_SERVICE;
  std::string name = StrCat(offer.protocol(), "@", offer.server_id());
  server_principal_ = StrCat(offer.protocol(), "/", offer.server_id());
  if (!expected_principal_.empty()) {
    PrincipalParts expected = SplitPrincipal(expected_principal_);
    if (expected.service != offer.protocol() ||
        ToLower(expected.host) != ToLower(offer.server_id())) {
      return absl::PermissionDeniedError(
          StrCat("GSSAPI: the server says it is ", offer.protocol(), "/", offer.server_id(),
                 " but the cluster's configuration names ", expected_principal_,
                 "; refusing to authenticate to it"));
    }
    server_principal_ = expected_principal_;
    name = expected_principal_;
    name_type = GSS_KRB5_NT_PRINCIPAL_NAME;
  }
  gss_buffer_desc buffer = AsBuffer(name);
  OM_uint32 minor = 0;
  OM_uint32 major = gss_import_name(&minor, &buffer, name_type, &target_);
  if (GSS_ERROR(major)) {
    target_ = GSS_C_NO_NAME;
    return absl::InvalidArgumentError(
        StrCat("GSSAPI: bad server principal ", name, ": ", GssStatusText(major, minor)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> GssapiMechanism::Evaluate(std::string_view challenge) {
  if (target_ == GSS_C_NO_NAME) return absl::FailedPreconditionError("GSSAPI: not started");
  switch (phase_) {
    case Phase::kContext:
      return StepContext(challenge);
    case Phase::kLayers:
      return ChooseLayer(challenge);
    case Phase::kDone:
      break;
  }
  return absl::FailedPreconditionError("GSSAPI: challenged after it completed");
}

absl::StatusOr<std::string> GssapiMechanism::StepContext(std::string_view token) {
  gss_buffer_desc input = AsBuffer(token);
  gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
  OM_uint32 minor = 0;
  OM_uint32 flags = 0;
  OM_uint32 major = gss_init_sec_context(
      &minor, credentials_->handle(), &context_, target_, const_cast<gss_OID>(gss_mech_krb5),
      GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG | GSS_C_SEQUENCE_FLAG, 0,
      GSS_C_NO_CHANNEL_BINDINGS, context_ == GSS_C_NO_CONTEXT ? GSS_C_NO_BUFFER : &input, nullptr,
      &output, &flags, nullptr);
  std::string reply = TakeBuffer(&output);
  if (GSS_ERROR(major)) {
    return absl::UnauthenticatedError(StrCat("GSSAPI: Kerberos authentication of ",
                                             credentials_->principal(), " to ", server_principal_,
                                             " failed: ", GssStatusText(major, minor)));
  }
  if (major == GSS_S_COMPLETE) {
    if ((flags & GSS_C_MUTUAL_FLAG) == 0) {
      return absl::PermissionDeniedError(
          StrCat("GSSAPI: ", server_principal_, " did not authenticate itself"));
    }
    phase_ = Phase::kLayers;
  }
  return reply;
}

absl::StatusOr<std::string> GssapiMechanism::ChooseLayer(std::string_view token) {
  gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
  OM_uint32 minor = 0;
  OM_uint32 major = UnwrapCopy(&minor, context_, token, &output, nullptr);
  if (GSS_ERROR(major)) {
    return absl::PermissionDeniedError(
        StrCat("GSSAPI: the server's security-layer offer fails its "
               "check: ",
               GssStatusText(major, minor)));
  }
  std::string offer = TakeBuffer(&output);
  if (offer.size() != 4) {
    return absl::InvalidArgumentError(
        StrCat("GSSAPI: the server's security-layer offer has ", offer.size(), " bytes, not 4"));
  }
  const uint8_t layers = static_cast<uint8_t>(offer[0]);
  const uint32_t server_buffer = (static_cast<uint8_t>(offer[1]) << 16) |
                                 (static_cast<uint8_t>(offer[2]) << 8) |
                                 static_cast<uint8_t>(offer[3]);
  uint8_t chosen = 0;
  if ((layers & kLayerPrivacy) != 0) {
    chosen = kLayerPrivacy;
    qop_ = SaslQop::kAuthConf;
  } else if ((layers & kLayerIntegrity) != 0) {
    chosen = kLayerIntegrity;
    qop_ = SaslQop::kAuthInt;
  } else if ((layers & kLayerNone) != 0) {
    chosen = kLayerNone;
    qop_ = SaslQop::kAuth;
  } else {
    return absl::InvalidArgumentError(
        StrCat("GSSAPI: the server offers no security layer tony knows (mask ", layers, ")"));
  }
  if (qop_ != SaslQop::kAuth) {
    if (server_buffer == 0) {
      return absl::InvalidArgumentError(
          "GSSAPI: the server offers a security layer with a receive buffer of 0 bytes");
    }
    OM_uint32 limit = 0;
    major = gss_wrap_size_limit(&minor, context_, qop_ == SaslQop::kAuthConf ? 1 : 0,
                                GSS_C_QOP_DEFAULT, server_buffer, &limit);
    if (GSS_ERROR(major) || limit == 0) {
      return absl::InternalError(
          StrCat("GSSAPI: no room for data in a wrapped token of ", server_buffer, " bytes"));
    }
    max_wrap_size_ = limit;
  }
  const uint32_t ours = qop_ == SaslQop::kAuth ? 0 : kReceiveBuffer;
  std::string answer = {static_cast<char>(chosen), static_cast<char>((ours >> 16) & 0xFF),
                        static_cast<char>((ours >> 8) & 0xFF), static_cast<char>(ours & 0xFF)};
  // RFC 4752: the answer is wrapped for integrity only; no authorization identity follows.
  gss_buffer_desc plain = AsBuffer(answer);
  major = gss_wrap(&minor, context_, 0, GSS_C_QOP_DEFAULT, &plain, nullptr, &output);
  if (GSS_ERROR(major)) {
    return absl::InternalError(
        StrCat("GSSAPI: cannot wrap the security-layer answer: ", GssStatusText(major, minor)));
  }
  phase_ = Phase::kDone;
  return TakeBuffer(&output);
}

absl::StatusOr<std::string> GssapiMechanism::Wrap(std::string_view message) {
  if (phase_ != Phase::kDone || qop_ == SaslQop::kAuth) {
    return absl::FailedPreconditionError("GSSAPI: no security layer");
  }
  gss_buffer_desc input = AsBuffer(message);
  gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
  OM_uint32 minor = 0;
  int conf = 0;
  OM_uint32 major = gss_wrap(&minor, context_, qop_ == SaslQop::kAuthConf ? 1 : 0,
                             GSS_C_QOP_DEFAULT, &input, &conf, &output);
  if (GSS_ERROR(major)) {
    return absl::InternalError(StrCat("GSSAPI: wrap: ", GssStatusText(major, minor)));
  }
  if (qop_ == SaslQop::kAuthConf && conf == 0) {
    TakeBuffer(&output);
    return absl::InternalError("GSSAPI: wrap did not encrypt");
  }
  return TakeBuffer(&output);
}

absl::StatusOr<std::string> GssapiMechanism::Unwrap(std::string_view token) {
  if (phase_ != Phase::kDone || qop_ == SaslQop::kAuth) {
    return absl::FailedPreconditionError("GSSAPI: no security layer");
  }
  gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
  OM_uint32 minor = 0;
  int conf = 0;
  OM_uint32 major = UnwrapCopy(&minor, context_, token, &output, &conf);
  if (GSS_ERROR(major)) {
    return absl::DataLossError(
        StrCat("GSSAPI: a wrapped message fails its check: ", GssStatusText(major, minor)));
  }
  std::string plain = TakeBuffer(&output);
  if (qop_ == SaslQop::kAuthConf && conf == 0) {
    return absl::DataLossError("GSSAPI: the server sent an unencrypted message under privacy");
  }
  // Replays and reordering: MIT reports them as supplementary bits of a successful unwrap.
  if ((major & (GSS_S_DUPLICATE_TOKEN | GSS_S_OLD_TOKEN | GSS_S_UNSEQ_TOKEN | GSS_S_GAP_TOKEN)) !=
      0) {
    return absl::DataLossError("GSSAPI: a wrapped message is replayed or out of order");
  }
  return plain;
}

std::function<std::vector<std::unique_ptr<SaslMechanism>>()> KerberosSasl(
    std::shared_ptr<const KerberosCredentials> credentials, std::string_view principal_pattern,
    std::string_view host) {
  std::string principal = SubstituteHost(principal_pattern, CanonicalHostName(host));
  return [credentials = std::move(credentials), principal = std::move(principal)] {
    std::vector<std::unique_ptr<SaslMechanism>> mechanisms;
    mechanisms.push_back(std::make_unique<GssapiMechanism>(credentials, principal));
    return mechanisms;
  };
}

}  // namespace tony::hadoop
