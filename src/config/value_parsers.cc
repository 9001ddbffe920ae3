#include "config/value_parsers.h"

#include <cctype>
#include <charconv>

#include "common/strings.h"
#include "config/key_names.h"

namespace tony::config {

absl::StatusOr<int64_t> ParseInt(std::string_view text) {
  std::string_view s = StripWhitespace(text);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return absl::InvalidArgumentError(
        StrCat("expected an integer, got \"", ForMessage(text), "\""));
  }
  return value;
}

absl::StatusOr<int64_t> ParseMemoryMb(std::string_view text) {
  std::string_view s = StripWhitespace(text);
  int64_t multiplier = 1;
  if (!s.empty()) {
    const char last = std::tolower(static_cast<unsigned char>(s.back()));
    if (last == 'g') {
      multiplier = 1024;
      s.remove_suffix(1);
    } else if (last == 'm') {
      s.remove_suffix(1);
    }
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  constexpr int64_t kMaxMb = int64_t{1} << 30;  // 1 PiB
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value <= 0 ||
      value > kMaxMb / multiplier) {
    return absl::InvalidArgumentError(StrCat(
        "expected a memory size such as 2g, 2048m or 2048 (MiB), got \"", ForMessage(text), "\""));
  }
  return value * multiplier;
}

absl::StatusOr<bool> ParseBool(std::string_view text) {
  std::string s = ToLower(StripWhitespace(text));
  if (s == "true") return true;
  if (s == "false") return false;
  return absl::InvalidArgumentError(
      StrCat("expected true or false, got \"", ForMessage(text), "\""));
}

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view item : Split(text, ',')) {
    item = StripWhitespace(item);
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

absl::StatusOr<std::map<std::string, std::string>> ParseEnvList(std::string_view text) {
  std::map<std::string, std::string> out;
  for (const std::string& item : SplitList(text)) {
    const size_t eq = item.find('=');
    std::string_view name = std::string_view(item).substr(0, eq);
    bool valid = eq != std::string::npos && !name.empty() &&
                 !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!valid) {
      return absl::InvalidArgumentError(
          StrCat("expected NAME=VALUE with a valid variable name, got \"", ForMessage(item), "\""));
    }
    out[std::string(name)] = item.substr(eq + 1);
  }
  return out;
}

}  // namespace tony::config
