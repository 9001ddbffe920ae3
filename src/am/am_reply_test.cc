#include "am/am_reply.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tony::am {
namespace {

struct Sent {
  std::vector<absl::Status> statuses;
  Reply<std::string>::Sender Sender() {
    return [this](const absl::Status& status) { statuses.push_back(status); };
  }
};

TEST(ReplyTest, SendsOnceWithTheResponseFilled) {
  Sent sent;
  std::string response;
  {
    Reply<std::string> reply(&response, sent.Sender());
    *reply.response() = "filled";
    std::move(reply).Send();
  }
  ASSERT_EQ(sent.statuses.size(), 1u);  // not again when it goes out of scope
  EXPECT_TRUE(sent.statuses[0].ok());
  EXPECT_EQ(response, "filled");
}

TEST(ReplyTest, AnErrorIsSentAsGiven) {
  Sent sent;
  std::string response;
  Reply<std::string>(&response, sent.Sender()).Send(absl::NotFoundError("no task worker:9"));
  ASSERT_EQ(sent.statuses.size(), 1u);
  EXPECT_EQ(sent.statuses[0], absl::NotFoundError("no task worker:9"));
}

TEST(ReplyTest, ADroppedReplyAnswersInternalInsteadOfHanging) {
  Sent sent;
  std::string response;
  { Reply<std::string> reply(&response, sent.Sender()); }
  ASSERT_EQ(sent.statuses.size(), 1u);
  EXPECT_EQ(sent.statuses[0].code(), absl::StatusCode::kInternal);
}

TEST(ReplyTest, AMovedReplyIsAnsweredOnceByItsNewOwner) {
  Sent sent;
  std::string response;
  std::vector<Reply<std::string>> kept;
  {
    Reply<std::string> reply(&response, sent.Sender());
    kept.push_back(std::move(reply));
    kept.reserve(16);  // moves it again
  }
  EXPECT_TRUE(sent.statuses.empty());
  EXPECT_EQ(kept[0].response(), &response);
  std::move(kept[0]).Send();
  kept.clear();
  ASSERT_EQ(sent.statuses.size(), 1u);
  EXPECT_TRUE(sent.statuses[0].ok());
}

TEST(ReplyTest, AssigningOverAnUnsentReplyAnswersIt) {
  Sent first;
  Sent second;
  std::string response;
  Reply<std::string> reply(&response, first.Sender());
  reply = Reply<std::string>(&response, second.Sender());
  ASSERT_EQ(first.statuses.size(), 1u);
  EXPECT_EQ(first.statuses[0].code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(second.statuses.empty());
  std::move(reply).Send();
  EXPECT_EQ(second.statuses.size(), 1u);
}

}  // namespace
}  // namespace tony::am
