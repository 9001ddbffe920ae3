#pragma once
// The keys tony knows, read from the built-in tony-default.xml: their defaults, descriptions,
// whether they are per job type (`tony.*.memory`), and which are accepted but not implemented.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/configuration.h"

namespace tony::config {

struct KeyInfo {
  std::string name;  // "tony.am.memory" or, per job type, "tony.*.memory"
  std::string default_value;
  std::string description;
  std::optional<std::string> unsupported;  // why it is not implemented
};

class KeyCatalog {
 public:
  // The catalogue of the built-in defaults (parsed once; thread-safe after first use).
  static const KeyCatalog& BuiltIn();
  // Parses a defaults document; used by BuiltIn() and by tests.
  static absl::StatusOr<KeyCatalog> Parse(std::string_view xml);

  // The exact key, or the per-job-type entry matching `tony.<type>.<attribute>`.
  const KeyInfo* Lookup(std::string_view key) const;
  // The per-job-type entry for an attribute ("memory"), or null.
  const KeyInfo* JobTypeAttribute(std::string_view attribute) const;
  const std::vector<KeyInfo>& keys() const { return keys_; }

  // A configuration holding every non-per-job-type default, sourced "default".
  Configuration Defaults() const;

  // Warnings for the user-set keys of `conf` (sources other than default): unsupported keys,
  // unknown keys, with the likely intended key for a misspelling.
  std::vector<std::string> Lint(const Configuration& conf) const;

  // The known key closest to `key` within a small edit distance, if any.
  std::optional<std::string> Suggest(std::string_view key) const;

 private:
  std::vector<KeyInfo> keys_;
  std::map<std::string, size_t, std::less<>> by_name_;
};

// The text of the built-in tony-default.xml.
std::string_view BuiltInDefaultsXml();

}  // namespace tony::config
