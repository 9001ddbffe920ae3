#include "hadoop/hdfs/kms.h"

#include <cctype>
#include <charconv>

#include "common/strings.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/ipc/failover.h"

namespace tony::hadoop {
namespace {

constexpr std::string_view kScheme = "kms://";

// A host name or address as a KMS provider URI may carry one (no user, no brackets).
bool PlausibleHost(std::string_view host) {
  if (host.empty()) return false;
  for (char c : host) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) {
      return false;
    }
  }
  return true;
}

// Percent-encodes a query value (renewer names are plain, but a principal's may not be).
std::string QueryValue(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : value) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    }
  }
  return out;
}

}  // namespace

std::string KmsMapAlias(std::string_view fs_uri) {
  const size_t scheme_end = fs_uri.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) return "";
  const std::string_view rest = fs_uri.substr(scheme_end + 3);
  const std::string_view authority = rest.substr(0, rest.find('/'));
  if (authority.empty()) return "";
  return StrCat("dfs-kms-", fs_uri.substr(0, scheme_end), "://", authority);
}

std::string KmsProvider::RestUrl(size_t host) const {
  return StrCat(https ? "https://" : "http://", hosts.at(host), ":", port, path, "/v1");
}

absl::StatusOr<KmsProvider> ParseKmsProvider(std::string_view uri) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        StrCat("KMS provider ", uri, ": ", why, " (expected kms://http@HOST[;HOST...]:PORT/PATH)"));
  };
  if (!uri.starts_with(kScheme)) return bad("not a kms:// URI");
  std::string_view rest = uri.substr(kScheme.size());
  const size_t at = rest.find('@');
  if (at == std::string_view::npos) return bad("no http@ or https@");
  KmsProvider kms;
  kms.uri = std::string(uri);
  const std::string_view protocol = rest.substr(0, at);
  if (protocol == "https") {
    kms.https = true;
  } else if (protocol != "http") {
    return bad(StrCat("unknown protocol '", protocol, "'"));
  }
  rest = rest.substr(at + 1);
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  kms.path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  while (kms.path.size() > 1 && kms.path.back() == '/') kms.path.pop_back();
  if (kms.path == "/") kms.path.clear();
  size_t colon = authority.rfind(':');
  if (colon == std::string_view::npos) {
    // As Hadoop's client: the protocol's own port.
    kms.port = kms.https ? 443 : 80;
    colon = authority.size();
  } else {
    const std::string_view port = authority.substr(colon + 1);
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), kms.port);
    if (ec != std::errc() || end != port.data() + port.size() || kms.port <= 0 ||
        kms.port > 65535) {
      return bad(StrCat("bad port '", port, "'"));
    }
  }
  for (std::string_view host : Split(authority.substr(0, colon), ';')) {
    if (!PlausibleHost(host)) return bad(StrCat("bad host '", host, "'"));
    kms.hosts.emplace_back(host);
  }
  if (kms.path.empty()) return bad("no path (Hadoop's KMS serves /kms)");
  return kms;
}

absl::StatusOr<std::vector<KmsProvider>> KmsProviders(const HadoopConf& conf) {
  std::string key = "hadoop.security.key.provider.path";
  std::string value = conf.Get(key);
  if (StripWhitespace(value).empty()) {
    key = "dfs.encryption.key.provider.uri";
    value = conf.Get(key);
  }
  std::vector<KmsProvider> providers;
  for (std::string_view entry : Split(value, ',')) {
    entry = StripWhitespace(entry);
    if (!entry.starts_with(kScheme)) continue;  // empty, or a key store of another kind
    absl::StatusOr<KmsProvider> kms = ParseKmsProvider(entry);
    if (!kms.ok())
      return absl::InvalidArgumentError(StrCat(key, ": ", ToStd(kms.status().message())));
    providers.push_back(*std::move(kms));
  }
  return providers;
}

namespace {

// One delegation-token operation (?op=...) at the first host of `kms` that answers: its 200
// answer's body.
absl::StatusOr<std::string> TokenCall(const KmsProvider& kms, const KerberosCredentials& login,
                                      http::Request::Method method, const std::string& op,
                                      const std::string& query, const http::Tls* tls,
                                      int timeout_ms) {
  absl::Status last = absl::UnavailableError(StrCat("KMS ", op, " ", kms.uri, ": no host"));
  // Whether every host failed the way a server that is down or overloaded does (no answer, or a
  // 5xx), rather than by refusing the caller.
  bool all_unavailable = true;
  for (size_t i = 0; i < kms.hosts.size(); ++i) {
    absl::StatusOr<std::string> spnego = SpnegoToken(login, kms.hosts[i]);
    if (!spnego.ok()) {
      // No ticket for this host (its HTTP/ principal unknown to the KDC): another may do.
      last =
          absl::Status(spnego.status().code(), StrCat("KMS ", op, " ", kms.uri, " (", kms.hosts[i],
                                                      "): ", ToStd(spnego.status().message())));
      all_unavailable = false;
      continue;
    }
    http::Request request;
    request.method = method;
    request.url = StrCat(kms.RestUrl(i), "/?op=", op, query);
    request.authorization = StrCat("Authorization: Negotiate ", *spnego);
    request.tls = tls;
    request.https_only = kms.https;
    request.service = "KMS";
    absl::StatusOr<http::Response> response = http::Perform(request, timeout_ms, op, kms.uri);
    if (!response.ok()) {
      // Another host of the same KMS may answer; a TLS or configuration error would not.
      if (!absl::IsUnavailable(response.status()) && !absl::IsDeadlineExceeded(response.status())) {
        return response.status();
      }
      last = response.status();
      continue;
    }
    if (response->status != 200) {
      last = webhdfs_internal::HttpErrorStatus(op, StrCat(kms.uri, " (", kms.hosts[i], ")"),
                                               response->status, response->body, "KMS");
      // A server error may be this host's alone, as with Hadoop's load-balancing client; a
      // refusal (401, 403) or a bad request would be every host's.
      if (response->status < 500) return last;
      continue;
    }
    return std::move(response->body);
  }
  if (!all_unavailable) return last;
  // No host served, so nothing happened anywhere (and no job can have started).
  if (kms.hosts.size() == 1) return NoActiveServerError(ToStd(last.message()));
  return NoActiveServerError(StrCat("KMS ", op, " ", kms.uri, ": none of its ", kms.hosts.size(),
                                    " hosts served; the last: ", ToStd(last.message())));
}

}  // namespace

absl::StatusOr<Token> GetKmsDelegationToken(const KmsProvider& kms,
                                            const KerberosCredentials& login,
                                            const std::string& renewer, const http::Tls* tls,
                                            int timeout_ms) {
  absl::StatusOr<std::string> body =
      TokenCall(kms, login, http::Request::Method::kGet, "GETDELEGATIONTOKEN",
                StrCat("&renewer=", QueryValue(renewer)), tls, timeout_ms);
  if (!body.ok()) return body.status();
  absl::StatusOr<Token> token = webhdfs_internal::ParseDelegationToken(*body);
  if (!token.ok()) {
    return absl::InternalError(StrCat("KMS GETDELEGATIONTOKEN ", kms.uri,
                                      ": malformed answer: ", ToStd(token.status().message())));
  }
  // Hadoop's KMS client looks the token up by the provider URI (its alias and service).
  token->service = kms.uri;
  return token;
}

absl::StatusOr<int64_t> RenewKmsDelegationToken(const KmsProvider& kms,
                                                const KerberosCredentials& login,
                                                const Token& token, const http::Tls* tls,
                                                int timeout_ms) {
  absl::StatusOr<std::string> body =
      TokenCall(kms, login, http::Request::Method::kPut, "RENEWDELEGATIONTOKEN",
                StrCat("&token=", EncodeTokenUrlString(token)), tls, timeout_ms);
  if (!body.ok()) return body.status();
  absl::StatusOr<int64_t> expiry = webhdfs_internal::ParseLong(*body);
  if (!expiry.ok()) {
    return absl::InternalError(StrCat("KMS RENEWDELEGATIONTOKEN ", kms.uri,
                                      ": malformed answer: ", ToStd(expiry.status().message())));
  }
  return expiry;
}

}  // namespace tony::hadoop
