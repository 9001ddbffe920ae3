#include "executor/output_shipper.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace tony::executor {
namespace {

class OutputShipperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tony_ship_XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Print(const std::string& stream, const std::string& text) {
    std::ofstream(dir_ + "/" + stream, std::ios::app) << text;
  }
  OutputShipper Shipper(int64_t max_bytes) {
    return OutputShipper(dir_, max_bytes, [this](const rpc::AppendOutputRequest& request) {
      if (refuse_) return false;
      sent_.push_back(request);
      return true;
    });
  }
  std::string Received(const std::string& stream) const {
    std::string all;
    for (const rpc::AppendOutputRequest& r : sent_) {
      const int64_t offset = stream == "stdout" ? r.stdout_offset() : r.stderr_offset();
      EXPECT_EQ(offset, static_cast<int64_t>(all.size())) << "pieces in order, without gaps";
      all += stream == "stdout" ? r.stdout_data() : r.stderr_data();
    }
    return all;
  }

  std::string dir_;
  bool refuse_ = false;
  std::vector<rpc::AppendOutputRequest> sent_;
};

TEST_F(OutputShipperTest, SendsNewOutputOnceInOrderAndInPiecesTheAmAccepts) {
  OutputShipper shipper = Shipper(int64_t{1} << 30);
  EXPECT_TRUE(shipper.Ship(4)) << "nothing printed yet";
  EXPECT_TRUE(sent_.empty());
  Print("stdout", "epoch 1\n");
  Print("stderr", "warning\n");
  EXPECT_TRUE(shipper.Ship(4));
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_TRUE(shipper.Ship(4));
  EXPECT_EQ(sent_.size(), 1u) << "nothing new: nothing sent";
  const std::string big(OutputShipper::kPieceBytes * 2 + 10, 'x');
  Print("stdout", big);
  EXPECT_FALSE(shipper.Ship(2)) << "a third piece is waiting";
  EXPECT_TRUE(shipper.Ship(2));
  for (const rpc::AppendOutputRequest& r : sent_) {
    EXPECT_LE(static_cast<int64_t>(r.stdout_data().size()), OutputShipper::kPieceBytes);
  }
  EXPECT_EQ(Received("stdout"), "epoch 1\n" + big);
  EXPECT_EQ(Received("stderr"), "warning\n");
}

TEST_F(OutputShipperTest, ARefusedPieceIsSentAgainAndTheLimitHolds) {
  OutputShipper shipper = Shipper(10);
  Print("stdout", "0123456789abcdef");
  refuse_ = true;
  EXPECT_FALSE(shipper.Ship(4));
  EXPECT_EQ(shipper.sent_stdout(), 0);
  refuse_ = false;
  EXPECT_TRUE(shipper.Ship(4)) << "all up to the limit is sent";
  EXPECT_EQ(Received("stdout"), "0123456789");
  Print("stdout", "more");
  EXPECT_TRUE(shipper.Ship(4));
  EXPECT_EQ(sent_.size(), 1u);
}

}  // namespace
}  // namespace tony::executor
