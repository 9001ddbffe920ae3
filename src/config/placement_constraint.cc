#include "config/placement_constraint.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "common/strings.h"
#include "config/key_names.h"

namespace tony::config {
namespace {

using Kind = PlacementConstraint::Kind;
using AttributeOp = PlacementConstraint::AttributeOp;

constexpr int32_t kUnbounded = std::numeric_limits<int32_t>::max();
constexpr std::string_view kForms =
    "in,SCOPE,TAG, notin,SCOPE,TAG, cardinality,SCOPE,TAG,MIN,MAX, NAME=VALUE, NAME!=VALUE, "
    "and(...) or or(...)";

std::string Quoted(std::string_view part) { return StrCat("'", ForMessage(part), "'"); }

absl::Status Invalid(std::string_view expression, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(Quoted(expression), ": ", what));
}

// "" when `word` may be a tag, an attribute name or an attribute value; else why not, starting
// with `what`. The characters refused are the grammar's delimiters, which would make the text
// mean something else when written back.
std::string WhyNotWord(std::string_view word, std::string_view what) {
  if (word.empty()) return StrCat(what, " is empty");
  for (char c : word) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isspace(byte) != 0 || byte < 0x20 || byte == 0x7f) {
      return StrCat(what, " ", Quoted(word), " holds whitespace or a control character");
    }
    if (std::string_view(",:()=!").find(c) != std::string_view::npos) {
      return StrCat(what, " ", Quoted(word), " may not hold '", c, "'");
    }
  }
  return "";
}

// The text split on ',', each token trimmed; empty tokens are kept (and refused where they appear).
std::vector<std::string_view> Tokens(std::string_view text) {
  std::vector<std::string_view> tokens = Split(text, ',');
  for (std::string_view& token : tokens) token = StripWhitespace(token);
  return tokens;
}

absl::StatusOr<std::string> ParseScope(std::string_view expression, std::string_view token) {
  std::string scope = ToLower(token);
  if (scope == "node" || scope == "rack") return scope;
  return Invalid(expression, StrCat("the scope is node or rack, not ", Quoted(token)));
}

// [NAMESPACE/]TAG: the namespace is all before the last '/'.
absl::StatusOr<PlacementTarget> ParseTag(std::string_view expression, std::string_view token) {
  PlacementTarget target;
  target.key = "self";
  std::string_view tag = token;
  const size_t slash = token.rfind('/');
  if (slash != std::string_view::npos) {
    const std::string_view name_space = token.substr(0, slash);
    // Hadoop's parser takes app-id/ and app-tag/ too, but the text has no room for the id or
    // application tag they need, and YARN's scheduler refuses them without one.
    if (name_space == "app-id" || name_space == "app-tag") {
      return Invalid(expression,
                     StrCat("the namespace ", Quoted(name_space), " in ", Quoted(token),
                            " needs an application id or tag, which this syntax cannot carry; "
                            "use self, not-self or all"));
    }
    if (name_space != "self" && name_space != "not-self" && name_space != "all") {
      return Invalid(expression,
                     StrCat("invalid namespace ", Quoted(name_space), " in ", Quoted(token),
                            "; the namespaces are self, not-self and all"));
    }
    target.key = std::string(name_space);
    tag = token.substr(slash + 1);
  }
  std::string why =
      WhyNotWord(tag, slash == std::string_view::npos ? std::string("a tag")
                                                      : StrCat("the tag of ", Quoted(token)));
  if (!why.empty()) return Invalid(expression, why);
  target.values.emplace_back(tag);
  return target;
}

// One target per tag; a tag written twice is kept once, as YARN keeps targets in a set.
absl::StatusOr<std::vector<PlacementTarget>> ParseTags(std::string_view expression,
                                                       const std::vector<std::string_view>& tags) {
  std::vector<PlacementTarget> targets;
  for (std::string_view token : tags) {
    absl::StatusOr<PlacementTarget> target = ParseTag(expression, token);
    if (!target.ok()) return target.status();
    if (std::find(targets.begin(), targets.end(), *target) == targets.end()) {
      targets.push_back(*std::move(target));
    }
  }
  return targets;
}

// in,SCOPE,TAG[,TAG...] and notin,SCOPE,TAG[,TAG...]. Hadoop also takes "notin,node" with no
// tag, a constraint on no target that constrains nothing: almost surely a mistake, so refused.
absl::StatusOr<PlacementConstraint> ParseTargetForm(std::string_view expression,
                                                    const std::vector<std::string_view>& tokens,
                                                    bool in) {
  if (tokens.size() < 3) {
    return Invalid(expression, StrCat(Quoted(tokens[0]), " needs a scope and at least one tag: ",
                                      in ? "in" : "notin", ",SCOPE,TAG[,TAG...]"));
  }
  PlacementConstraint constraint;
  absl::StatusOr<std::string> scope = ParseScope(expression, tokens[1]);
  if (!scope.ok()) return scope.status();
  constraint.scope = *std::move(scope);
  absl::StatusOr<std::vector<PlacementTarget>> targets =
      ParseTags(expression, std::vector(tokens.begin() + 2, tokens.end()));
  if (!targets.ok()) return targets.status();
  constraint.targets = *std::move(targets);
  constraint.min_cardinality = in ? 1 : 0;
  constraint.max_cardinality = in ? kUnbounded : 0;
  return constraint;
}

absl::StatusOr<int32_t> ParseBound(std::string_view expression, std::string_view token,
                                   std::string_view what) {
  int32_t value = 0;
  std::string_view digits = token;
  if (digits.size() > 1 && digits[0] == '+') digits.remove_prefix(1);  // Java's parseInt takes "+2"
  if (!ParseDecimal(digits, &value)) {
    return Invalid(expression, StrCat("the ", what, " must be a whole number from 0 to ",
                                      kUnbounded, ", not ", Quoted(token)));
  }
  return value;
}

// cardinality,SCOPE,TAG[,TAG...],MIN,MAX
absl::StatusOr<PlacementConstraint> ParseCardinality(std::string_view expression,
                                                     const std::vector<std::string_view>& tokens) {
  if (tokens.size() < 5) {
    return Invalid(expression,
                   "cardinality needs a scope, at least one tag, a minimum and a maximum: "
                   "cardinality,SCOPE,TAG[,TAG...],MIN,MAX");
  }
  PlacementConstraint constraint;
  absl::StatusOr<std::string> scope = ParseScope(expression, tokens[1]);
  if (!scope.ok()) return scope.status();
  constraint.scope = *std::move(scope);
  absl::StatusOr<std::vector<PlacementTarget>> targets =
      ParseTags(expression, std::vector(tokens.begin() + 2, tokens.end() - 2));
  if (!targets.ok()) return targets.status();
  constraint.targets = *std::move(targets);
  absl::StatusOr<int32_t> min = ParseBound(expression, tokens[tokens.size() - 2], "minimum");
  if (!min.ok()) return min.status();
  absl::StatusOr<int32_t> max = ParseBound(expression, tokens.back(), "maximum");
  if (!max.ok()) return max.status();
  if (*min > *max) {
    return Invalid(expression, StrCat("the minimum ", *min, " is above the maximum ", *max));
  }
  constraint.min_cardinality = *min;
  constraint.max_cardinality = *max;
  return constraint;
}

// NAME=VALUE[,VALUE...] and NAME!=VALUE[,VALUE...]
absl::StatusOr<PlacementConstraint> ParseAttribute(std::string_view expression,
                                                   const std::vector<std::string_view>& tokens) {
  const std::string_view first = tokens[0];
  const size_t eq = first.find('=');
  if (eq == std::string_view::npos) {
    return Invalid(expression, StrCat("a node attribute is written NAME=VALUE[,VALUE...] or "
                                      "NAME!=VALUE[,VALUE...], and starts with NAME=, not ",
                                      Quoted(first)));
  }
  const bool not_equal = eq > 0 && first[eq - 1] == '!';
  const std::string_view name = StripWhitespace(first.substr(0, not_equal ? eq - 1 : eq));
  std::string why = WhyNotWord(name, "the attribute name");
  if (!why.empty()) return Invalid(expression, why);

  std::vector<std::string> values;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string_view value = i == 0 ? StripWhitespace(first.substr(eq + 1)) : tokens[i];
    if (i > 0 && value.find('=') != std::string_view::npos) {
      return Invalid(expression, StrCat("one attribute per expression, not also ", Quoted(value),
                                        "; combine attributes with and(...)"));
    }
    why = WhyNotWord(value, "an attribute value");
    if (!why.empty()) return Invalid(expression, why);
    values.emplace_back(value);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());

  PlacementConstraint constraint;
  constraint.scope = "node";
  constraint.min_cardinality = -1;
  constraint.max_cardinality = -1;
  constraint.op = not_equal ? AttributeOp::kNe : AttributeOp::kEq;
  PlacementTarget target;
  target.node_attribute = true;
  target.key = std::string(name);
  target.values = std::move(values);
  constraint.targets.push_back(std::move(target));
  return constraint;
}

absl::StatusOr<PlacementConstraint> ParseExpression(std::string_view text, int depth);

// KEYWORD(EXPR[:EXPR...]), the keyword "and" or "or" of `keyword_length` letters, already checked.
absl::StatusOr<PlacementConstraint> ParseConjunction(std::string_view expression,
                                                     size_t keyword_length, int depth) {
  const std::string keyword = ToLower(expression.substr(0, keyword_length));
  if (expression.back() != ')') {
    return Invalid(expression,
                   StrCat("the ')' that closes ", keyword, "( must end the expression"));
  }
  const std::string_view body =
      expression.substr(keyword_length + 1, expression.size() - keyword_length - 2);
  if (StripWhitespace(body).empty()) {
    return Invalid(expression, StrCat(keyword, "(...) needs at least one expression: ", keyword,
                                      "(EXPR[:EXPR...])"));
  }
  std::vector<std::string_view> children;
  int open = 0;
  size_t start = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '(') {
      ++open;
    } else if (body[i] == ')') {
      if (--open < 0) {
        return Invalid(expression,
                       StrCat("a ')' that closes nothing after ", Quoted(body.substr(0, i))));
      }
    } else if (body[i] == ':' && open == 0) {
      children.push_back(body.substr(start, i - start));
      start = i + 1;
    }
  }
  if (open > 0) return Invalid(expression, StrCat("a '(' is never closed in ", Quoted(body)));
  children.push_back(body.substr(start));

  PlacementConstraint constraint;
  constraint.kind = keyword == "and" ? Kind::kAnd : Kind::kOr;
  for (size_t i = 0; i < children.size(); ++i) {
    if (StripWhitespace(children[i]).empty()) {
      return Invalid(expression, StrCat("expression ", i + 1, " of the ", children.size(),
                                        " that ':' separates is empty"));
    }
    absl::StatusOr<PlacementConstraint> child = ParseExpression(children[i], depth + 1);
    if (!child.ok()) return child.status();
    constraint.children.push_back(*std::move(child));
  }
  return constraint;
}

absl::StatusOr<PlacementConstraint> ParseExpression(std::string_view text, int depth) {
  text = StripWhitespace(text);
  if (text.empty()) return absl::InvalidArgumentError("the placement constraint is empty");
  if (depth > kMaxPlacementConstraintDepth) {
    return Invalid(text, StrCat("and(...) and or(...) are nested more than ",
                                kMaxPlacementConstraintDepth, " deep"));
  }
  // Hadoop takes exactly and( AND( or( OR(; "And(" or "and (" would be read as nothing else.
  for (const std::string_view keyword : {std::string_view("and"), std::string_view("or")}) {
    if (text.size() <= keyword.size() || ToLower(text.substr(0, keyword.size())) != keyword) {
      continue;
    }
    const std::string_view written = text.substr(0, keyword.size());
    const std::string_view rest = text.substr(keyword.size());
    const size_t bracket = rest.find_first_not_of(" \t\n\v\f\r");
    if (bracket == std::string_view::npos || rest[bracket] != '(') continue;
    if (bracket != 0 || (written != keyword && written != ToUpper(keyword))) {
      return Invalid(text, StrCat("write ", keyword, "( or ", ToUpper(keyword), "(, not ",
                                  Quoted(text.substr(0, keyword.size() + bracket + 1))));
    }
    return ParseConjunction(text, keyword.size(), depth);
  }
  const std::vector<std::string_view> tokens = Tokens(text);
  const std::string op = ToLower(tokens[0]);
  if (op == "in" || op == "notin") return ParseTargetForm(text, tokens, op == "in");
  if (op == "cardinality") return ParseCardinality(text, tokens);
  if (text.find('=') != std::string_view::npos) return ParseAttribute(text, tokens);
  return Invalid(text, StrCat("expected ", kForms, "; ", Quoted(tokens[0]), " is none of them"));
}

}  // namespace

absl::StatusOr<PlacementConstraint> ParsePlacementConstraint(std::string_view text) {
  if (text.size() > kMaxPlacementConstraintLength) {
    return Invalid(text, StrCat("is ", text.size(), " bytes, more than the ",
                                kMaxPlacementConstraintLength, " a placement constraint may have"));
  }
  return ParseExpression(text, 0);
}

std::string ToString(const PlacementConstraint& constraint) {
  if (constraint.kind != Kind::kSimple) {
    std::vector<std::string> children;
    for (const PlacementConstraint& child : constraint.children) {
      children.push_back(ToString(child));
    }
    return StrCat(constraint.kind == Kind::kAnd ? "and(" : "or(", Join(children, ":"), ")");
  }
  if (constraint.op != AttributeOp::kNone) {
    const PlacementTarget attribute =
        constraint.targets.empty() ? PlacementTarget() : constraint.targets.front();
    return StrCat(attribute.key,
                  constraint.op == AttributeOp::kEq ? "=" : "!=", Join(attribute.values, ","));
  }
  std::vector<std::string> tags;
  for (const PlacementTarget& target : constraint.targets) {
    for (const std::string& tag : target.values) {
      tags.push_back(target.key == "self" ? tag : StrCat(target.key, "/", tag));
    }
  }
  const int32_t min = constraint.min_cardinality;
  const int32_t max = constraint.max_cardinality;
  if (min == 1 && max == kUnbounded) return StrCat("in,", constraint.scope, ",", Join(tags, ","));
  if (min == 0 && max == 0) return StrCat("notin,", constraint.scope, ",", Join(tags, ","));
  return StrCat("cardinality,", constraint.scope, ",", Join(tags, ","), ",", min, ",", max);
}

}  // namespace tony::config
