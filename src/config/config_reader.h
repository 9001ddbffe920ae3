#pragma once
// Internal to config: typed reads of a Configuration whose failures are one line naming the key,
// the value and its source. A key the configuration lacks reads as the catalogue's default, so
// tony-default.xml is the only place a default is written.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/strings.h"
#include "config/configuration.h"
#include "config/key_catalog.h"
#include "config/key_names.h"
#include "config/value_parsers.h"

namespace tony::config {

// Reads typed values from a Configuration, turning every failure into one line that names the
// key, the value and where it came from.
class Reader {
 public:
  explicit Reader(const Configuration& conf) : conf_(conf) {}

  std::string String(std::string_view key) const {
    if (const ConfigEntry* entry = conf_.Find(key)) return entry->value;
    const KeyInfo* info = KeyCatalog::BuiltIn().Lookup(key);
    return info != nullptr && info->name == key ? info->default_value : "";
  }

  // The value of a per-job-type key, or the catalogue's default for its attribute.
  std::string JobTypeValue(const std::string& type, std::string_view attribute) const {
    const std::string key = StrCat("tony.", type, ".", attribute);
    if (const ConfigEntry* entry = conf_.Find(key)) return entry->value;
    const KeyInfo* info = KeyCatalog::BuiltIn().JobTypeAttribute(attribute);
    return info ? info->default_value : "";
  }

  absl::Status Error(std::string_view key, std::string_view detail) const {
    const ConfigEntry* entry = conf_.Find(key);
    if (entry == nullptr) {
      return absl::InvalidArgumentError(StrCat(ForMessage(key), " (default): ", detail));
    }
    return absl::InvalidArgumentError(StrCat(ForMessage(key), " = \"", ForMessage(entry->value),
                                             "\" (", entry->source.ToString(), "): ", detail));
  }

  absl::StatusOr<int64_t> Int(std::string_view key, const std::string& value, int64_t min) const {
    absl::StatusOr<int64_t> parsed = ParseInt(value);
    if (!parsed.ok()) return Error(key, ToStd(parsed.status().message()));
    if (*parsed < min) {
      return Error(key, min == 0   ? "expected a non-negative integer"
                        : min == 1 ? "expected a positive integer"
                                   : StrCat("expected an integer of at least ", min));
    }
    return *parsed;
  }
  absl::StatusOr<int64_t> Int(std::string_view key, int64_t min) const {
    return Int(key, String(key), min);
  }
  // A whole number of seconds, in milliseconds.
  absl::StatusOr<int64_t> SecondsAsMs(std::string_view key) const {
    absl::StatusOr<int64_t> seconds = Int(key, 0);
    if (!seconds.ok()) return seconds.status();
    if (*seconds > INT64_MAX / 1000) return Error(key, "too large");
    return *seconds * 1000;
  }
  absl::StatusOr<int64_t> JobTypeInt(const std::string& type, std::string_view attribute,
                                     int64_t min) const {
    return Int(StrCat("tony.", type, ".", attribute), JobTypeValue(type, attribute), min);
  }
  absl::StatusOr<int64_t> Memory(std::string_view key, const std::string& value) const {
    absl::StatusOr<int64_t> parsed = ParseMemoryMb(value);
    if (!parsed.ok()) return Error(key, ToStd(parsed.status().message()));
    return *parsed;
  }
  absl::StatusOr<bool> Bool(std::string_view key) const {
    absl::StatusOr<bool> parsed = ParseBool(String(key));
    if (!parsed.ok()) return Error(key, ToStd(parsed.status().message()));
    return *parsed;
  }
  absl::StatusOr<std::map<std::string, std::string>> Envs(std::string_view key) const {
    auto parsed = ParseEnvList(String(key));
    if (!parsed.ok()) return Error(key, ToStd(parsed.status().message()));
    return *parsed;
  }

 private:
  const Configuration& conf_;
};

#define TONY_ASSIGN_OR_RETURN(lhs, expr)        \
  do {                                          \
    auto _result = (expr);                      \
    if (!_result.ok()) return _result.status(); \
    lhs = *std::move(_result);                  \
  } while (0)

}  // namespace tony::config
