#pragma once
// A Hadoop server's side of SASL GSSAPI (SaslRpcServer with Java's GssKrb5Server), played in
// process on MIT Kerberos's acceptor, for gssapi_acceptor_test: tony's client mechanism against a
// real GSSAPI implementation.

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>

#include <cstdint>
#include <deque>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/strings.h"
#include "hadoop/sasl/gssapi_mechanism.h"
#include "hadoop/sasl/sasl.h"

namespace tony::testing {

namespace proto = hadoop::proto;

inline constexpr uint8_t kLayerNone = 1;
inline constexpr uint8_t kLayerIntegrity = 2;
inline constexpr uint8_t kLayerPrivacy = 4;
// The receive buffer the test server offers with a security layer.
inline constexpr uint32_t kServerBuffer = 65536;

inline gss_buffer_desc AsBuffer(const std::string& bytes) {
  return {bytes.size(), const_cast<char*>(bytes.data())};
}

inline std::string TakeBuffer(gss_buffer_desc* buffer) {
  std::string bytes(static_cast<const char*>(buffer->value), buffer->length);
  OM_uint32 minor = 0;
  gss_release_buffer(&minor, buffer);
  return bytes;
}

// The server's side of Hadoop's SASL GSSAPI exchange (SaslRpcServer with Java's GssKrb5Server) on
// MIT's acceptor. Send takes one client message and queues the server's answer for Receive; an
// acceptor failure is Send's error, as a real server would close the connection.
class GssapiServer final : public hadoop::SaslTransport {
 public:
  // `layers`: RFC 4752's bitmask the server offers; `buffer`: its receive buffer.
  GssapiServer(gss_cred_id_t credential, uint8_t layers, uint32_t buffer)
      : credential_(credential), layers_(layers), buffer_(buffer) {}
  ~GssapiServer() override {
    OM_uint32 minor = 0;
    if (context_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &context_, GSS_C_NO_BUFFER);
  }

  // Changes the wrapped layer offer before it is sent.
  std::function<void(std::string&)> tamper_offer;

  absl::Status Send(const proto::RpcSasl& message) override {
    proto::RpcSasl reply;
    switch (message.state()) {
      case proto::SASL_NEGOTIATE: {
        reply.set_state(proto::SASL_NEGOTIATE);
        proto::SaslAuthOffer* offer = reply.add_auths();
        offer->set_method("KERBEROS");
        offer->set_mechanism("GSSAPI");
        offer->set_protocol("hdfs");
        offer->set_server_id("localhost");
        break;
      }
      case proto::SASL_INITIATE:
        if (message.auths_size() != 1 || message.auths(0).mechanism() != "GSSAPI") {
          return absl::InvalidArgumentError("test server: INITIATE without the GSSAPI offer");
        }
        [[fallthrough]];
      case proto::SASL_RESPONSE: {
        absl::StatusOr<proto::RpcSasl> next = Step(message.token());
        if (!next.ok()) return next.status();
        reply = *std::move(next);
        break;
      }
      default:
        return absl::InvalidArgumentError("test server: unexpected client state");
    }
    replies_.push_back(std::move(reply));
    return absl::OkStatus();
  }

  absl::StatusOr<proto::RpcSasl> Receive() override {
    if (replies_.empty()) return absl::InternalError("test server: nothing to receive");
    proto::RpcSasl reply = std::move(replies_.front());
    replies_.pop_front();
    return reply;
  }

  gss_ctx_id_t context() const { return context_; }
  bool established() const { return established_; }
  int context_tokens() const { return context_tokens_; }
  const std::string& client_principal() const { return client_principal_; }
  OM_uint32 flags() const { return flags_; }
  // The client's unwrapped answer to the layer offer; empty until it came.
  const std::string& answer() const { return answer_; }

 private:
  absl::StatusOr<proto::RpcSasl> Step(const std::string& token) {
    proto::RpcSasl reply;
    OM_uint32 minor = 0;
    if (!established_) {
      ++context_tokens_;
      gss_buffer_desc input = AsBuffer(token);
      gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
      gss_name_t client = GSS_C_NO_NAME;
      OM_uint32 major =
          gss_accept_sec_context(&minor, &context_, credential_, &input, GSS_C_NO_CHANNEL_BINDINGS,
                                 &client, nullptr, &output, &flags_, nullptr, nullptr);
      std::string out = TakeBuffer(&output);
      if (GSS_ERROR(major)) {
        return absl::UnauthenticatedError(
            StrCat("test server: accept: ", hadoop::GssStatusText(major, minor)));
      }
      if (major == GSS_S_COMPLETE) {
        established_ = true;
        gss_buffer_desc name = GSS_C_EMPTY_BUFFER;
        if (!GSS_ERROR(gss_display_name(&minor, client, &name, nullptr))) {
          client_principal_ = TakeBuffer(&name);
        }
        gss_release_name(&minor, &client);
      }
      // With mutual authentication the last context token (AP-REP) goes out first; the client's
      // empty response to it asks for the layer offer.
      if (!out.empty() || !established_) {
        reply.set_state(proto::SASL_CHALLENGE);
        reply.set_token(out);
        return reply;
      }
      return Offer();
    }
    if (!offered_) {
      if (!token.empty()) return absl::InvalidArgumentError("test server: a token after AP-REP");
      return Offer();
    }
    std::string answer = token;  // gss_unwrap may write into its input
    gss_buffer_desc input = {answer.size(), answer.data()};
    gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
    OM_uint32 major = gss_unwrap(&minor, context_, &input, &output, nullptr, nullptr);
    if (GSS_ERROR(major)) {
      return absl::PermissionDeniedError(
          StrCat("test server: the layer answer: ", hadoop::GssStatusText(major, minor)));
    }
    answer_ = TakeBuffer(&output);
    reply.set_state(proto::SASL_SUCCESS);
    return reply;
  }

  // RFC 4752: the layers and the buffer, wrapped for integrity.
  absl::StatusOr<proto::RpcSasl> Offer() {
    offered_ = true;
    std::string offer = {static_cast<char>(layers_), static_cast<char>((buffer_ >> 16) & 0xFF),
                         static_cast<char>((buffer_ >> 8) & 0xFF),
                         static_cast<char>(buffer_ & 0xFF)};
    gss_buffer_desc plain = AsBuffer(offer);
    gss_buffer_desc wrapped = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    if (GSS_ERROR(gss_wrap(&minor, context_, 0, GSS_C_QOP_DEFAULT, &plain, nullptr, &wrapped))) {
      return absl::InternalError("test server: wrap of the layer offer");
    }
    proto::RpcSasl reply;
    reply.set_state(proto::SASL_CHALLENGE);
    reply.set_token(TakeBuffer(&wrapped));
    if (tamper_offer) tamper_offer(*reply.mutable_token());
    return reply;
  }

  gss_cred_id_t credential_;
  uint8_t layers_;
  uint32_t buffer_;
  gss_ctx_id_t context_ = GSS_C_NO_CONTEXT;
  bool established_ = false;
  bool offered_ = false;
  int context_tokens_ = 0;
  OM_uint32 flags_ = 0;
  std::string client_principal_;
  std::string answer_;
  std::deque<proto::RpcSasl> replies_;
};

}  // namespace tony::testing
