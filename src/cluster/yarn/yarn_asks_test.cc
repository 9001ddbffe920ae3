#include "cluster/yarn/yarn_asks.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::cluster {
namespace {

using ::testing::ElementsAre;

hadoop::Resource Small() {
  hadoop::Resource resource;
  resource.memory_mb = 512;
  resource.vcores = 1;
  return resource;
}

std::vector<std::string> Names(const std::vector<hadoop::ContainerRequest>& rows) {
  std::vector<std::string> names;
  for (const auto& row : rows) names.push_back(row.resource_name);
  return names;
}

TEST(NodeHintsTest, RoundTrip) {
  std::vector<NodeHint> hints = {{"nm1.example", "/default-rack"}, {"nm2.example", "/r2"}};
  const std::string text = FormatNodeHints(hints);
  EXPECT_EQ(text, "nm1.example@/default-rack,nm2.example@/r2");
  absl::StatusOr<std::vector<NodeHint>> parsed = ParseNodeHints(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, hints);
}

TEST(NodeHintsTest, EmptyMeansNone) {
  absl::StatusOr<std::vector<NodeHint>> parsed = ParseNodeHints("");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->empty());
}

TEST(NodeHintsTest, MalformedEntryIsNamed) {
  for (const char* bad : {"nm1", "@/rack", "nm1@", "nm1@/r@x", "nm1@/r,,nm2@/r"}) {
    absl::StatusOr<std::vector<NodeHint>> parsed = ParseNodeHints(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(std::string(parsed.status().message()), ::testing::HasSubstr("host@rack")) << bad;
  }
}

TEST(AsksForTypeTest, WithoutHintsOnlyAny) {
  std::vector<hadoop::ContainerRequest> rows = AsksForType(Small(), 3, 8, "", {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].resource_name, "*");
  EXPECT_EQ(rows[0].num_containers, 8);
  EXPECT_EQ(rows[0].priority, 3);
  EXPECT_TRUE(rows[0].relax_locality);
  EXPECT_EQ(rows[0].capability.memory_mb, 512);
}

TEST(AsksForTypeTest, HintsAddEveryHostAndRackOnceWithTheSameCount) {
  std::vector<NodeHint> hints = {
      {"a", "/r1"}, {"b", "/r1"}, {"c", "/r2"}, {"a", "/r1"}};  // two NodeManagers on host a
  std::vector<hadoop::ContainerRequest> rows = AsksForType(Small(), 2, 5, "", hints);
  EXPECT_THAT(Names(rows), ElementsAre("*", "a", "b", "c", "/r1", "/r2"));
  for (const auto& row : rows) {
    EXPECT_EQ(row.num_containers, 5) << row.resource_name;
    EXPECT_EQ(row.priority, 2) << row.resource_name;
    EXPECT_TRUE(row.relax_locality) << row.resource_name;
    EXPECT_TRUE(row.node_label_expression.empty()) << row.resource_name;
  }
}

TEST(AsksForTypeTest, WithdrawingSendsZeroEverywhere) {
  std::vector<hadoop::ContainerRequest> rows = AsksForType(Small(), 1, 0, "", {{"a", "/r"}});
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) EXPECT_EQ(row.num_containers, 0) << row.resource_name;
}

TEST(AsksForTypeTest, NodeLabelKeepsOnlyTheAnyRow) {
  std::vector<hadoop::ContainerRequest> rows = AsksForType(Small(), 1, 2, "gpu", {{"a", "/r"}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].resource_name, "*");
  EXPECT_EQ(rows[0].node_label_expression, "gpu");
}

}  // namespace
}  // namespace tony::cluster
