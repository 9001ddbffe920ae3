#include "cluster/yarn/hdfs_token_refresher.h"

#include <gtest/gtest.h>

#include "hadoop/common/writable.h"

namespace tony::cluster {
namespace {

// An HDFS token whose identifier says it dies at `max_date_ms`.
hadoop::Token TokenDyingAt(int64_t max_date_ms, const std::string& service = "10.0.0.1:8020") {
  std::string id(1, '\0');
  hadoop::WriteText("alice", &id);
  hadoop::WriteText("yarn", &id);
  hadoop::WriteText("", &id);
  hadoop::WriteVLong(max_date_ms - 1000, &id);
  hadoop::WriteVLong(max_date_ms, &id);
  hadoop::WriteVInt(1, &id);
  hadoop::WriteVInt(2, &id);
  return hadoop::Token{id, "secret", "HDFS_DELEGATION_TOKEN", service};
}

TEST(TokenScheduleTest, RefreshesThreeQuartersOfTheWayToTheEarliestDeath) {
  EXPECT_EQ(RefreshDueMs(1000, 5000), 4000);
  EXPECT_EQ(RefreshDueMs(1000, 1000), 1000);  // already dead: now
  EXPECT_EQ(RefreshDueMs(1000, 500), 1000);
  EXPECT_EQ(EarliestMaxDateMs({TokenDyingAt(9000), TokenDyingAt(7000)}, 10), 7000);
  // An identifier tony cannot read: refresh at once rather than guess.
  EXPECT_EQ(EarliestMaxDateMs({TokenDyingAt(9000), {"junk", "", "HDFS_DELEGATION_TOKEN", ""}}, 10),
            10);
}

TEST(TokenScheduleTest, RetriesAfterATenthOfWhatIsLeftBetweenOneSecondAndAMinute) {
  EXPECT_EQ(RetryDueMs(0, 100'000), 10'000);
  EXPECT_EQ(RetryDueMs(0, 5'000), 1'000);
  EXPECT_EQ(RetryDueMs(0, -5'000), 1'000);
  EXPECT_EQ(RetryDueMs(0, 86'400'000), 60'000);
}

TEST(HdfsTokenRefresherTest, FetchesWhenDueHandsTheTokensOnAndFollowsTheirExpiry) {
  FakeClock clock(1'000'000);
  int fetches = 0;
  absl::StatusOr<FreshTokens> next = absl::UnavailableError("KDC down");
  std::vector<std::vector<hadoop::Token>> handed;
  HdfsTokenRefresher refresher(
      [&] {
        ++fetches;
        return next;
      },
      [&](const std::vector<hadoop::Token>& tokens) { handed.push_back(tokens); },
      {TokenDyingAt(1'100'000)}, &clock);
  // The client's tokens live 100 s more: the first refresh is due in 75 s, not before.
  EXPECT_EQ(refresher.due_ms(), 1'075'000);
  EXPECT_EQ(refresher.Step(), 1'075'000);
  clock.Advance(74'999);
  refresher.Step();
  EXPECT_EQ(fetches, 0);

  // Due, but the fetch fails: nothing handed on, again in a tenth of the 25 s left.
  clock.Advance(1);
  EXPECT_EQ(refresher.Step(), 1'077'500);
  EXPECT_EQ(fetches, 1);
  EXPECT_TRUE(handed.empty());

  // It works: the tokens go to the callback and the next refresh follows their expiry.
  clock.Advance(2'500);
  const hadoop::Token fresh = TokenDyingAt(2'000'000, "10.0.0.2:8020");
  next = FreshTokens{{fresh}, 1'117'500};
  EXPECT_EQ(refresher.Step(), 1'077'500 + 30'000);
  EXPECT_EQ(fetches, 2);
  ASSERT_EQ(handed.size(), 1u);
  EXPECT_EQ(handed[0], std::vector<hadoop::Token>{fresh});
  refresher.Step();
  EXPECT_EQ(fetches, 2);
}

}  // namespace
}  // namespace tony::cluster
