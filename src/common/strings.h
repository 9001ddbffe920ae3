#pragma once
// Small string helpers over std::string_view. Debian's abseil is built with its own
// absl::string_view, which does not convert from std::string_view, so tony uses abseil only for
// Status and builds strings with these.

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/strings/string_view.h"

namespace tony {

namespace strings_internal {
inline void Append(std::string& out, std::string_view piece) { out.append(piece); }
inline void Append(std::string& out, const char* piece) { out.append(piece ? piece : ""); }
inline void Append(std::string& out, const std::string& piece) { out.append(piece); }
inline void Append(std::string& out, absl::string_view piece) {
  out.append(piece.data(), piece.size());
}
inline void Append(std::string& out, char c) { out.push_back(c); }
template <typename T>
requires(std::is_arithmetic_v<T> && !std::is_same_v<T, char> &&
         !std::is_same_v<T, bool>) void Append(std::string& out, T value) {
  out.append(std::to_string(value));
}
inline void Append(std::string& out, bool value) { out.append(value ? "true" : "false"); }
}  // namespace strings_internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (strings_internal::Append(out, args), ...);
  return out;
}

inline std::string_view ToStd(absl::string_view s) { return {s.data(), s.size()}; }

std::vector<std::string_view> Split(std::string_view text, char separator);
std::string_view StripWhitespace(std::string_view text);
std::string ToLower(std::string_view text);
std::string ToUpper(std::string_view text);
bool Contains(std::string_view text, std::string_view needle);
std::string Join(const std::vector<std::string>& parts, std::string_view separator);
// The length of the well-formed UTF-8 sequence that starts at text[at] (1 to 4), or 0 when none
// starts there (a stray continuation byte, an invalid lead byte, a cut sequence).
size_t Utf8SequenceLength(std::string_view text, size_t at);
// Bytes as YARN writes memory in its diagnostics: "412.3 MB" (MiB, one decimal).
std::string FormatMb(int64_t bytes);

// value in decimal, left-padded with zeros to `width` digits (after a '-' if negative).
std::string ZeroPadded(int64_t value, size_t width);

// A non-negative decimal integer that is all of `text` (no sign, no spaces); false otherwise,
// including on overflow.
template <typename Int>
bool ParseDecimal(std::string_view text, Int* out) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace tony
