#include "config/key_catalog.h"

#include <algorithm>
#include <array>

#include "common/strings.h"
#include "config/key_names.h"
#include "pugixml.hpp"

namespace tony::config {
namespace {

// Key families TonY has that tony accepts without implementing them yet.
struct UnsupportedFamily {
  std::string_view prefix;
  std::string_view reason;
};
constexpr std::array<UnsupportedFamily, 0> kUnsupportedFamilies = {};

// Splits "tony.<type>.<attribute>" when the key has exactly that shape.
bool SplitJobTypeKey(std::string_view key, std::string_view* type, std::string_view* attribute) {
  std::vector<std::string_view> parts = Split(key, '.');
  if (parts.size() != 3 || parts[0] != "tony" || parts[1].empty() || parts[2].empty()) {
    return false;
  }
  *type = parts[1];
  *attribute = parts[2];
  return true;
}

// The edit distance of `a` and `b` when it is at most `limit`, else limit + 1. Only the band of
// the table within `limit` of its diagonal is computed, so the cost is O(size * limit): a long
// unknown key costs no more than its length.
size_t BoundedEditDistance(std::string_view a, std::string_view b, size_t limit) {
  if (a.size() > b.size()) std::swap(a, b);
  if (b.size() - a.size() > limit) return limit + 1;
  const size_t beyond = limit + 1;
  std::vector<size_t> previous(b.size() + 1, beyond), current(b.size() + 1, beyond);
  for (size_t j = 0; j <= std::min(b.size(), limit); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    const size_t first = i > limit ? i - limit : 1;
    const size_t last = std::min(b.size(), i + limit);
    // The cell left of the band: row 0's value, or outside the band (this array holds row i-2).
    current[first - 1] = i <= limit ? i : beyond;
    size_t row_min = current[first - 1];
    for (size_t j = first; j <= last; ++j) {
      const size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution, beyond});
      row_min = std::min(row_min, current[j]);
    }
    if (row_min > limit) return beyond;
    std::swap(previous, current);
  }
  return std::min(previous[b.size()], beyond);
}

bool IsUserSet(const ConfigEntry& entry) {
  return entry.source.kind != SourceKind::kDefault && entry.source.kind != SourceKind::kDerived;
}

}  // namespace

absl::StatusOr<KeyCatalog> KeyCatalog::Parse(std::string_view xml) {
  pugi::xml_document doc;
  if (pugi::xml_parse_result parsed = doc.load_buffer(xml.data(), xml.size()); !parsed) {
    return absl::InvalidArgumentError(
        StrCat("built-in defaults: malformed XML: ", parsed.description()));
  }
  KeyCatalog catalog;
  for (pugi::xml_node property : doc.child("configuration").children("property")) {
    KeyInfo info;
    info.name = StripWhitespace(property.child_value("name"));
    info.default_value = StripWhitespace(property.child_value("value"));
    info.description = StripWhitespace(property.child_value("description"));
    if (pugi::xml_node unsupported = property.child("unsupported")) {
      info.unsupported = std::string(StripWhitespace(unsupported.child_value()));
    }
    if (info.name.empty() || catalog.by_name_.count(info.name)) {
      return absl::InvalidArgumentError(
          StrCat("built-in defaults: empty or repeated key \"", info.name, "\""));
    }
    catalog.by_name_[info.name] = catalog.keys_.size();
    catalog.keys_.push_back(std::move(info));
  }
  return catalog;
}

const KeyCatalog& KeyCatalog::BuiltIn() {
  static const KeyCatalog* catalog = [] {
    absl::StatusOr<KeyCatalog> parsed = Parse(BuiltInDefaultsXml());
    // The defaults are compiled in; a parse failure is a defect of tony itself.
    if (!parsed.ok()) std::abort();
    return new KeyCatalog(*std::move(parsed));
  }();
  return *catalog;
}

const KeyInfo* KeyCatalog::Lookup(std::string_view key) const {
  if (auto it = by_name_.find(key); it != by_name_.end()) return &keys_[it->second];
  std::string_view type, attribute;
  if (SplitJobTypeKey(key, &type, &attribute)) return JobTypeAttribute(attribute);
  return nullptr;
}

const KeyInfo* KeyCatalog::JobTypeAttribute(std::string_view attribute) const {
  auto it = by_name_.find(StrCat("tony.*.", attribute));
  return it == by_name_.end() ? nullptr : &keys_[it->second];
}

Configuration KeyCatalog::Defaults() const {
  Configuration conf;
  for (const KeyInfo& info : keys_) {
    if (Contains(info.name, "*")) continue;
    conf.Set(info.name, info.default_value, ValueSource::Default());
  }
  return conf;
}

std::optional<std::string> KeyCatalog::Suggest(std::string_view key) const {
  // The closest candidate wins; among equals, the first: the fixed keys, then the per-job-type
  // keys of the key's own type.
  constexpr size_t kMaxEdits = 2;
  std::optional<std::string> best;
  size_t best_distance = kMaxEdits + 1;
  auto consider = [&](std::string_view candidate) {
    const size_t distance = BoundedEditDistance(key, candidate, kMaxEdits);
    if (distance > 0 && distance < best_distance) {
      best_distance = distance;
      best = std::string(candidate);
    }
  };
  for (const KeyInfo& info : keys_) {
    if (!Contains(info.name, "*")) consider(info.name);
  }
  std::string_view type, attribute;
  if (SplitJobTypeKey(key, &type, &attribute)) {
    for (const KeyInfo& info : keys_) {
      if (info.name.starts_with("tony.*.")) {
        consider(StrCat("tony.", type, ".", std::string_view(info.name).substr(7)));
      }
    }
  }
  return best;
}

// Keys are quoted through ForMessage: a warning is one line of reasonable length.
std::vector<std::string> KeyCatalog::Lint(const Configuration& conf) const {
  constexpr size_t kMaxUnknownKeyWarnings = 20;
  std::vector<std::string> warnings;
  size_t unknown = 0;
  for (const auto& [key, entry] : conf.entries()) {
    if (!IsUserSet(entry)) continue;
    const std::string where = entry.source.ToString();
    if (const KeyInfo* info = Lookup(key)) {
      if (info->unsupported) {
        warnings.push_back(
            StrCat(ForMessage(key), " (", where,
                   ") is not supported by tony and is ignored: ", *info->unsupported));
      }
      continue;
    }
    if (IsKnownFamilyKey(key)) continue;
    auto family = std::find_if(
        kUnsupportedFamilies.begin(), kUnsupportedFamilies.end(),
        [&name = key](const UnsupportedFamily& f) { return name.starts_with(f.prefix); });
    if (family != kUnsupportedFamilies.end()) {
      warnings.push_back(StrCat(ForMessage(key), " (", where,
                                ") is not supported by tony and is ignored: ", family->reason));
      continue;
    }
    if (!key.starts_with("tony.")) continue;  // Hadoop and user keys pass through
    // A file of many unknown keys gets a few lines, not one per key (nor a suggestion for each).
    if (++unknown > kMaxUnknownKeyWarnings) continue;
    if (std::optional<std::string> suggestion = Suggest(key)) {
      warnings.push_back(StrCat("unknown key ", ForMessage(key), " (", where, "); did you mean ",
                                ForMessage(*suggestion), "?"));
    } else {
      warnings.push_back(StrCat("unknown key ", ForMessage(key), " (", where, ") is ignored"));
    }
  }
  if (unknown > kMaxUnknownKeyWarnings) {
    warnings.push_back(StrCat(unknown - kMaxUnknownKeyWarnings,
                              " more unknown tony.* keys are "
                              "ignored (tony config --explain lists every key and its source)"));
  }
  return warnings;
}

}  // namespace tony::config
