#include "am/status_publisher.h"

#include <gtest/gtest.h>

#include "am/job_state_fixture.h"

namespace tony::am {
namespace {

class StatusPublisherTest : public JobStateTest {
 protected:
  void SetUp() override {
    Init({{"tony.worker.instances", "2"}});
    publisher_ =
        std::make_unique<StatusPublisher>("application_1_0001", job_.get(), &live_, &clock_);
    publisher_->SetRender(
        [this](const rpc::JobStatus& status, const LiveHistory&) { rendered_.push_back(status); });
  }

  LiveHistory live_;
  std::unique_ptr<StatusPublisher> publisher_;
  std::vector<rpc::JobStatus> rendered_;
};

TEST_F(StatusPublisherTest, ChangesAreRenderedAtMostOnceASecond) {
  publisher_->MaybePublish();
  ASSERT_EQ(rendered_.size(), 1u);  // the first at once
  Allocate({"worker", 0});
  publisher_->MaybePublish();
  EXPECT_EQ(rendered_.size(), 1u);
  clock_.Advance(StatusPublisher::kChangedEveryMs - 1);
  publisher_->MaybePublish();
  EXPECT_EQ(rendered_.size(), 1u);
  clock_.Advance(1);
  publisher_->MaybePublish();
  ASSERT_EQ(rendered_.size(), 2u);
  EXPECT_EQ(rendered_[1].tasks(0).container_id(), "c_worker:0");
}

TEST_F(StatusPublisherTest, AnUnchangedJobIsRenderedEveryFewSecondsForNewSamples) {
  publisher_->MaybePublish();
  clock_.Advance(StatusPublisher::kUnchangedEveryMs - 1);
  publisher_->MaybePublish();
  EXPECT_EQ(rendered_.size(), 1u);
  clock_.Advance(1);
  publisher_->MaybePublish();
  EXPECT_EQ(rendered_.size(), 2u);
}

TEST_F(StatusPublisherTest, CompletionIsRenderedAtOnce) {
  publisher_->MaybePublish();
  publisher_->MarkComplete("");
  publisher_->MaybePublish();
  ASSERT_EQ(rendered_.size(), 2u);
  EXPECT_TRUE(rendered_[1].complete());
  EXPECT_EQ(rendered_[1].final_status_unsaved(), "");
}

TEST_F(StatusPublisherTest, VersionGrowsWithTheJobAndTheUrlAndIsOddOnceComplete) {
  const int64_t start = publisher_->Version();
  EXPECT_EQ(start % 2, 0);
  Allocate({"worker", 0});
  const int64_t allocated = publisher_->Version();
  EXPECT_GT(allocated, start);
  EXPECT_TRUE(publisher_->SetTensorBoardUrl("http://h:6006"));
  EXPECT_FALSE(publisher_->SetTensorBoardUrl("http://h:6006"));  // the same URL again: no change
  EXPECT_EQ(publisher_->Version(), allocated + 2);
  publisher_->MarkComplete("the RM was gone");
  EXPECT_EQ(publisher_->Version(), allocated + 3);
}

TEST_F(StatusPublisherTest, FillCarriesWhatTheTasksToldAndWhyTheEndIsUnsaved) {
  publisher_->SetTensorBoardUrl("http://h:6006");
  publisher_->SetOutputTail({"worker", 1}, "loss 0.1\n");
  publisher_->MarkComplete("the RM was gone");
  rpc::JobStatus status;
  publisher_->Fill(&status);
  EXPECT_EQ(status.app_id(), "application_1_0001");
  EXPECT_EQ(status.version(), publisher_->Version());
  EXPECT_EQ(status.tensorboard_url(), "http://h:6006");
  EXPECT_TRUE(status.complete());
  EXPECT_EQ(status.final_status_unsaved(), "the RM was gone");
  ASSERT_EQ(status.tasks_size(), 2);
  EXPECT_EQ(status.tasks(0).output_tail(), "");
  EXPECT_EQ(status.tasks(1).output_tail(), "loss 0.1\n");
}

TEST_F(StatusPublisherTest, WithoutAPageNothingIsRendered) {
  StatusPublisher silent("application_1_0001", job_.get(), &live_, &clock_);
  silent.MaybePublish();  // no render function: nothing to call, nothing to crash
  EXPECT_TRUE(rendered_.empty());
  EXPECT_NE(silent.FinalJson().find("\"complete\":true"), std::string::npos);
}

}  // namespace
}  // namespace tony::am
