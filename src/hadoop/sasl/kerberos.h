#pragma once
// The client's Kerberos identity, through MIT Kerberos: from the ticket cache that kinit filled
// (KRB5CCNAME, else the default cache), or from a keytab. A keytab login asks the KDC for a ticket
// at once, into a cache of this process's own memory, so a wrong keytab, an unknown principal or
// a KDC that is down is said before anything else is tried.
//
// GSSAPI (Hadoop RPC's KERBEROS method) and SPNEGO (WebHDFS) both initiate from the credential
// this holds; the service tickets they obtain are cached with it.
//
// Errors: kUnauthenticated for "no usable ticket" (none, expired, a keytab the KDC refuses),
// kUnavailable for a KDC that cannot be reached, kInvalidArgument for a keytab or principal that
// cannot be read; each message says what to do (kinit, or tony.kerberos.principal and
// tony.kerberos.keytab).
//
// Threads: an acquired KerberosCredentials is read-only and may be shared by threads (MIT's GSSAPI
// credentials are safe to use concurrently).

#include <gssapi/gssapi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tony::hadoop {

// How to log in. Both empty: the ticket cache.
struct KerberosLogin {
  // With a keytab: the principal whose key it holds ("alice@EXAMPLE.COM"); empty takes the first
  // principal in the keytab. Without one: must be empty or match the ticket cache's.
  std::string principal;
  std::string keytab;
};

class KerberosCredentials {
 public:
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<KerberosCredentials>> Acquire(
      const KerberosLogin& login);
  ~KerberosCredentials();
  KerberosCredentials(const KerberosCredentials&) = delete;
  KerberosCredentials& operator=(const KerberosCredentials&) = delete;

  gss_cred_id_t handle() const { return cred_; }
  // "alice@EXAMPLE.COM".
  const std::string& principal() const { return principal_; }
  // The principal's first component ("alice" of "alice/admin@EXAMPLE.COM"): Hadoop's short name
  // under the default auth_to_local rule.
  std::string ShortName() const;
  // Seconds the ticket-granting ticket is still valid for, when acquired.
  int64_t lifetime_s() const { return lifetime_s_; }
  // Where it came from, for messages: "the ticket cache FILE:/tmp/krb5cc_1000" or "keytab
  // /path (tony.kerberos.keytab)".
  const std::string& source() const { return source_; }

 private:
  KerberosCredentials() = default;

  gss_cred_id_t cred_ = GSS_C_NO_CREDENTIAL;
  std::string principal_;
  int64_t lifetime_s_ = 0;
  std::string source_;
  std::string memory_cache_;  // MEMORY:... of a keytab login, destroyed with this
};

// The value of an HTTP "Authorization: Negotiate <value>" header (SPNEGO, RFC 4559) for a server
// on `host`: a Kerberos ticket to HTTP/<canonical host>, as Hadoop's web endpoints (WebHDFS)
// expect. One round: tony does not ask the server to authenticate itself over plain HTTP.
[[nodiscard]] absl::StatusOr<std::string> SpnegoToken(const KerberosCredentials& credentials,
                                                      std::string_view host);

// The name Hadoop substitutes for _HOST when it talks to `host`: the reverse lookup of its first
// address ("127.0.0.1" -> "localhost"), lower case; `host` itself when that fails.
std::string CanonicalHostName(std::string_view host);

// major/minor GSSAPI status codes as text ("No Kerberos credentials available (default cache:
// FILE:/tmp/krb5cc_1000)").
std::string GssStatusText(OM_uint32 major, OM_uint32 minor);

// A Hadoop principal pattern with _HOST replaced by `host` in lower case
// ("rm/_HOST@EXAMPLE.COM" on "RM1.example.com" -> "rm/rm1.example.com@EXAMPLE.COM").
std::string SubstituteHost(std::string_view principal, std::string_view host);

// "service/host@REALM" split; realm empty when absent, host empty for a one-component principal.
struct PrincipalParts {
  std::string service;
  std::string host;
  std::string realm;
};
PrincipalParts SplitPrincipal(std::string_view principal);

}  // namespace tony::hadoop
