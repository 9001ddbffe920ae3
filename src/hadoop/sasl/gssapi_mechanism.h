#pragma once
// SASL GSSAPI (RFC 4752) with Kerberos 5, Hadoop's KERBEROS auth method, through MIT's GSSAPI.
//
// The server's offer names its principal: protocol "rm" and server id "rm1.example.com" mean
// rm/rm1.example.com@REALM. When the caller knows the principal the cluster configures for the
// service (yarn.resourcemanager.principal, _HOST substituted), an offer for another principal is
// refused, as Hadoop's own client does: a server cannot make tony authenticate to an impostor.
//
// After the Kerberos context (mutual authentication) the server proposes the security layers it
// allows and its receive buffer, wrapped; the client picks the strongest (privacy over integrity
// over none) and answers, wrapped, with its own buffer size and no authorization id. The chosen
// layer is qop(); Wrap and Unwrap then protect every frame of the connection.
//
// Threads: one connection's handshake and frames, on one thread at a time.

#include <gssapi/gssapi.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hadoop/sasl/kerberos.h"
#include "hadoop/sasl/sasl.h"

namespace tony::hadoop {

class GssapiMechanism final : public SaslMechanism {
 public:
  // expected_principal: the server's principal from the cluster's configuration, _HOST already
  // substituted; empty accepts whichever the server offers.
  GssapiMechanism(std::shared_ptr<const KerberosCredentials> credentials,
                  std::string expected_principal);
  ~GssapiMechanism() override;
  GssapiMechanism(const GssapiMechanism&) = delete;
  GssapiMechanism& operator=(const GssapiMechanism&) = delete;

  std::string_view method() const override { return "KERBEROS"; }
  std::string_view mechanism() const override { return "GSSAPI"; }
  absl::Status Start(const proto::SaslAuthOffer& offer) override;
  absl::StatusOr<std::string> Evaluate(std::string_view challenge) override;
  bool complete() const override { return phase_ == Phase::kDone; }

  SaslQop qop() const override { return qop_; }
  absl::StatusOr<std::string> Wrap(std::string_view message) override;
  absl::StatusOr<std::string> Unwrap(std::string_view token) override;
  size_t max_wrap_size() const override { return max_wrap_size_; }

  // The principal the handshake authenticated to ("rm/rm1.example.com@EXAMPLE.COM").
  const std::string& server_principal() const { return server_principal_; }

 private:
  enum class Phase { kContext, kLayers, kDone };

  absl::StatusOr<std::string> StepContext(std::string_view token);
  absl::StatusOr<std::string> ChooseLayer(std::string_view token);

  std::shared_ptr<const KerberosCredentials> credentials_;
  std::string expected_principal_;
  std::string server_principal_;
  gss_name_t target_ = GSS_C_NO_NAME;
  gss_ctx_id_t context_ = GSS_C_NO_CONTEXT;
  Phase phase_ = Phase::kContext;
  SaslQop qop_ = SaslQop::kAuth;
  size_t max_wrap_size_ = 0;
};

// IpcClientOptions::sasl_mechanisms for a Kerberos login to a service on `host` whose principal
// the cluster configures as `principal_pattern` (yarn.resourcemanager.principal,
// dfs.namenode.kerberos.principal: "rm/_HOST@EXAMPLE.COM").
std::function<std::vector<std::unique_ptr<SaslMechanism>>()> KerberosSasl(
    std::shared_ptr<const KerberosCredentials> credentials, std::string_view principal_pattern,
    std::string_view host);

}  // namespace tony::hadoop
