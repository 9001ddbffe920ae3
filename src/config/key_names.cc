#include "config/key_names.h"

#include "common/strings.h"

namespace tony::config {
namespace {

bool IsLowerOrDigit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsGroupChar(char c) {
  return IsLowerOrDigit(c) || (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
}

// The text between `prefix` and `suffix` when `key` is exactly prefix + something + suffix.
std::optional<std::string_view> Between(std::string_view key, std::string_view prefix,
                                        std::string_view suffix) {
  if (key.size() <= prefix.size() + suffix.size() || !key.starts_with(prefix) ||
      !key.ends_with(suffix)) {
    return std::nullopt;
  }
  return key.substr(prefix.size(), key.size() - prefix.size() - suffix.size());
}

}  // namespace

bool IsJobTypeName(std::string_view name) {
  if (name.empty() || name.front() < 'a' || name.front() > 'z') return false;
  for (char c : name) {
    if (!IsLowerOrDigit(c) && c != '_' && c != '-') return false;
  }
  return true;
}

bool IsGroupName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!IsGroupChar(c)) return false;
  }
  return true;
}

std::optional<std::string_view> JobTypeOfInstancesKey(std::string_view key) {
  std::optional<std::string_view> type = Between(key, "tony.", ".instances");
  if (!type || !IsJobTypeName(*type)) return std::nullopt;
  return type;
}

std::optional<std::string_view> GroupOfGroupKey(std::string_view key) {
  constexpr std::string_view kPrefix = "tony.application.group.";
  if (!key.starts_with(kPrefix) || !IsGroupName(key.substr(kPrefix.size()))) return std::nullopt;
  return key.substr(kPrefix.size());
}

std::optional<DependencyKey> ParseDependencyKey(std::string_view key) {
  constexpr std::string_view kPrefix = "tony.application.dependency.";
  constexpr std::string_view kMiddle = ".timeout.after.";
  if (!key.starts_with(kPrefix)) return std::nullopt;
  std::string_view rest = key.substr(kPrefix.size());
  // A type holds no '.', so the first '.' ends it.
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  DependencyKey parts{rest.substr(0, dot), {}};
  rest.remove_prefix(dot);
  if (!rest.starts_with(kMiddle)) return std::nullopt;
  parts.group = rest.substr(kMiddle.size());
  if (!IsJobTypeName(parts.type) || !IsGroupName(parts.group)) return std::nullopt;
  return parts;
}

bool IsKnownFamilyKey(std::string_view key) {
  if (GroupOfGroupKey(key) || ParseDependencyKey(key)) return true;
  constexpr std::string_view kIgnored = ".ignored";
  if (key.ends_with(kIgnored) && ParseDependencyKey(key.substr(0, key.size() - kIgnored.size()))) {
    return true;
  }
  std::optional<std::string_view> type = Between(key, "tony.docker.", ".image");
  return type && IsJobTypeName(*type);
}

std::string ForMessage(std::string_view text, size_t max_length) {
  const size_t full_length = text.size();
  const bool cut = full_length > max_length;
  if (cut) text = text.substr(0, max_length);
  std::string out;
  out.reserve(text.size() + 32);
  constexpr char kHex[] = "0123456789abcdef";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  if (cut) out += StrCat("... (", full_length, " bytes)");
  return out;
}

}  // namespace tony::config
