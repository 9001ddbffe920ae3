// DigestMd5Mechanism against the JDK's DIGEST-MD5 server, the implementation Hadoop's RPC server
// runs: the handshake and then messages both ways under auth-int and auth-conf (3des, and rc4
// where OpenSSL's legacy provider loads). Skipped where no `java` (17 or later) is on PATH.

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/strings.h"
#include "gtest/gtest.h"
#include "hadoop/sasl/digest_md5_mechanism.h"
#include "hadoop/sasl/digest_md5_test_server.h"

namespace tony::hadoop {
namespace {

bool JavaOnPath() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  for (std::string_view dir : Split(path, ':')) {
    if (!dir.empty() && access(StrCat(dir, "/java").c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::string FromHex(std::string_view hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  }
  return out;
}

// `java DigestMd5JavaServer.java qop password` with pipes to its stdin and stdout.
class JavaServer {
 public:
  JavaServer(const std::string& qop, const std::string& password) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      execlp("java", "java", TONY_DIGEST_MD5_JAVA_SERVER, qop.c_str(), password.c_str(), nullptr);
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
  }
  ~JavaServer() {
    if (in_ >= 0) close(in_);
    if (out_ >= 0) close(out_);
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }

  void Send(const std::string& word, std::string_view payload) {
    std::string line = StrCat(word, " ", digest_test::TestHex(payload), "\n");
    for (size_t done = 0; done < line.size();) {
      ssize_t n = write(in_, line.data() + done, line.size() - done);
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  }

  // The next line, or "" after 60 s (the JVM compiles the server on its first start).
  std::string ReadLine() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
      size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd fd{out_, POLLIN, 0};
      if (left.count() <= 0 || poll(&fd, 1, static_cast<int>(left.count())) <= 0) return "";
      char chunk[65536];
      ssize_t n = read(out_, chunk, sizeof(chunk));
      if (n <= 0) return "";
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  // The hex payload of a line "<word> <hex>[ ...]", or "" when the line is something else.
  std::string Expect(const std::string& word, std::string* rest = nullptr) {
    std::string line = ReadLine();
    EXPECT_TRUE(line.starts_with(word + " ")) << line;
    if (!line.starts_with(word + " ")) return "";
    std::string_view hex = std::string_view(line).substr(word.size() + 1);
    size_t space = hex.find(' ');
    if (rest != nullptr) *rest = space == std::string_view::npos ? "" : hex.substr(space + 1);
    return FromHex(hex.substr(0, space));
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
};

const Token kToken{std::string("\x00\x10ident\xfe", 8), std::string("\x9c\x01pass", 6),
                   "YARN_AM_RM_TOKEN", "127.0.0.1:8030"};

struct InteropCase {
  std::string server_qop;  // what the JDK server is configured with (Sasl.QOP)
  std::vector<DigestMd5Cipher> ciphers;
  SaslQop want;
};

TEST(DigestMd5JavaTest, InteroperatesWithTheJdkServer) {
  if (!JavaOnPath()) GTEST_SKIP() << "no java on PATH";
  std::vector<InteropCase> cases = {
      {"auth", {DigestMd5Cipher::k3Des}, SaslQop::kAuth},
      {"auth-int", {DigestMd5Cipher::k3Des}, SaslQop::kAuthInt},
      {"auth-conf", {DigestMd5Cipher::k3Des}, SaslQop::kAuthConf},
      // What hadoop.rpc.protection=privacy,integrity,authentication offers.
      {"auth-conf,auth-int,auth",
       {DigestMd5Cipher::k3Des, DigestMd5Cipher::kRc4},
       SaslQop::kAuthConf},
  };
  if (DigestMd5CipherAvailable(DigestMd5Cipher::kRc4)) {
    cases.push_back({"auth-conf", {DigestMd5Cipher::kRc4}, SaslQop::kAuthConf});
  }
  const std::vector<std::string> messages = {"a",
                                             "1234567",
                                             "12345678",
                                             std::string("\0\x01\xff\n binary", 11),
                                             std::string(3000, 'x'),
                                             std::string(65, 'y')};
  for (const InteropCase& c : cases) {
    SCOPED_TRACE(StrCat(c.server_qop, " cipher ", DigestMd5CipherName(c.ciphers.front())));
    JavaServer java(c.server_qop, DigestMd5Mechanism::Password(kToken));
    DigestMd5Options options;
    options.ciphers = c.ciphers;
    DigestMd5Mechanism mechanism(kToken, options);
    proto::SaslAuthOffer offer;
    offer.set_method("TOKEN");
    offer.set_mechanism("DIGEST-MD5");
    offer.set_protocol("");
    offer.set_server_id("default");
    ASSERT_TRUE(mechanism.Start(offer).ok());

    std::string challenge = java.Expect("CHALLENGE");
    ASSERT_FALSE(challenge.empty());
    absl::StatusOr<std::string> response = mechanism.Evaluate(challenge);
    ASSERT_TRUE(response.ok()) << response.status() << "\n" << challenge;
    java.Send("RESPONSE", *response);
    std::string negotiated;
    std::string rspauth = java.Expect("SUCCESS", &negotiated);
    ASSERT_FALSE(rspauth.empty()) << *response;
    absl::StatusOr<std::string> last = mechanism.Evaluate(rspauth);
    ASSERT_TRUE(last.ok()) << last.status();
    ASSERT_TRUE(mechanism.complete());
    ASSERT_EQ(mechanism.qop(), c.want);
    if (c.want == SaslQop::kAuth) {
      EXPECT_EQ(negotiated, "qop=auth");
      continue;
    }
    EXPECT_EQ(negotiated, c.want == SaslQop::kAuthInt ? "qop=auth-int" : "qop=auth-conf");
    for (int round = 0; round < 2; ++round) {
      for (const std::string& message : messages) {
        absl::StatusOr<std::string> token = mechanism.Wrap(message);
        ASSERT_TRUE(token.ok()) << token.status();
        java.Send("TOKEN", *token);
        std::string reply = java.Expect("TOKEN");
        ASSERT_FALSE(reply.empty()) << "the JDK refused tony's token, round " << round;
        absl::StatusOr<std::string> echoed = mechanism.Unwrap(reply);
        ASSERT_TRUE(echoed.ok()) << echoed.status();
        EXPECT_EQ(*echoed, "echo:" + message);
      }
    }
  }
}

}  // namespace
}  // namespace tony::hadoop
