// The libmicrohttpd helper of tony's HTTP servers, over loopback with a raw client
// (http_test_client.h): what every server gets from it, whatever its handler.

#include "common/http_server.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>

#include "common/http_test_client.h"

namespace tony {
namespace {

// A server that answers every GET with the path it was asked for, and refuses 127.0.0.2.
class HttpServerTest : public ::testing::Test {
 protected:
  HttpServerOptions Options() {
    HttpServerOptions options;
    options.name = "the test server";
    options.bind_host = "127.0.0.1";
    options.max_connections = 8;
    options.self = this;
    options.accept = [](void*, const sockaddr* peer, socklen_t) -> MHD_Result {
      const auto* in = reinterpret_cast<const sockaddr_in*>(peer);
      return in->sin_addr.s_addr == htonl(0x7f000002) ? MHD_NO : MHD_YES;
    };
    options.answer = [](void* self, MHD_Connection* connection, const char* url, const char*,
                        const char*, const char*, size_t* upload_size,
                        void** request) -> MHD_Result {
      if (!FirstCallOfRequest(request, upload_size)) return MHD_YES;
      auto* test = static_cast<HttpServerTest*>(self);
      {
        std::lock_guard lock(test->mu_);
        ++test->answered_;
      }
      return QueueOnce(connection, 200, MakeResponse(url, "text/plain")) ? MHD_YES : MHD_NO;
    };
    return options;
  }

  std::mutex mu_;
  int answered_ = 0;
  HttpServer server_;
};

TEST_F(HttpServerTest, AnswersWithHeadersThatKeepBrowsersFromCachingSniffingAndScripts) {
  absl::StatusOr<int> port = server_.Start(Options());
  ASSERT_TRUE(port.ok()) << port.status();
  EXPECT_GT(*port, 0);
  EXPECT_TRUE(server_.running());
  const std::string answer = http_test::Request(*port, "GET", "/some/page");
  EXPECT_TRUE(answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200")) << answer;
  for (const char* header :
       {"Content-Type: text/plain", "Cache-Control: no-store", "X-Content-Type-Options: nosniff",
        "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'"}) {
    EXPECT_NE(answer.find(header), std::string::npos) << header << " missing in\n" << answer;
  }
  EXPECT_TRUE(answer.ends_with("/some/page")) << answer;
  // A request's body is read and dropped; the request is answered once.
  const std::string posted = http_test::Request(*port, "POST", "/p", "127.0.0.1", "a body");
  EXPECT_TRUE(posted.ends_with("/p")) << posted;
  std::lock_guard lock(mu_);
  EXPECT_EQ(answered_, 2);
}

// "%00" would end the path early once unescaped: it is left as it came; the rest is unescaped.
TEST_F(HttpServerTest, AnEscapedNulIsLeftEscaped) {
  absl::StatusOr<int> port = server_.Start(Options());
  ASSERT_TRUE(port.ok()) << port.status();
  EXPECT_TRUE(
      http_test::Request(*port, "GET", "/status.json%00.html").ends_with("/status.json%00.html"));
  EXPECT_TRUE(http_test::Request(*port, "GET", "/a%20b").ends_with("/a b"));
}

TEST_F(HttpServerTest, APeerThePolicyRefusesGetsNoAnswer) {
  absl::StatusOr<int> port = server_.Start(Options());
  ASSERT_TRUE(port.ok()) << port.status();
  EXPECT_EQ(http_test::Request(*port, "GET", "/", "127.0.0.2"), "");
  std::lock_guard lock(mu_);
  EXPECT_EQ(answered_, 0);
}

TEST_F(HttpServerTest, StartsOnceOnAnAddressOfThisHostsThatIsFree) {
  HttpServerOptions options = Options();
  options.bind_host = "no-such-host.invalid";
  absl::StatusOr<int> bad = server_.Start(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("the test server cannot listen on 'no-such-host.invalid'"),
            std::string::npos)
      << bad.status();
  EXPECT_FALSE(server_.running());

  absl::StatusOr<int> port = server_.Start(Options());
  ASSERT_TRUE(port.ok()) << port.status();
  EXPECT_EQ(server_.Start(Options()).status().code(), absl::StatusCode::kFailedPrecondition);
  HttpServer other;
  options = Options();
  options.port = *port;
  absl::StatusOr<int> taken = other.Start(options);
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.status().message().find("in use"), std::string::npos) << taken.status();

  server_.Stop();
  server_.Stop();  // idempotent
  EXPECT_FALSE(server_.running());
  EXPECT_EQ(http_test::Request(*port, "GET", "/"), "");
}

}  // namespace
}  // namespace tony
