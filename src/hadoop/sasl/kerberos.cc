#include "hadoop/sasl/kerberos.h"

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>
#include <netdb.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "common/strings.h"

namespace tony::hadoop {
namespace {

// SPNEGO's mechanism OID, 1.3.6.1.5.5.2 (MIT exports no constant for it).
gss_OID_desc kSpnego = {6, const_cast<char*>("\x2b\x06\x01\x05\x05\x02")};

constexpr char kHowToLogIn[] =
    "run kinit, or set tony.kerberos.principal and tony.kerberos.keytab to log in from a keytab";

// An MIT krb5 context with its error messages, released at scope end.
class Krb5 {
 public:
  Krb5() { init_error_ = krb5_init_context(&context_); }
  ~Krb5() {
    if (context_ != nullptr) krb5_free_context(context_);
  }
  Krb5(const Krb5&) = delete;
  Krb5& operator=(const Krb5&) = delete;

  krb5_context get() const { return context_; }
  krb5_error_code init_error() const { return init_error_; }
  std::string Message(krb5_error_code code) const {
    if (context_ == nullptr) return StrCat("Kerberos error ", code);
    const char* text = krb5_get_error_message(context_, code);
    std::string message = text != nullptr ? text : StrCat("Kerberos error ", code);
    krb5_free_error_message(context_, text);
    return message;
  }

 private:
  krb5_context context_ = nullptr;
  krb5_error_code init_error_ = 0;
};

std::string RandomHex(int bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), bytes) != 1) {
    for (char& c : raw) c = static_cast<char>(std::rand());
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (char c : raw) {
    hex.push_back(kHex[(static_cast<uint8_t>(c) >> 4) & 15]);
    hex.push_back(kHex[static_cast<uint8_t>(c) & 15]);
  }
  return hex;
}

// What a failed initial-ticket request from a keytab means to a user.
absl::Status KeytabLoginError(const Krb5& krb5, krb5_error_code code, const std::string& principal,
                              const std::string& keytab) {
  std::string what = StrCat("Kerberos login of ", principal, " from keytab ", keytab,
                            " (tony.kerberos.keytab): ", krb5.Message(code));
  switch (code) {
    case KRB5_KDC_UNREACH:
    case KRB5_REALM_CANT_RESOLVE:
    case KRB5_KDCREP_SKEW:
      return absl::UnavailableError(StrCat(what,
                                           "; is the KDC of the realm running and reachable "
                                           "(krb5.conf, KRB5_CONFIG)?"));
    case KRB5_KT_NOTFOUND:
    case KRB5KDC_ERR_PREAUTH_FAILED:
    case KRB5KRB_AP_ERR_BAD_INTEGRITY:
    case KRB5_PREAUTH_FAILED:
      return absl::UnauthenticatedError(
          StrCat(what,
                 "; the keytab holds no valid key for this principal (an old keytab, or "
                 "another principal's: check tony.kerberos.principal, and klist -k)"));
    case KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN:
      return absl::UnauthenticatedError(
          StrCat(what, "; the KDC does not know this principal (tony.kerberos.principal)"));
    default:
      return absl::UnauthenticatedError(what);
  }
}

// Logs in from the keytab into a new MEMORY: cache; returns the cache's name and the principal.
absl::Status LoginFromKeytab(const KerberosLogin& login, std::string* cache_name,
                             std::string* principal_name) {
  struct stat st {};
  if (stat(login.keytab.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        StrCat("cannot read the keytab ", login.keytab,
               " (tony.kerberos.keytab): ", errno != 0 ? std::strerror(errno) : "not a file"));
  }
  Krb5 krb5;
  if (krb5.init_error() != 0) {
    return absl::InternalError(
        StrCat("cannot initialize Kerberos: ", krb5.Message(krb5.init_error())));
  }
  krb5_context ctx = krb5.get();
  krb5_keytab keytab = nullptr;
  std::string keytab_name = StrCat("FILE:", login.keytab);
  if (krb5_error_code code = krb5_kt_resolve(ctx, keytab_name.c_str(), &keytab); code != 0) {
    return absl::InvalidArgumentError(StrCat("cannot open the keytab ", login.keytab,
                                             " (tony.kerberos.keytab): ", krb5.Message(code)));
  }
  krb5_principal principal = nullptr;
  krb5_ccache cache = nullptr;
  krb5_get_init_creds_opt* options = nullptr;
  krb5_creds creds;
  std::memset(&creds, 0, sizeof(creds));
  bool have_creds = false;
  absl::Status status = absl::OkStatus();
  do {
    if (!login.principal.empty()) {
      if (krb5_error_code code = krb5_parse_name(ctx, login.principal.c_str(), &principal);
          code != 0) {
        status =
            absl::InvalidArgumentError(StrCat("bad Kerberos principal '", login.principal,
                                              "' (tony.kerberos.principal): ", krb5.Message(code)));
        break;
      }
    } else {
      krb5_kt_cursor cursor;
      krb5_keytab_entry entry;
      krb5_error_code code = krb5_kt_start_seq_get(ctx, keytab, &cursor);
      if (code == 0) {
        code = krb5_kt_next_entry(ctx, keytab, &entry, &cursor);
        if (code == 0) {
          code = krb5_copy_principal(ctx, entry.principal, &principal);
          krb5_free_keytab_entry_contents(ctx, &entry);
        }
        krb5_kt_end_seq_get(ctx, keytab, &cursor);
      }
      if (code != 0) {
        status = absl::InvalidArgumentError(
            StrCat("the keytab ", login.keytab, " (tony.kerberos.keytab) names no principal: ",
                   code == KRB5_KT_END ? std::string("it is empty") : krb5.Message(code)));
        break;
      }
    }
    char* unparsed = nullptr;
    if (krb5_unparse_name(ctx, principal, &unparsed) == 0) {
      *principal_name = unparsed;
      krb5_free_unparsed_name(ctx, unparsed);
    }
    if (krb5_error_code code = krb5_get_init_creds_opt_alloc(ctx, &options); code != 0) {
      status = absl::InternalError(krb5.Message(code));
      break;
    }
    if (krb5_error_code code =
            krb5_get_init_creds_keytab(ctx, &creds, principal, keytab, 0, nullptr, options);
        code != 0) {
      status = KeytabLoginError(krb5, code, *principal_name, login.keytab);
      break;
    }
    have_creds = true;
    *cache_name = StrCat("MEMORY:tony-", RandomHex(12));
    krb5_error_code code = krb5_cc_resolve(ctx, cache_name->c_str(), &cache);
    if (code == 0) code = krb5_cc_initialize(ctx, cache, principal);
    if (code == 0) code = krb5_cc_store_cred(ctx, cache, &creds);
    if (code != 0) {
      status = absl::InternalError(
          StrCat("cannot keep the Kerberos ticket in memory: ", krb5.Message(code)));
      if (cache != nullptr) {
        krb5_cc_destroy(ctx, cache);
        cache = nullptr;
      }
    }
  } while (false);
  if (have_creds) krb5_free_cred_contents(ctx, &creds);
  if (options != nullptr) krb5_get_init_creds_opt_free(ctx, options);
  if (cache != nullptr) krb5_cc_close(ctx, cache);  // closes the handle; the cache stays
  if (principal != nullptr) krb5_free_principal(ctx, principal);
  krb5_kt_close(ctx, keytab);
  return status;
}

std::string DefaultCacheName() {
  Krb5 krb5;
  if (krb5.init_error() != 0) return "the default ticket cache";
  const char* name = krb5_cc_default_name(krb5.get());
  return name != nullptr ? StrCat("the ticket cache ", name) : "the default ticket cache";
}

}  // namespace

std::string GssStatusText(OM_uint32 major, OM_uint32 minor) {
  std::vector<std::string> parts;
  auto collect = [&](OM_uint32 code, int type) {
    OM_uint32 context = 0;
    do {
      OM_uint32 ignored = 0;
      gss_buffer_desc text = GSS_C_EMPTY_BUFFER;
      if (gss_display_status(&ignored, code, type, GSS_C_NO_OID, &context, &text) !=
          GSS_S_COMPLETE) {
        break;
      }
      std::string line(static_cast<const char*>(text.value), text.length);
      gss_release_buffer(&ignored, &text);
      while (!line.empty() && (line.back() == '\0' || line.back() == '\n')) line.pop_back();
      if (!line.empty() &&
          line != "Unspecified GSS failure.  Minor code may provide more information") {
        parts.push_back(std::move(line));
      }
    } while (context != 0);
  };
  collect(major, GSS_C_GSS_CODE);
  if (minor != 0) collect(minor, GSS_C_MECH_CODE);
  if (parts.empty()) return StrCat("GSSAPI error ", major, "/", minor);
  return Join(parts, ": ");
}

std::string CanonicalHostName(std::string_view host) {
  std::string name(host);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    return ToLower(name);
  }
  char canonical[NI_MAXHOST] = {0};
  int rc = getnameinfo(found->ai_addr, found->ai_addrlen, canonical, sizeof(canonical), nullptr, 0,
                       NI_NAMEREQD);
  freeaddrinfo(found);
  return ToLower(rc == 0 ? std::string(canonical) : name);
}

absl::StatusOr<std::string> SpnegoToken(const KerberosCredentials& credentials,
                                        std::string_view host) {
  std::string service = StrCat("HTTP@", CanonicalHostName(host));
  gss_buffer_desc name_buffer = {service.size(), service.data()};
  gss_name_t target = GSS_C_NO_NAME;
  OM_uint32 minor = 0;
  OM_uint32 major = gss_import_name(&minor, &name_buffer, GSS_C_NT_HOSTBASED_SERVICE, &target);
  if (GSS_ERROR(major)) {
    return absl::InvalidArgumentError(
        StrCat("SPNEGO: bad service name ", service, ": ", GssStatusText(major, minor)));
  }
  gss_ctx_id_t context = GSS_C_NO_CONTEXT;
  gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
  major = gss_init_sec_context(&minor, credentials.handle(), &context, target, &kSpnego, 0, 0,
                               GSS_C_NO_CHANNEL_BINDINGS, GSS_C_NO_BUFFER, nullptr, &output,
                               nullptr, nullptr);
  OM_uint32 ignored = 0;
  gss_release_name(&ignored, &target);
  if (context != GSS_C_NO_CONTEXT) gss_delete_sec_context(&ignored, &context, GSS_C_NO_BUFFER);
  if (GSS_ERROR(major)) {
    gss_release_buffer(&ignored, &output);
    return absl::UnauthenticatedError(StrCat("SPNEGO: Kerberos authentication of ",
                                             credentials.principal(), " to ", service,
                                             " failed: ", GssStatusText(major, minor)));
  }
  std::string encoded(4 * ((output.length + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()),
                          static_cast<const unsigned char*>(output.value),
                          static_cast<int>(output.length));
  gss_release_buffer(&ignored, &output);
  encoded.resize(n > 0 ? n : 0);
  return encoded;
}

std::string SubstituteHost(std::string_view principal, std::string_view host) {
  std::string text(principal);
  size_t at = text.find("_HOST");
  if (at == std::string::npos) return text;
  return StrCat(text.substr(0, at), ToLower(std::string(host)), text.substr(at + 5));
}

PrincipalParts SplitPrincipal(std::string_view principal) {
  PrincipalParts parts;
  std::string_view name = principal;
  if (size_t at = name.rfind('@'); at != std::string_view::npos) {
    parts.realm = std::string(name.substr(at + 1));
    name = name.substr(0, at);
  }
  if (size_t slash = name.find('/'); slash != std::string_view::npos) {
    parts.service = std::string(name.substr(0, slash));
    parts.host = std::string(name.substr(slash + 1));
  } else {
    parts.service = std::string(name);
  }
  return parts;
}

absl::StatusOr<std::shared_ptr<KerberosCredentials>> KerberosCredentials::Acquire(
    const KerberosLogin& login) {
  std::shared_ptr<KerberosCredentials> result(new KerberosCredentials());
  OM_uint32 minor = 0;
  // Kerberos itself (Hadoop RPC's GSSAPI) and SPNEGO over it (HTTP's Negotiate).
  gss_OID_desc mech_list[] = {*gss_mech_krb5, kSpnego};
  gss_OID_set_desc mechs = {2, mech_list};
  OM_uint32 major = 0;
  if (!login.keytab.empty()) {
    std::string principal;
    if (absl::Status s = LoginFromKeytab(login, &result->memory_cache_, &principal); !s.ok()) {
      return s;
    }
    result->source_ = StrCat("keytab ", login.keytab, " (tony.kerberos.keytab)");
    gss_buffer_desc name_buffer = {principal.size(), principal.data()};
    gss_name_t name = GSS_C_NO_NAME;
    major = gss_import_name(&minor, &name_buffer, GSS_KRB5_NT_PRINCIPAL_NAME, &name);
    if (GSS_ERROR(major)) {
      return absl::InternalError(
          StrCat("Kerberos principal ", principal, ": ", GssStatusText(major, minor)));
    }
    // The keytab stays in the store: MIT renews the ticket from it when it runs out.
    std::string keytab = StrCat("FILE:", login.keytab);
    gss_key_value_element_desc elements[] = {{"ccache", result->memory_cache_.c_str()},
                                             {"client_keytab", keytab.c_str()}};
    gss_key_value_set_desc store = {2, elements};
    major = gss_acquire_cred_from(&minor, name, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE, &store,
                                  &result->cred_, nullptr, nullptr);
    OM_uint32 ignored = 0;
    gss_release_name(&ignored, &name);
    if (GSS_ERROR(major)) {
      return absl::UnauthenticatedError(StrCat("Kerberos login of ", principal, " from ",
                                               result->source_, ": ", GssStatusText(major, minor)));
    }
  } else {
    result->source_ = DefaultCacheName();
    major = gss_acquire_cred(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE,
                             &result->cred_, nullptr, nullptr);
    if (GSS_ERROR(major)) {
      return absl::UnauthenticatedError(StrCat("no Kerberos ticket in ", result->source_, " (",
                                               GssStatusText(major, minor), "): ", kHowToLogIn));
    }
  }
  gss_name_t name = GSS_C_NO_NAME;
  OM_uint32 lifetime = 0;
  major = gss_inquire_cred(&minor, result->cred_, &name, &lifetime, nullptr, nullptr);
  if (major == GSS_S_CREDENTIALS_EXPIRED || (!GSS_ERROR(major) && lifetime == 0)) {
    if (name != GSS_C_NO_NAME) {
      OM_uint32 ignored = 0;
      gss_release_name(&ignored, &name);
    }
    return absl::UnauthenticatedError(
        StrCat("the Kerberos ticket in ", result->source_, " has expired: ", kHowToLogIn));
  }
  if (GSS_ERROR(major)) {
    return absl::UnauthenticatedError(StrCat("no usable Kerberos ticket in ", result->source_, " (",
                                             GssStatusText(major, minor), "): ", kHowToLogIn));
  }
  gss_buffer_desc display = GSS_C_EMPTY_BUFFER;
  OM_uint32 ignored = 0;
  if (!GSS_ERROR(gss_display_name(&minor, name, &display, nullptr))) {
    result->principal_.assign(static_cast<const char*>(display.value), display.length);
    gss_release_buffer(&ignored, &display);
  }
  gss_release_name(&ignored, &name);
  result->lifetime_s_ = lifetime == GSS_C_INDEFINITE ? INT64_MAX : lifetime;
  if (login.keytab.empty() && !login.principal.empty() && login.principal != result->principal_) {
    return absl::InvalidArgumentError(
        StrCat("tony.kerberos.principal is ", login.principal, " but ", result->source_,
               " holds a ticket of ", result->principal_,
               "; set tony.kerberos.keytab too, or kinit as ", login.principal));
  }
  return result;
}

KerberosCredentials::~KerberosCredentials() {
  OM_uint32 minor = 0;
  if (cred_ != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &cred_);
  if (!memory_cache_.empty()) {
    Krb5 krb5;
    krb5_ccache cache = nullptr;
    if (krb5.init_error() == 0 && krb5_cc_resolve(krb5.get(), memory_cache_.c_str(), &cache) == 0) {
      krb5_cc_destroy(krb5.get(), cache);
    }
  }
}

std::string KerberosCredentials::ShortName() const { return SplitPrincipal(principal_).service; }

}  // namespace tony::hadoop
