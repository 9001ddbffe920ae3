#pragma once
// The server's side of DIGEST-MD5 (RFC 2831) as the client reads it: the digest-challenge of
// section 2.1.1 and the response-auth of section 2.1.3.
//
// Both are lists of `name=value` directives, the value a token or a quoted-string (backslash
// escapes the next character). Parsing is bounded (kMaxDigestMd5ChallengeSize, the RFC's limit)
// and strict where the RFC is: a directive that may appear once and appears twice is refused, as
// are a missing nonce or algorithm, an algorithm other than md5-sess, a charset other than utf-8
// and a maxbuf out of range. Unknown directives, and unknown entries in the qop and cipher lists,
// are ignored as the RFC asks.
//
// Errors are InvalidArgument and start with "DIGEST-MD5: ".

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tony::hadoop {

// RFC 2831: "The size of a digest-challenge MUST be less than 2048 bytes."
inline constexpr size_t kMaxDigestMd5ChallengeSize = 2048;
// maxbuf when the server names none (RFC 2831 2.1.1).
inline constexpr size_t kDefaultDigestMd5MaxBuf = 65536;

struct DigestMd5Directive {
  std::string name;   // lower case
  std::string value;  // unquoted, escapes resolved
};

// Splits a directive list. Empty list elements (",,") are allowed, as RFC 2616's #rule allows.
[[nodiscard]] absl::StatusOr<std::vector<DigestMd5Directive>> ParseDigestMd5Directives(
    std::string_view text);

struct DigestMd5Challenge {
  std::vector<std::string> realms;          // in the server's order; may be empty
  std::string nonce;                        // never empty
  std::vector<std::string> qops;            // lower case, as offered, unknown ones included
  std::vector<std::string> ciphers;         // lower case, as offered, unknown ones included
  size_t maxbuf = kDefaultDigestMd5MaxBuf;  // the largest token the server accepts
  bool utf8 = false;                        // charset=utf-8 was given
};

// An absent qop directive means "auth" (the RFC's default).
[[nodiscard]] absl::StatusOr<DigestMd5Challenge> ParseDigestMd5Challenge(std::string_view text);

// The value of rspauth in the server's response-auth: 32 lower-case hex digits.
[[nodiscard]] absl::StatusOr<std::string> ParseDigestMd5ResponseAuth(std::string_view text);

}  // namespace tony::hadoop
