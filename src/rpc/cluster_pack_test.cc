#include "rpc/cluster_pack.h"

#include <zlib.h>

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::rpc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Addresses(const WaitClusterSpecResponse& response,
                                   const std::string& type) {
  const AddressList& list = response.cluster().at(type);
  return {list.addresses().begin(), list.addresses().end()};
}

TEST(ClusterPackTest, EveryAddressRoundTripsIncludingAnEmptyOne) {
  const PackedCluster packed =
      PackCluster({{"worker", {"a:1", "", "b:2"}}, {"ps", {"[::1]:3"}}, {"chief", {}}});
  WaitClusterSpecResponse response;
  SetPackedCluster(packed, &response);
  response.set_attempt(2);
  ASSERT_TRUE(UnpackCluster(&response).ok());
  EXPECT_THAT(Addresses(response, "worker"), ElementsAre("a:1", "", "b:2"));
  EXPECT_THAT(Addresses(response, "ps"), ElementsAre("[::1]:3"));
  EXPECT_TRUE(Addresses(response, "chief").empty());
  EXPECT_EQ(response.cluster_bytes(), 0) << "the packed form is cleared once read";
  EXPECT_TRUE(response.packed_cluster().empty());
  EXPECT_EQ(response.attempt(), 2);
}

TEST(ClusterPackTest, AnEmptyClusterRoundTrips) {
  WaitClusterSpecResponse response;
  SetPackedCluster(PackCluster({}), &response);
  ASSERT_FALSE(response.packed_cluster().empty());
  ASSERT_TRUE(UnpackCluster(&response).ok());
  EXPECT_TRUE(response.cluster().empty());
}

TEST(ClusterPackTest, AnAnswerWithNothingPackedKeepsItsCluster) {
  WaitClusterSpecResponse response;
  (*response.mutable_cluster())["worker"].add_addresses("a:1");
  ASSERT_TRUE(UnpackCluster(&response).ok());
  EXPECT_THAT(Addresses(response, "worker"), ElementsAre("a:1"));
}

// What the AM sends 4,096 tasks: ephemeral ports on 512 hosts of a realistic name. Packed, it is
// a fraction of the serialized map, which is what makes sending it to every task cheap.
TEST(ClusterPackTest, AThousandsOfTasksClusterPacksToAFractionOfItsSize) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> port(32768, 60999);
  std::vector<std::string> workers;
  workers.reserve(4096);
  for (int i = 0; i < 4096; ++i) {
    workers.push_back("node" + std::to_string(i / 8) + ".rack" + std::to_string(i / 256) +
                      ".example.com:" + std::to_string(port(random)));
  }
  const PackedCluster packed = PackCluster({{"worker", workers}});
  EXPECT_LT(packed.bytes.size() * 3, static_cast<size_t>(packed.size));
  WaitClusterSpecResponse response;
  SetPackedCluster(packed, &response);
  ASSERT_TRUE(UnpackCluster(&response).ok());
  EXPECT_EQ(Addresses(response, "worker"), workers);
}

TEST(ClusterPackTest, ASizeOutOfBoundsIsRefusedBeforeAnyAllocation) {
  // The last: more than deflate could expand 1 byte to.
  for (int64_t size :
       {int64_t{-1}, kMaxClusterBytes + 1, int64_t{1} << 62, int64_t{2 * 1032 + 1}}) {
    WaitClusterSpecResponse response;
    response.set_packed_cluster("x");
    response.set_cluster_bytes(size);
    const absl::Status status = UnpackCluster(&response);
    EXPECT_TRUE(absl::IsDataLoss(status)) << size;
    EXPECT_THAT(status.message(), HasSubstr("size")) << size;
  }
}

TEST(ClusterPackTest, DamagedOrMisstatedBytesAreRefused) {
  const PackedCluster packed = PackCluster({{"worker", {"a:1", "b:2"}}});
  struct Case {
    std::string bytes;
    int64_t size;
  };
  std::string flipped = packed.bytes;
  flipped[flipped.size() / 2] ^= 0x55;
  const std::vector<Case> cases = {
      {packed.bytes, packed.size + 1},                                 // claims more than it holds
      {packed.bytes, packed.size - 1},                                 // claims less
      {packed.bytes.substr(0, packed.bytes.size() / 2), packed.size},  // cut short
      {packed.bytes + "trailing", packed.size},                        // more than one stream
      {flipped, packed.size},                                          // damaged
      {"not zlib at all", packed.size},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    WaitClusterSpecResponse response;
    response.set_packed_cluster(cases[i].bytes);
    response.set_cluster_bytes(cases[i].size);
    EXPECT_TRUE(absl::IsDataLoss(UnpackCluster(&response))) << "case " << i;
  }
}

TEST(ClusterPackTest, BytesThatInflateToSomethingElseDoNotParse) {
  // Valid zlib of bytes that are no ClusterAddresses (a field 1 of 5 bytes, cut after 2).
  const std::string junk =
      "\x0a\x05"
      "ab";
  uLongf length = compressBound(junk.size());
  std::string bytes(length, '\0');
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(bytes.data()), &length,
                      reinterpret_cast<const Bytef*>(junk.data()), junk.size(), 6),
            Z_OK);
  bytes.resize(length);
  WaitClusterSpecResponse response;
  response.set_packed_cluster(bytes);
  response.set_cluster_bytes(static_cast<int64_t>(junk.size()));
  const absl::Status status = UnpackCluster(&response);
  EXPECT_TRUE(absl::IsDataLoss(status));
  EXPECT_THAT(status.message(), HasSubstr("parse"));
}

}  // namespace
}  // namespace tony::rpc
