#include "config/placement_constraint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/strings.h"

namespace tony::config {

// Failures print constraints as their text (gtest finds these by argument-dependent lookup, so
// they live in the types' namespace).
void PrintTo(const PlacementConstraint& constraint, std::ostream* os) {
  *os << "\"" << ToString(constraint) << "\"";
}
void PrintTo(const PlacementTarget& target, std::ostream* os) {
  *os << (target.node_attribute ? "attribute " : "tags ") << target.key << ":";
  for (const std::string& value : target.values) *os << " " << value;
}

namespace {

using ::testing::HasSubstr;
using Kind = PlacementConstraint::Kind;
using AttributeOp = PlacementConstraint::AttributeOp;

constexpr int32_t kUnbounded = std::numeric_limits<int32_t>::max();

PlacementTarget Tag(std::string name_space, std::string tag) {
  PlacementTarget target;
  target.key = std::move(name_space);
  target.values = {std::move(tag)};
  return target;
}

PlacementTarget Attribute(std::string name, std::vector<std::string> values) {
  PlacementTarget target;
  target.node_attribute = true;
  target.key = std::move(name);
  target.values = std::move(values);
  return target;
}

PlacementConstraint Parsed(std::string_view text) {
  absl::StatusOr<PlacementConstraint> parsed = ParsePlacementConstraint(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status();
  return parsed.ok() ? *parsed : PlacementConstraint();
}

// The message of the refusal of `text`, which must be kInvalidArgument and one line.
std::string ErrorOf(std::string_view text) {
  absl::StatusOr<PlacementConstraint> parsed = ParsePlacementConstraint(text);
  EXPECT_FALSE(parsed.ok()) << "accepted \"" << text << "\" as " << ToString(*parsed);
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << text;
  std::string message(parsed.status().message());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

TEST(PlacementConstraintTest, InWithOneTag) {
  const PlacementConstraint c = Parsed("in,node,worker");
  EXPECT_EQ(c.kind, Kind::kSimple);
  EXPECT_EQ(c.scope, "node");
  EXPECT_EQ(c.targets, std::vector{Tag("self", "worker")});
  EXPECT_FALSE(c.targets[0].node_attribute);
  EXPECT_EQ(c.min_cardinality, 1);
  EXPECT_EQ(c.max_cardinality, kUnbounded);
  EXPECT_EQ(c.op, AttributeOp::kNone);
  EXPECT_TRUE(c.children.empty());
}

TEST(PlacementConstraintTest, NotInWithSeveralTagsAndNamespaces) {
  const PlacementConstraint c = Parsed("notin,rack,all/ps,not-self/worker,chief");
  EXPECT_EQ(c.scope, "rack");
  EXPECT_EQ(c.targets,
            (std::vector{Tag("all", "ps"), Tag("not-self", "worker"), Tag("self", "chief")}));
  EXPECT_EQ(c.min_cardinality, 0);
  EXPECT_EQ(c.max_cardinality, 0);
  EXPECT_EQ(c.op, AttributeOp::kNone);
}

TEST(PlacementConstraintTest, EveryNamespace) {
  const PlacementConstraint c = Parsed("in,node,self/a,not-self/b,all/c,rm.yarn.io-like.tag_1");
  EXPECT_EQ(c.targets, (std::vector{Tag("self", "a"), Tag("not-self", "b"), Tag("all", "c"),
                                    Tag("self", "rm.yarn.io-like.tag_1")}));
}

TEST(PlacementConstraintTest, KeywordsAndScopesAreCaseInsensitive) {
  const PlacementConstraint in = Parsed("IN,NODE,a");
  EXPECT_EQ(in.scope, "node");
  EXPECT_EQ(in.min_cardinality, 1);
  EXPECT_EQ(in.max_cardinality, kUnbounded);
  const PlacementConstraint not_in = Parsed("NotIn,Rack,a");
  EXPECT_EQ(not_in.scope, "rack");
  EXPECT_EQ(not_in.max_cardinality, 0);
  const PlacementConstraint cardinality = Parsed("CARDINALITY,rAcK,a,0,2");
  EXPECT_EQ(cardinality.scope, "rack");
  EXPECT_EQ(cardinality.max_cardinality, 2);
  // Tags and namespaces keep their case.
  EXPECT_EQ(Parsed("in,node,Worker").targets, std::vector{Tag("self", "Worker")});
}

TEST(PlacementConstraintTest, WhitespaceAroundTokensIsIgnored) {
  EXPECT_EQ(Parsed("  in , node ,\tworker , all/ps \n"), Parsed("in,node,worker,all/ps"));
  EXPECT_EQ(Parsed(" cardinality , node , a , 1 , 3 "), Parsed("cardinality,node,a,1,3"));
  EXPECT_EQ(Parsed(" java != 1.8 , 1.7 "), Parsed("java!=1.7,1.8"));
  EXPECT_EQ(Parsed("and( in,node,a : or( java = 1 ) )"), Parsed("and(in,node,a:or(java=1))"));
}

TEST(PlacementConstraintTest, ATagWrittenTwiceIsOneTarget) {
  EXPECT_EQ(Parsed("in,node,a,b,self/a,a").targets,
            (std::vector{Tag("self", "a"), Tag("self", "b")}));
}

TEST(PlacementConstraintTest, Cardinality) {
  const PlacementConstraint c = Parsed("cardinality,node,worker,all/ps,0,2");
  EXPECT_EQ(c.kind, Kind::kSimple);
  EXPECT_EQ(c.scope, "node");
  EXPECT_EQ(c.targets, (std::vector{Tag("self", "worker"), Tag("all", "ps")}));
  EXPECT_EQ(c.min_cardinality, 0);
  EXPECT_EQ(c.max_cardinality, 2);
  EXPECT_EQ(c.op, AttributeOp::kNone);

  const PlacementConstraint wide = Parsed("cardinality,rack,a,+3,2147483647");
  EXPECT_EQ(wide.min_cardinality, 3);
  EXPECT_EQ(wide.max_cardinality, kUnbounded);
  // A tag may look like a number: the last two tokens are the bounds.
  const PlacementConstraint numeric = Parsed("cardinality,node,7,1,1");
  EXPECT_EQ(numeric.targets, std::vector{Tag("self", "7")});
  EXPECT_EQ(numeric.min_cardinality, 1);
  EXPECT_EQ(numeric.max_cardinality, 1);
}

TEST(PlacementConstraintTest, NodeAttributeEqual) {
  const PlacementConstraint c = Parsed("java=true");
  EXPECT_EQ(c.kind, Kind::kSimple);
  EXPECT_EQ(c.scope, "node");
  EXPECT_EQ(c.op, AttributeOp::kEq);
  EXPECT_EQ(c.min_cardinality, -1);
  EXPECT_EQ(c.max_cardinality, -1);
  EXPECT_EQ(c.targets, std::vector{Attribute("java", {"true"})});
}

TEST(PlacementConstraintTest, NodeAttributeNotEqualWithSeveralValues) {
  const PlacementConstraint c = Parsed("java!=1.8,1.7,1.8,11");
  EXPECT_EQ(c.op, AttributeOp::kNe);
  EXPECT_EQ(c.targets, std::vector{Attribute("java", {"1.7", "1.8", "11"})});
}

TEST(PlacementConstraintTest, PrefixedAttributeName) {
  const PlacementConstraint c = Parsed("rm.yarn.io/java=true");
  EXPECT_EQ(c.op, AttributeOp::kEq);
  EXPECT_EQ(c.targets, std::vector{Attribute("rm.yarn.io/java", {"true"})});
  // An attribute may be named like a keyword: the form is told by its first token.
  EXPECT_EQ(Parsed("in=1").targets, std::vector{Attribute("in", {"1"})});
}

TEST(PlacementConstraintTest, NestedConjunctions) {
  const PlacementConstraint c = Parsed("and(notin,node,bar:or(in,node,foo:in,node,moo))");
  EXPECT_EQ(c.kind, Kind::kAnd);
  ASSERT_EQ(c.children.size(), 2u);
  EXPECT_EQ(c.children[0], Parsed("notin,node,bar"));
  const PlacementConstraint& alternatives = c.children[1];
  EXPECT_EQ(alternatives.kind, Kind::kOr);
  ASSERT_EQ(alternatives.children.size(), 2u);
  EXPECT_EQ(alternatives.children[0], Parsed("in,node,foo"));
  EXPECT_EQ(alternatives.children[1], Parsed("in,node,moo"));
  EXPECT_TRUE(c.targets.empty());
}

TEST(PlacementConstraintTest, UpperCaseConjunctionsAndMixedChildren) {
  const PlacementConstraint c =
      Parsed("AND(java=1.8:OR(cardinality,rack,a,0,3:python!=2):notin,node,self/b)");
  EXPECT_EQ(c.kind, Kind::kAnd);
  ASSERT_EQ(c.children.size(), 3u);
  EXPECT_EQ(c.children[0], Parsed("java=1.8"));
  EXPECT_EQ(c.children[1].kind, Kind::kOr);
  EXPECT_EQ(c.children[1].children,
            (std::vector{Parsed("cardinality,rack,a,0,3"), Parsed("python!=2")}));
  EXPECT_EQ(c.children[2], Parsed("notin,node,b"));

  const PlacementConstraint single = Parsed("or(in,rack,a)");
  EXPECT_EQ(single.kind, Kind::kOr);
  EXPECT_EQ(single.children, std::vector{Parsed("in,rack,a")});
}

TEST(PlacementConstraintTest, ToStringIsCanonicalAndParsesBack) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"in,node,worker", "in,node,worker"},
      {" IN , Node , self/worker ", "in,node,worker"},
      {"notin,rack,all/ps", "notin,rack,all/ps"},
      {"in,node,a,b", "in,node,a,b"},
      {"cardinality,node,worker,0,2", "cardinality,node,worker,0,2"},
      {"CARDINALITY,RACK,not-self/x,1,2147483647", "in,rack,not-self/x"},
      {"cardinality,node,a,0,0", "notin,node,a"},
      {"java=true", "java=true"},
      {"java!=1.8,1.7", "java!=1.7,1.8"},
      {"rm.yarn.io/java = true", "rm.yarn.io/java=true"},
      {"AND(in,node,a : OR(notin,rack,b:java=1))", "and(in,node,a:or(notin,rack,b:java=1))"},
  };
  for (const auto& [text, canonical] : cases) {
    const PlacementConstraint parsed = Parsed(text);
    EXPECT_EQ(ToString(parsed), canonical) << text;
    EXPECT_EQ(Parsed(ToString(parsed)), parsed) << text;
  }
}

TEST(PlacementConstraintTest, RefusesEmptyText) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("is empty"));
  EXPECT_THAT(ErrorOf(" \t\n"), HasSubstr("is empty"));
}

TEST(PlacementConstraintTest, RefusesUnknownOperation) {
  EXPECT_THAT(ErrorOf("within,node,a"), HasSubstr("'within' is none of them"));
  EXPECT_THAT(ErrorOf("in node a"), HasSubstr("'in node a' is none of them"));
  EXPECT_THAT(ErrorOf("and,node,a"), HasSubstr("'and' is none of them"));
}

TEST(PlacementConstraintTest, RefusesBadScope) {
  EXPECT_EQ(ErrorOf("notin,host,worker"),
            "'notin,host,worker': the scope is node or rack, not 'host'");
  EXPECT_THAT(ErrorOf("cardinality,nodes,a,0,1"), HasSubstr("not 'nodes'"));
  EXPECT_THAT(ErrorOf("in,,a"), HasSubstr("not ''"));
}

TEST(PlacementConstraintTest, RefusesMissingTags) {
  EXPECT_THAT(ErrorOf("in"), HasSubstr("'in' needs a scope and at least one tag"));
  // Hadoop takes this one, as a constraint that constrains nothing.
  EXPECT_THAT(ErrorOf("notin,node"),
              HasSubstr("'notin,node': 'notin' needs a scope and at least one tag"));
  EXPECT_THAT(ErrorOf("in,node,"), HasSubstr("'in,node,': a tag is empty"));
  EXPECT_THAT(ErrorOf("in,node,a,,b"), HasSubstr("'in,node,a,,b': a tag is empty"));
  EXPECT_THAT(ErrorOf("cardinality,node,1,2"), HasSubstr("cardinality needs a scope"));
}

TEST(PlacementConstraintTest, RefusesBadNamespace) {
  EXPECT_THAT(ErrorOf("in,node,foo/a"), HasSubstr("invalid namespace 'foo' in 'foo/a'"));
  EXPECT_THAT(ErrorOf("in,node,Self/a"), HasSubstr("invalid namespace 'Self'"));
  EXPECT_THAT(ErrorOf("in,node,/a"), HasSubstr("invalid namespace '' in '/a'"));
  EXPECT_THAT(ErrorOf("in,node,app-id/application_1_0001/tag"),
              HasSubstr("invalid namespace 'app-id/application_1_0001'"));
  // Hadoop's parser takes these, but they need an id the text cannot carry.
  EXPECT_THAT(ErrorOf("in,node,app-id/a"),
              HasSubstr("the namespace 'app-id' in 'app-id/a' needs an application id or tag"));
  EXPECT_THAT(ErrorOf("notin,rack,app-tag/b"), HasSubstr("the namespace 'app-tag' in"));
  EXPECT_THAT(ErrorOf("in,node,self/"), HasSubstr("the tag of 'self/' is empty"));
}

TEST(PlacementConstraintTest, RefusesBadCardinalities) {
  EXPECT_THAT(ErrorOf("cardinality,node,a,x,2"),
              HasSubstr("the minimum must be a whole number from 0 to 2147483647, not 'x'"));
  EXPECT_THAT(ErrorOf("cardinality,node,a,-1,2"), HasSubstr("minimum must be"));
  EXPECT_THAT(ErrorOf("cardinality,node,a,-1,2"), HasSubstr("not '-1'"));
  EXPECT_THAT(ErrorOf("cardinality,node,a,1,-2"), HasSubstr("maximum must be"));
  EXPECT_THAT(ErrorOf("cardinality,node,a,1.5,2"), HasSubstr("not '1.5'"));
  EXPECT_THAT(ErrorOf("cardinality,node,a,1,2147483648"), HasSubstr("not '2147483648'"));
  EXPECT_THAT(ErrorOf("cardinality,node,a,1,"), HasSubstr("the maximum must be"));
  EXPECT_EQ(ErrorOf("cardinality,node,a,3,2"),
            "'cardinality,node,a,3,2': the minimum 3 is above the maximum 2");
}

TEST(PlacementConstraintTest, RefusesMissingOrUnbalancedBrackets) {
  EXPECT_THAT(ErrorOf("and(in,node,a"),
              HasSubstr("'and(in,node,a': the ')' that closes and( must end the expression"));
  EXPECT_THAT(ErrorOf("or(in,node,a)x"), HasSubstr("'or(in,node,a)x': the ')' that closes or("));
  EXPECT_THAT(ErrorOf("and(in,node,a))"), HasSubstr("a ')' that closes nothing after 'in,node,a'"));
  EXPECT_THAT(ErrorOf("and(in,node,a)(b)"), HasSubstr("closes nothing after 'in,node,a'"));
  EXPECT_THAT(ErrorOf("and(in,node,(a)"), HasSubstr("a '(' is never closed in 'in,node,(a'"));
  EXPECT_THAT(ErrorOf("and()"), HasSubstr("'and()': and(...) needs at least one expression"));
  EXPECT_THAT(ErrorOf("OR( )"), HasSubstr("or(...) needs at least one expression"));
}

TEST(PlacementConstraintTest, RefusesEmptyChild) {
  EXPECT_THAT(ErrorOf("and(in,node,a:)"),
              HasSubstr("'and(in,node,a:)': expression 2 of the 2 that ':' separates is empty"));
  EXPECT_THAT(ErrorOf("or(:in,node,a)"), HasSubstr("expression 1 of the 2"));
  EXPECT_THAT(ErrorOf("and(in,node,a: :in,node,b)"), HasSubstr("expression 2 of the 3"));
}

TEST(PlacementConstraintTest, ChildErrorsQuoteTheChild) {
  EXPECT_EQ(ErrorOf("and(in,node,a:or(java=1:in,host,b))"),
            "'in,host,b': the scope is node or rack, not 'host'");
}

TEST(PlacementConstraintTest, RefusesMixedCaseOrSpacedConjunction) {
  EXPECT_THAT(ErrorOf("And(in,node,a)"), HasSubstr("write and( or AND(, not 'And('"));
  EXPECT_THAT(ErrorOf("oR(in,node,a)"), HasSubstr("write or( or OR(, not 'oR('"));
  EXPECT_THAT(ErrorOf("and (in,node,a)"), HasSubstr("not 'and ('"));
}

TEST(PlacementConstraintTest, RefusesAttributeWithoutNameOrValue) {
  EXPECT_THAT(ErrorOf("=true"), HasSubstr("'=true': the attribute name is empty"));
  EXPECT_THAT(ErrorOf(" != true"), HasSubstr("'!= true': the attribute name is empty"));
  EXPECT_THAT(ErrorOf("java="), HasSubstr("'java=': an attribute value is empty"));
  EXPECT_THAT(ErrorOf("java!=1,,2"), HasSubstr("'java!=1,,2': an attribute value is empty"));
  EXPECT_THAT(ErrorOf("java=1,"), HasSubstr("an attribute value is empty"));
  EXPECT_THAT(ErrorOf("1.8,java=1"), HasSubstr("starts with NAME=, not '1.8'"));
}

TEST(PlacementConstraintTest, RefusesTwoAttributesInOneExpression) {
  EXPECT_THAT(ErrorOf("java=1.8,python=3"),
              HasSubstr("one attribute per expression, not also 'python=3'; combine attributes "
                        "with and(...)"));
  EXPECT_THAT(ErrorOf("java=1.8,python!=3"), HasSubstr("not also 'python!=3'"));
  EXPECT_THAT(ErrorOf("java=1=2"), HasSubstr("an attribute value '1=2' may not hold '='"));
  EXPECT_THAT(ErrorOf("java==2"), HasSubstr("an attribute value '=2' may not hold '='"));
}

TEST(PlacementConstraintTest, RefusesDelimitersAndSpacesInsideNames) {
  EXPECT_THAT(ErrorOf("in,node,a:b"), HasSubstr("a tag 'a:b' may not hold ':'"));
  EXPECT_THAT(ErrorOf("in,node,a=b"), HasSubstr("a tag 'a=b' may not hold '='"));
  EXPECT_THAT(ErrorOf("in,node,a!"), HasSubstr("a tag 'a!' may not hold '!'"));
  EXPECT_THAT(ErrorOf("in,node,(a"), HasSubstr("a tag '(a' may not hold '('"));
  EXPECT_THAT(ErrorOf("in,node,a b"), HasSubstr("a tag 'a b' holds whitespace"));
  EXPECT_THAT(ErrorOf(std::string("in,node,a\0b", 11)), HasSubstr("a tag 'a\\x00b' holds"));
  EXPECT_THAT(ErrorOf("ja va=1"), HasSubstr("the attribute name 'ja va' holds whitespace"));
  EXPECT_THAT(ErrorOf("a!b=1"), HasSubstr("the attribute name 'a!b' may not hold '!'"));
  EXPECT_THAT(ErrorOf("java=1 2"), HasSubstr("an attribute value '1 2' holds whitespace"));
  EXPECT_THAT(ErrorOf("java=(1)"), HasSubstr("an attribute value '(1)' may not hold '('"));
}

TEST(PlacementConstraintTest, RefusesTrailingGarbage) {
  EXPECT_THAT(ErrorOf("in,node,a)"), HasSubstr("'in,node,a)': a tag 'a)' may not hold ')'"));
  EXPECT_THAT(ErrorOf("in,node,a:in,node,b"), HasSubstr("a tag 'a:in' may not hold ':'"));
  EXPECT_THAT(ErrorOf("cardinality,node,a,0,1,x"), HasSubstr("not 'x'"));
}

TEST(PlacementConstraintTest, BoundsTheNestingDepth) {
  std::string text = "in,node,a";
  for (int i = 0; i < kMaxPlacementConstraintDepth; ++i) text = StrCat("and(", text, ")");
  EXPECT_EQ(Parsed(text).kind, Kind::kAnd);
  EXPECT_THAT(ErrorOf("or(" + text + ")"),
              HasSubstr("'in,node,a': and(...) and or(...) are nested more than 32 deep"));

  // Far deeper than the bound, within the length: refused without deep recursion.
  std::string deep = "in,node,a";
  for (int i = 0; i < 2000; ++i) deep = StrCat("or(", deep, ")");
  ASSERT_LE(deep.size(), kMaxPlacementConstraintLength);
  EXPECT_THAT(ErrorOf(deep), HasSubstr("nested more than 32 deep"));
}

TEST(PlacementConstraintTest, BoundsTheLength) {
  const std::string longest = "in,node," + std::string(kMaxPlacementConstraintLength - 8, 'a');
  absl::StatusOr<PlacementConstraint> parsed = ParsePlacementConstraint(longest);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->targets, std::vector{Tag("self", std::string(longest.substr(8)))});
  const std::string message = ErrorOf(longest + "a");
  EXPECT_THAT(message, HasSubstr("'in,node,aaaa"));
  EXPECT_THAT(message, HasSubstr("is 8193 bytes, more than the 8192 a placement constraint may"));
}

// Random edits of valid constraints: never a crash, every refusal a one-line kInvalidArgument,
// and every constraint accepted prints as text that parses back to it.
TEST(PlacementConstraintTest, EditedConstraintsAreRefusedOrRoundTrip) {
  const std::vector<std::string> seeds = {
      "in,node,worker", "notin,rack,all/ps,chief", "cardinality,node,a,not-self/b,0,2",
      "java!=1.7,1.8",  "rm.yarn.io/java=true",    "and(notin,node,bar:or(in,node,foo:java=1))"};
  const std::string alphabet = "inotdrackle,:()=!/ aANDOR01-";
  std::mt19937 random(20261204);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = seeds[random() % seeds.size()];
    for (int edits = 1 + static_cast<int>(random() % 3); edits > 0; --edits) {
      const size_t at = random() % (text.size() + 1);
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 3) {
        case 0:
          if (at < text.size()) text[at] = c;
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          text.insert(at, 1, c);
          break;
      }
    }
    absl::StatusOr<PlacementConstraint> parsed = ParsePlacementConstraint(text);
    if (!parsed.ok()) {
      ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << text;
      ASSERT_EQ(std::string(parsed.status().message()).find('\n'), std::string::npos) << text;
      continue;
    }
    ++accepted;
    absl::StatusOr<PlacementConstraint> again = ParsePlacementConstraint(ToString(*parsed));
    ASSERT_TRUE(again.ok()) << text << " -> " << ToString(*parsed) << ": " << again.status();
    ASSERT_EQ(*again, *parsed) << text << " -> " << ToString(*parsed);
  }
  EXPECT_GT(accepted, 500) << "the edits must leave some constraints valid";
}

}  // namespace
}  // namespace tony::config
