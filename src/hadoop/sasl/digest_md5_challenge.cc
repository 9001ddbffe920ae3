#include "hadoop/sasl/digest_md5_challenge.h"

#include <cstdint>

#include "absl/status/status.h"
#include "common/strings.h"

namespace tony::hadoop {
namespace {

absl::Status Malformed(std::string_view what) {
  return absl::InvalidArgumentError(StrCat("DIGEST-MD5: malformed server message: ", what));
}

bool IsLinearWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// RFC 2616 token characters: CHARs other than controls and separators.
bool IsTokenChar(char c) {
  auto u = static_cast<uint8_t>(c);
  if (u <= 31 || u >= 127) return false;
  return std::string_view("()<>@,;:\\\"/[]?={} ").find(c) == std::string_view::npos;
}

// Reads a token or a quoted-string at text[*pos]; advances *pos past it.
absl::StatusOr<std::string> ReadValue(std::string_view text, size_t* pos, std::string_view name) {
  size_t i = *pos;
  std::string value;
  if (i < text.size() && text[i] == '"') {
    ++i;
    for (;; ++i) {
      if (i >= text.size()) return Malformed(StrCat("unterminated quoted value of '", name, "'"));
      char c = text[i];
      if (c == '"') break;
      if (c == '\\') {
        if (++i >= text.size()) {
          return Malformed(StrCat("unterminated quoted value of '", name, "'"));
        }
        c = text[i];
      }
      auto u = static_cast<uint8_t>(c);
      if ((u < 32 && !IsLinearWhitespace(c)) || u == 127) {
        return Malformed(StrCat("control character in the value of '", name, "'"));
      }
      value.push_back(c);
    }
    *pos = i + 1;
    return value;
  }
  while (i < text.size() && IsTokenChar(text[i])) value.push_back(text[i++]);
  if (value.empty()) return Malformed(StrCat("directive '", name, "' has no value"));
  *pos = i;
  return value;
}

// The comma-separated tokens of a qop-options or cipher-opts value, lower case.
std::vector<std::string> ListTokens(std::string_view value) {
  std::vector<std::string> out;
  for (std::string_view part : Split(value, ',')) {
    part = StripWhitespace(part);
    if (!part.empty()) out.push_back(ToLower(part));
  }
  return out;
}

bool IsLowerHex(std::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<DigestMd5Directive>> ParseDigestMd5Directives(std::string_view text) {
  if (text.size() >= kMaxDigestMd5ChallengeSize) {
    return Malformed(StrCat(text.size(), " bytes, over the limit of ", kMaxDigestMd5ChallengeSize));
  }
  std::vector<DigestMd5Directive> out;
  size_t i = 0;
  auto skip_whitespace = [&] {
    while (i < text.size() && IsLinearWhitespace(text[i])) ++i;
  };
  while (true) {
    skip_whitespace();
    while (i < text.size() && text[i] == ',') {
      ++i;
      skip_whitespace();
    }
    if (i >= text.size()) break;
    size_t start = i;
    while (i < text.size() && IsTokenChar(text[i])) ++i;
    if (i == start) return Malformed(StrCat("unexpected character at offset ", i));
    std::string name = ToLower(text.substr(start, i - start));
    skip_whitespace();
    if (i >= text.size() || text[i] != '=') {
      return Malformed(StrCat("directive '", name, "' has no '='"));
    }
    ++i;
    skip_whitespace();
    absl::StatusOr<std::string> value = ReadValue(text, &i, name);
    if (!value.ok()) return value.status();
    out.push_back({std::move(name), *std::move(value)});
    skip_whitespace();
    if (i < text.size() && text[i] != ',') {
      return Malformed(StrCat("expected ',' after directive '", out.back().name, "'"));
    }
  }
  return out;
}

absl::StatusOr<DigestMd5Challenge> ParseDigestMd5Challenge(std::string_view text) {
  absl::StatusOr<std::vector<DigestMd5Directive>> directives = ParseDigestMd5Directives(text);
  if (!directives.ok()) return directives.status();
  DigestMd5Challenge challenge;
  bool seen_nonce = false, seen_qop = false, seen_maxbuf = false, seen_charset = false;
  bool seen_algorithm = false, seen_cipher = false, seen_stale = false;
  auto once = [](bool* seen, std::string_view name) -> absl::Status {
    if (*seen) return Malformed(StrCat("directive '", name, "' appears more than once"));
    *seen = true;
    return absl::OkStatus();
  };
  for (DigestMd5Directive& d : *directives) {
    absl::Status status;
    if (d.name == "realm") {
      challenge.realms.push_back(std::move(d.value));
    } else if (d.name == "nonce") {
      status = once(&seen_nonce, d.name);
      challenge.nonce = std::move(d.value);
    } else if (d.name == "qop") {
      status = once(&seen_qop, d.name);
      challenge.qops = ListTokens(d.value);
    } else if (d.name == "cipher") {
      status = once(&seen_cipher, d.name);
      challenge.ciphers = ListTokens(d.value);
    } else if (d.name == "maxbuf") {
      status = once(&seen_maxbuf, d.name);
      // RFC 2831 2.3: the receive buffer must be larger than 16 and smaller than 16 MiB.
      if (status.ok() && (!ParseDecimal(d.value, &challenge.maxbuf) || challenge.maxbuf <= 16 ||
                          challenge.maxbuf >= 16777216)) {
        status = Malformed(StrCat("maxbuf '", d.value, "' is not a number in 17..16777215"));
      }
    } else if (d.name == "charset") {
      status = once(&seen_charset, d.name);
      if (status.ok() && ToLower(d.value) != "utf-8") {
        status = Malformed(StrCat("charset '", d.value, "' (only utf-8 is defined)"));
      }
      challenge.utf8 = true;
    } else if (d.name == "algorithm") {
      status = once(&seen_algorithm, d.name);
      if (status.ok() && ToLower(d.value) != "md5-sess") {
        status = Malformed(StrCat("algorithm '", d.value, "' (DIGEST-MD5 requires md5-sess)"));
      }
    } else if (d.name == "stale") {
      status = once(&seen_stale, d.name);
    }
    if (!status.ok()) return status;
  }
  if (!seen_nonce || challenge.nonce.empty()) return Malformed("the challenge has no nonce");
  if (!seen_algorithm) return Malformed("the challenge has no algorithm=md5-sess");
  if (!seen_qop) challenge.qops.emplace_back("auth");
  if (challenge.qops.empty()) return Malformed("the qop directive names no protection");
  return challenge;
}

absl::StatusOr<std::string> ParseDigestMd5ResponseAuth(std::string_view text) {
  absl::StatusOr<std::vector<DigestMd5Directive>> directives = ParseDigestMd5Directives(text);
  if (!directives.ok()) return directives.status();
  std::string rspauth;
  bool seen = false;
  for (DigestMd5Directive& d : *directives) {
    if (d.name != "rspauth") continue;
    if (seen) return Malformed("directive 'rspauth' appears more than once");
    seen = true;
    rspauth = ToLower(d.value);
  }
  if (!seen) return Malformed("the server's final message has no rspauth");
  if (rspauth.size() != 32 || !IsLowerHex(rspauth)) {
    return Malformed("rspauth is not 32 hex digits");
  }
  return rspauth;
}

}  // namespace tony::hadoop
