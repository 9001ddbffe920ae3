#include "hadoop/sasl/sasl.h"

#include "common/strings.h"

namespace tony::hadoop {
namespace {

// DIGEST-MD5 needs two rounds; a server that keeps challenging is broken or hostile.
constexpr int kMaxRounds = 16;

std::string OfferName(const proto::SaslAuthOffer& offer) {
  return offer.mechanism().empty() ? offer.method()
                                   : StrCat(offer.method(), "/", offer.mechanism());
}

}  // namespace

absl::StatusOr<SaslOutcome> RunSaslHandshake(SaslTransport& transport,
                                             const std::vector<SaslMechanism*>& mechanisms,
                                             std::string_view peer, SaslMechanism** used) {
  proto::RpcSasl negotiate;
  negotiate.set_state(proto::SASL_NEGOTIATE);
  if (absl::Status s = transport.Send(negotiate); !s.ok()) return s;

  SaslMechanism* active = nullptr;
  for (int round = 0; round < kMaxRounds; ++round) {
    absl::StatusOr<proto::RpcSasl> message = transport.Receive();
    if (!message.ok()) return message.status();
    proto::RpcSasl reply;
    switch (message->state()) {
      case proto::SASL_NEGOTIATE: {
        if (active != nullptr) {
          return absl::InvalidArgumentError(
              StrCat("SASL with ", peer, ": server sent NEGOTIATE twice"));
        }
        const proto::SaslAuthOffer* picked = nullptr;
        for (const proto::SaslAuthOffer& offer : message->auths()) {
          if (offer.method() == "SIMPLE") {
            picked = &offer;
            break;
          }
          for (SaslMechanism* mechanism : mechanisms) {
            if (offer.method() == mechanism->method() &&
                offer.mechanism() == mechanism->mechanism()) {
              active = mechanism;
              break;
            }
          }
          if (active != nullptr) {
            picked = &offer;
            break;
          }
        }
        if (picked == nullptr) {
          std::vector<std::string> offered;
          for (const proto::SaslAuthOffer& offer : message->auths()) {
            offered.push_back(OfferName(offer));
          }
          std::vector<std::string> ours;
          for (SaslMechanism* mechanism : mechanisms) {
            ours.push_back(StrCat(mechanism->method(), "/", mechanism->mechanism()));
          }
          return absl::PermissionDeniedError(
              StrCat("SASL with ", peer, ": the server accepts ",
                     offered.empty() ? std::string("nothing") : Join(offered, ", "),
                     " but tony has credentials for ",
                     ours.empty() ? std::string("none of them (no token)") : Join(ours, ", ")));
        }
        reply.set_state(proto::SASL_INITIATE);
        proto::SaslAuthOffer* chosen = reply.add_auths();
        *chosen = *picked;
        chosen->clear_challenge();
        if (active == nullptr) {  // SIMPLE: the server expects no further SASL frames
          if (absl::Status s = transport.Send(reply); !s.ok()) return s;
          return SaslOutcome::kSwitchedToSimple;
        }
        if (absl::Status s = active->Start(*picked); !s.ok()) return s;
        absl::StatusOr<std::string> response = active->Evaluate(picked->challenge());
        if (!response.ok()) return response.status();
        reply.set_token(std::move(*response));
        break;
      }
      case proto::SASL_CHALLENGE: {
        if (active == nullptr) {
          return absl::InvalidArgumentError(
              StrCat("SASL with ", peer, ": server sent a challenge before NEGOTIATE"));
        }
        if (!message->has_token()) {
          return absl::InvalidArgumentError(
              StrCat("SASL with ", peer, ": server challenge carries no token"));
        }
        absl::StatusOr<std::string> response = active->Evaluate(message->token());
        if (!response.ok()) return response.status();
        reply.set_state(proto::SASL_RESPONSE);
        reply.set_token(std::move(*response));
        break;
      }
      case proto::SASL_SUCCESS: {
        if (active == nullptr) return SaslOutcome::kSwitchedToSimple;
        if (message->has_token()) {
          absl::StatusOr<std::string> extra = active->Evaluate(message->token());
          if (!extra.ok()) return extra.status();
          if (!extra->empty()) {
            return absl::PermissionDeniedError(StrCat("SASL with ", peer, ": ", active->mechanism(),
                                                      " produced a response to SUCCESS"));
          }
        }
        if (!active->complete()) {
          return absl::PermissionDeniedError(StrCat("SASL with ", peer,
                                                    ": server reported success before ",
                                                    active->mechanism(), " completed"));
        }
        if (used != nullptr) *used = active;
        return SaslOutcome::kAuthenticated;
      }
      default:
        return absl::InvalidArgumentError(
            StrCat("SASL with ", peer, ": unexpected state ", static_cast<int>(message->state())));
    }
    if (absl::Status s = transport.Send(reply); !s.ok()) return s;
  }
  return absl::InvalidArgumentError(
      StrCat("SASL with ", peer, ": no result after ", kMaxRounds, " rounds"));
}

}  // namespace tony::hadoop
