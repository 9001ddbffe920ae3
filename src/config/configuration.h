#pragma once
// A Hadoop-style configuration: string keys to string values, each remembering its source.
// Not thread-safe; build it on one thread, then share it read-only.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "config/value_source.h"

namespace tony::config {

struct ConfigEntry {
  std::string value;
  ValueSource source;                 // where the value (or its last appended part) came from
  std::vector<ValueSource> appended;  // earlier sources of a multi-valued key, oldest first
  bool final = false;                 // Hadoop's <final>: later resources cannot override it
};

class Configuration {
 public:
  // Sets `key`. Multi-valued keys (IsMultiValued) append with a comma instead of replacing,
  // except over a built-in default, which is replaced. A key marked final by an earlier source
  // keeps its value; the attempt is reported in `ignored_final`.
  void Set(std::string_view key, std::string value, const ValueSource& source, bool final = false);
  // Replaces regardless of multi-valued semantics (used by tony itself for derived values).
  void Replace(std::string_view key, std::string value, const ValueSource& source);

  const ConfigEntry* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  // The value, or "" when unset.
  std::string Get(std::string_view key) const;
  const std::map<std::string, ConfigEntry, std::less<>>& entries() const { return entries_; }

  // The largest configuration file tony reads.
  static constexpr size_t kMaxXmlBytes = size_t{64} << 20;

  // Reads <configuration><property><name/><value/><final/></property>... from `path`, which
  // must be a regular file of at most kMaxXmlBytes, in UTF-8, without NUL bytes or a DOCTYPE.
  // Errors name the file and line: "tony.xml:7: <property> has no <name>". Linear in the size.
  [[nodiscard]] absl::Status LoadXmlFile(const std::string& path, SourceKind kind);
  // Same, from memory; `label` stands for the file name in sources and errors.
  [[nodiscard]] absl::Status LoadXmlString(std::string_view xml, const std::string& label,
                                           SourceKind kind);

  // The resolved configuration as a Hadoop XML document (tony-final.xml). Each property carries
  // a <source> element, as Hadoop's own dumps do.
  std::string ToXml() const;

  // The properties of a configuration dumped by ToXml (tony-final.xml) with the <source> each was
  // dumped with, by key: what the job's history shows as the resolved configuration.
  struct DumpedProperty {
    std::string key, value, source;
  };
  [[nodiscard]] static absl::StatusOr<std::vector<DumpedProperty>> ReadDumped(
      const std::string& path);

  // Attempts to change a key marked final, in order: "key (from source)".
  const std::vector<std::string>& ignored_final() const { return ignored_final_; }

  static bool IsMultiValued(std::string_view key);

 private:
  std::map<std::string, ConfigEntry, std::less<>> entries_;
  std::vector<std::string> ignored_final_;
};

}  // namespace tony::config
