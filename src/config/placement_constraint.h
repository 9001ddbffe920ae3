#pragma once
// YARN placement constraints in the text form that Hadoop's
// PlacementConstraintParser.parseExpression reads:
//   in,SCOPE,TAG[,TAG...]            notin,SCOPE,TAG[,TAG...]
//   cardinality,SCOPE,TAG[,TAG...],MIN,MAX
//   NAME=VALUE[,VALUE...]            NAME!=VALUE[,VALUE...]   (a node attribute)
//   and(EXPR:EXPR...)                or(EXPR:EXPR...)          (or AND(...), OR(...))
// SCOPE is node or rack; a TAG may carry a namespace: self/ (the default), not-self/, all/.
// Pure; errors are kInvalidArgument, one line that quotes the expression and the offending part.
// The caller prefixes the key and its source.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tony::config {

struct PlacementTarget {
  bool node_attribute = false;  // else allocation tags
  // Allocation tags: the namespace ("self" when the text names none; else "not-self", "all" or
  // "self" as written before the tag's '/'). Node attribute: its name as written ("java",
  // "rm.yarn.io/java").
  std::string key;
  // Allocation tags: the one tag. Node attribute: its values, sorted, without duplicates.
  std::vector<std::string> values;
  friend bool operator==(const PlacementTarget&, const PlacementTarget&) = default;
};

struct PlacementConstraint {
  enum class Kind { kSimple, kAnd, kOr };
  enum class AttributeOp { kNone, kEq, kNe };
  Kind kind = Kind::kSimple;
  // kSimple:
  std::string scope;  // "node" or "rack"
  // Allocation tags: one target per tag, in the order written, duplicates dropped (YARN holds them
  // as a set). Node attribute: exactly one target.
  std::vector<PlacementTarget> targets;
  // in: 1 and INT32_MAX; notin: 0 and 0; node attribute: -1 and -1.
  int32_t min_cardinality = 0;
  int32_t max_cardinality = 0;
  AttributeOp op = AttributeOp::kNone;  // kEq or kNe for a node attribute
  // kAnd, kOr: at least one.
  std::vector<PlacementConstraint> children;
  friend bool operator==(const PlacementConstraint&, const PlacementConstraint&) = default;
};

// At most this many bytes of text, and and(...)/or(...) nested at most this deep.
inline constexpr size_t kMaxPlacementConstraintLength = 8192;
inline constexpr int kMaxPlacementConstraintDepth = 32;

// Accepts what Hadoop 3.4's parser accepts, except what would constrain nothing, is ambiguous or
// YARN cannot evaluate: in/notin without a tag, empty tokens, the app-id/ and app-tag/ namespaces
// (they need an id the text cannot carry), and tags, names or values holding ',', ':', '(', ')',
// '=', '!', whitespace or control characters. Example error:
//   'notin,host,worker': the scope is node or rack, not 'host'
[[nodiscard]] absl::StatusOr<PlacementConstraint> ParsePlacementConstraint(std::string_view text);

// The canonical text of a constraint: ParsePlacementConstraint gives back an equal constraint.
std::string ToString(const PlacementConstraint& constraint);

}  // namespace tony::config
