#include "am/gloo_rendezvous.h"

#include <string>

#include "common/http_test_client.h"
#include "gtest/gtest.h"

namespace tony::am {
namespace {

using namespace ::tony::http_test;  // NOLINT(google-build-using-namespace)

class GlooRendezvousTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<int> port = rendezvous_.Start("127.0.0.1");
    ASSERT_TRUE(port.ok()) << port.status();
    port_ = *port;
  }
  std::string Call(const std::string& method, const std::string& path, const std::string& body = "",
                   const char* source = "127.0.0.1") {
    return Request(port_, method, path, source, body);
  }

  GlooRendezvous rendezvous_;
  int port_ = 0;
};

// What Horovod's HTTPStore does: poll for a key (404 until it is there), put, get.
TEST_F(GlooRendezvousTest, StoresAndServesValuesByScopeAndKey) {
  rendezvous_.AllowHost("127.0.0.1");
  EXPECT_TRUE(IsStatus(Call("GET", "/global/rank_1"), 404));
  const std::string value("addr\0with\xffzero", 14);
  EXPECT_TRUE(IsStatus(Call("PUT", "/global/rank_1", value), 200));
  const std::string answer = Call("GET", "/global/rank_1");
  EXPECT_TRUE(IsStatus(answer, 200)) << answer;
  EXPECT_EQ(BodyOf(answer), value);
  // Scopes are separate.
  EXPECT_TRUE(IsStatus(Call("GET", "/local_a/rank_1"), 404));
  EXPECT_TRUE(IsStatus(Call("PUT", "/global/rank_1", "v2"), 200));
  EXPECT_EQ(BodyOf(Call("GET", "/global/rank_1")), "v2");
}

// Each rank finalizes a scope with DELETE /<scope>/<rank>; the scope is cleared only when the last
// of its ranks has, so that a later rendezvous of the scope starts empty.
TEST_F(GlooRendezvousTest, ASizedScopeIsClearedWhenAllItsRanksFinalized) {
  rendezvous_.AllowHost("127.0.0.1");
  rendezvous_.SetScopeSizes({{"global", 2}, {"local_a", 1}});
  ASSERT_TRUE(IsStatus(Call("PUT", "/global/k", "v"), 200));
  ASSERT_TRUE(IsStatus(Call("PUT", "/local_a/k", "v"), 200));
  EXPECT_TRUE(IsStatus(Call("DELETE", "/global/0"), 200));
  EXPECT_TRUE(IsStatus(Call("DELETE", "/global/0"), 200));  // the same rank twice counts once
  EXPECT_TRUE(IsStatus(Call("GET", "/global/k"), 200));
  EXPECT_TRUE(IsStatus(Call("DELETE", "/global/1"), 200));
  EXPECT_TRUE(IsStatus(Call("GET", "/global/k"), 404));
  EXPECT_TRUE(IsStatus(Call("GET", "/local_a/k"), 200));  // other scopes stay
  EXPECT_TRUE(IsStatus(Call("DELETE", "/local_a/0"), 200));
  EXPECT_TRUE(IsStatus(Call("GET", "/local_a/k"), 404));
  // A new round of the scope counts afresh.
  ASSERT_TRUE(IsStatus(Call("PUT", "/global/k", "w"), 200));
  EXPECT_TRUE(IsStatus(Call("DELETE", "/global/1"), 200));
  EXPECT_EQ(BodyOf(Call("GET", "/global/k")), "w");
}

// In a scope of unknown size (ad hoc, from a client) DELETE removes the key.
TEST_F(GlooRendezvousTest, DeleteInAnUnsizedScopeRemovesTheKey) {
  rendezvous_.AllowHost("127.0.0.1");
  ASSERT_TRUE(IsStatus(Call("PUT", "/adhoc/a", "1"), 200));
  ASSERT_TRUE(IsStatus(Call("PUT", "/adhoc/b", "2"), 200));
  EXPECT_TRUE(IsStatus(Call("DELETE", "/adhoc/a"), 200));
  EXPECT_TRUE(IsStatus(Call("GET", "/adhoc/a"), 404));
  EXPECT_TRUE(IsStatus(Call("GET", "/adhoc/b"), 200));
  EXPECT_TRUE(IsStatus(Call("DELETE", "/nothing/here"), 200));
}

// Gloo's client carries no credential: only the job's hosts get a connection at all. 127.0.0.2
// stands for another host.
TEST_F(GlooRendezvousTest, OnlyTheJobsHostsAreServed) {
  EXPECT_EQ(Call("GET", "/global/k"), "") << "served before any host was allowed";
  rendezvous_.AllowHost("127.0.0.2");
  EXPECT_EQ(Call("PUT", "/global/k", "from an attacker"), "");
  EXPECT_TRUE(IsStatus(Call("PUT", "/global/k", "v", "127.0.0.2"), 200));
  rendezvous_.AllowHost("127.0.0.1");
  EXPECT_EQ(BodyOf(Call("GET", "/global/k")), "v");
}

TEST_F(GlooRendezvousTest, HostNamesAreResolved) {
  rendezvous_.AllowHost("localhost");
  EXPECT_TRUE(IsStatus(Call("GET", "/global/k"), 404));
  EXPECT_EQ(Call("GET", "/global/k", "", "127.0.0.2"), "");
}

TEST_F(GlooRendezvousTest, MalformedRequestsAreRefused) {
  rendezvous_.AllowHost("127.0.0.1");
  for (const char* path : {"/", "/global", "/global/", "//k", "/a/b/c", "global/k"}) {
    EXPECT_TRUE(IsStatus(Call("GET", path), 400)) << path;
  }
  EXPECT_TRUE(IsStatus(Call("POST", "/global/k", "v"), 405));
  const std::string huge(GlooRendezvous::kMaxValueBytes + 1, 'x');
  EXPECT_TRUE(IsStatus(Call("PUT", "/global/k", huge), 413));
  EXPECT_TRUE(IsStatus(Call("GET", "/global/k"), 404));
  const std::string largest(GlooRendezvous::kMaxValueBytes, 'x');
  EXPECT_TRUE(IsStatus(Call("PUT", "/global/k", largest), 200));
  EXPECT_EQ(BodyOf(Call("GET", "/global/k")).size(), largest.size());
}

// Values fill the store up to its bound and no further; replacing or clearing frees room.
TEST_F(GlooRendezvousTest, TheStoreIsBounded) {
  rendezvous_.AllowHost("127.0.0.1");
  const std::string mib(GlooRendezvous::kMaxValueBytes, 'x');
  const size_t fit = GlooRendezvous::kMaxTotalBytes / mib.size();
  for (size_t i = 0; i < fit; ++i) {
    ASSERT_TRUE(IsStatus(Call("PUT", "/s/" + std::to_string(i), mib), 200)) << i;
  }
  EXPECT_TRUE(IsStatus(Call("PUT", "/s/one-more", mib), 507));
  EXPECT_TRUE(IsStatus(Call("PUT", "/s/0", mib), 200));  // a replacement fits
  EXPECT_TRUE(IsStatus(Call("DELETE", "/s/1"), 200));
  EXPECT_TRUE(IsStatus(Call("PUT", "/s/one-more", mib), 200));
}

// A restarted gang meets afresh: Clear forgets every key and frees the store's room.
TEST_F(GlooRendezvousTest, ClearForgetsEveryKey) {
  rendezvous_.AllowHost("127.0.0.1");
  const std::string mib(GlooRendezvous::kMaxValueBytes, 'x');
  const size_t fit = GlooRendezvous::kMaxTotalBytes / mib.size();
  for (size_t i = 0; i < fit; ++i) {
    ASSERT_TRUE(IsStatus(Call("PUT", "/global/" + std::to_string(i), mib), 200)) << i;
  }
  rendezvous_.Clear();
  EXPECT_TRUE(IsStatus(Call("GET", "/global/0"), 404));
  EXPECT_TRUE(IsStatus(Call("PUT", "/global/new", mib), 200));
  EXPECT_EQ(BodyOf(Call("GET", "/global/new")).size(), mib.size());
}

}  // namespace
}  // namespace tony::am
