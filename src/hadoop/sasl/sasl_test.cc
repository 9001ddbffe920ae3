#include "hadoop/sasl/sasl.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <string>

#include "common/strings.h"
#include "hadoop/sasl/digest_md5_mechanism.h"
#include "hadoop/sasl/digest_md5_test_server.h"

namespace tony::hadoop {
namespace {

// MD5 (RFC 1321), written here so that the expected DIGEST-MD5 values do not come from the
// library under test.
std::string Md5(std::string_view data) {
  static constexpr uint32_t kShift[64] = {
      7,  12, 17, 22, 7,  12, 17, 22, 7,  12, 17, 22, 7,  12, 17, 22, 5,  9,  14, 20, 5,  9,
      14, 20, 5,  9,  14, 20, 5,  9,  14, 20, 4,  11, 16, 23, 4,  11, 16, 23, 4,  11, 16, 23,
      4,  11, 16, 23, 6,  10, 15, 21, 6,  10, 15, 21, 6,  10, 15, 21, 6,  10, 15, 21};
  uint32_t k[64];
  for (int i = 0; i < 64; ++i) {
    k[i] = static_cast<uint32_t>(static_cast<uint64_t>(std::abs(std::sin(i + 1.0)) * 4294967296.0));
  }
  std::string message(data);
  uint64_t bit_length = static_cast<uint64_t>(data.size()) * 8;
  message.push_back(static_cast<char>(0x80));
  while (message.size() % 64 != 56) message.push_back('\0');
  for (int i = 0; i < 8; ++i) message.push_back(static_cast<char>(bit_length >> (8 * i)));
  uint32_t a0 = 0x67452301, b0 = 0xefcdab89, c0 = 0x98badcfe, d0 = 0x10325476;
  for (size_t chunk = 0; chunk < message.size(); chunk += 64) {
    uint32_t m[16];
    for (int i = 0; i < 16; ++i) {
      m[i] = 0;
      for (int j = 3; j >= 0; --j) {
        m[i] = (m[i] << 8) | static_cast<uint8_t>(message[chunk + 4 * i + j]);
      }
    }
    uint32_t a = a0, b = b0, c = c0, d = d0;
    for (int i = 0; i < 64; ++i) {
      uint32_t f;
      int g;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) % 16;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) % 16;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) % 16;
      }
      f = f + a + k[i] + m[g];
      a = d;
      d = c;
      c = b;
      b = b + ((f << kShift[i]) | (f >> (32 - kShift[i])));
    }
    a0 += a;
    b0 += b;
    c0 += c;
    d0 += d;
  }
  std::string digest;
  for (uint32_t word : {a0, b0, c0, d0}) {
    for (int i = 0; i < 4; ++i) digest.push_back(static_cast<char>(word >> (8 * i)));
  }
  return digest;
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out.push_back(kDigits[static_cast<uint8_t>(c) >> 4]);
    out.push_back(kDigits[static_cast<uint8_t>(c) & 15]);
  }
  return out;
}

// key=value pairs of a DIGEST-MD5 message, quotes removed.
std::map<std::string, std::string> ParseDirectives(std::string_view text) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ',' || text[i] == ' ')) ++i;
    size_t eq = text.find('=', i);
    if (eq == std::string_view::npos) break;
    std::string key(text.substr(i, eq - i));
    i = eq + 1;
    std::string value;
    if (i < text.size() && text[i] == '"') {
      ++i;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        value.push_back(text[i++]);
      }
      ++i;
    } else {
      while (i < text.size() && text[i] != ',') value.push_back(text[i++]);
    }
    out[key] = value;
  }
  return out;
}

// RFC 2831 section 2.1.2.1, without authzid: the response (a2_prefix "AUTHENTICATE") or the
// server's rspauth (a2_prefix "").
std::string ExpectedDigest(const std::string& user, const std::string& realm,
                           const std::string& password, const std::string& nonce,
                           const std::string& cnonce, const std::string& nc,
                           const std::string& digest_uri, const std::string& a2_prefix) {
  std::string a1 = Md5(StrCat(user, ":", realm, ":", password)) + StrCat(":", nonce, ":", cnonce);
  std::string a2 = StrCat(a2_prefix, ":", digest_uri);
  return Hex(Md5(StrCat(Hex(Md5(a1)), ":", nonce, ":", nc, ":", cnonce, ":auth:", Hex(Md5(a2)))));
}

proto::SaslAuthOffer TokenOffer() {
  proto::SaslAuthOffer offer;
  offer.set_method("TOKEN");
  offer.set_mechanism("DIGEST-MD5");
  offer.set_protocol("");
  offer.set_server_id("default");
  return offer;
}

const Token kToken{std::string("\x00\x10ident\xfe", 8), std::string("\x9c\x01pass", 6),
                   "YARN_AM_RM_TOKEN", "127.0.0.1:8030"};

TEST(Md5Test, MatchesRfc1321Vectors) {
  EXPECT_EQ(Hex(Md5("")), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Hex(Md5("abc")), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(Hex(Md5("12345678901234567890123456789012345678901234567890123456789012345678901234567"
                    "890")),
            "57edf4a22be3c955ac49da2e2107b67a");
}

TEST(Base64Test, EncodesWithPadding) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode(std::string("\xff\xfe", 2)), "//4=");
  EXPECT_EQ(DigestMd5Mechanism::UserName(kToken), Base64Encode(kToken.identifier));
}

TEST(DigestMd5Test, AnswersAChallengeWithTheRfc2831Digest) {
  DigestMd5Mechanism mechanism(kToken);
  ASSERT_TRUE(mechanism.Start(TokenOffer()).ok());
  const std::string nonce = "OA6MG9tEQGm2hh";
  absl::StatusOr<std::string> response = mechanism.Evaluate(StrCat(
      "realm=\"default\",nonce=\"", nonce, "\",qop=\"auth\",charset=utf-8,algorithm=md5-sess"));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_FALSE(mechanism.complete());

  std::map<std::string, std::string> d = ParseDirectives(*response);
  std::string user = Base64Encode(kToken.identifier);
  std::string password = Base64Encode(kToken.password);
  EXPECT_EQ(d["username"], user);
  EXPECT_EQ(d["realm"], "default");
  EXPECT_EQ(d["nonce"], nonce);
  EXPECT_EQ(d["nc"], "00000001");
  EXPECT_EQ(d["qop"], "auth");
  EXPECT_EQ(d["digest-uri"], "/default");
  EXPECT_EQ(d["charset"], "utf-8");
  EXPECT_EQ(d.count("authzid"), 0u);
  ASSERT_FALSE(d["cnonce"].empty());
  EXPECT_EQ(d["response"], ExpectedDigest(user, "default", password, nonce, d["cnonce"], "00000001",
                                          "/default", "AUTHENTICATE"));

  // The server proves it knows the password too; the mechanism checks and then completes.
  std::string rspauth =
      ExpectedDigest(user, "default", password, nonce, d["cnonce"], "00000001", "/default", "");
  absl::StatusOr<std::string> final_step = mechanism.Evaluate(StrCat("rspauth=", rspauth));
  ASSERT_TRUE(final_step.ok()) << final_step.status();
  EXPECT_TRUE(final_step->empty());
  EXPECT_TRUE(mechanism.complete());
}

TEST(DigestMd5Test, RejectsAServerThatDoesNotKnowThePassword) {
  DigestMd5Mechanism mechanism(kToken);
  ASSERT_TRUE(mechanism.Start(TokenOffer()).ok());
  ASSERT_TRUE(mechanism
                  .Evaluate("realm=\"default\",nonce=\"n\",qop=\"auth\",charset=utf-8,"
                            "algorithm=md5-sess")
                  .ok());
  absl::StatusOr<std::string> bad = mechanism.Evaluate(StrCat("rspauth=", std::string(32, '0')));
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_FALSE(mechanism.complete());
}

TEST(DigestMd5Test, PicksIntegrityWhenTheServerRequiresIt) {
  DigestMd5Mechanism mechanism(kToken);
  ASSERT_TRUE(mechanism.Start(TokenOffer()).ok());
  absl::StatusOr<std::string> response = mechanism.Evaluate(
      "realm=\"default\",nonce=\"n\",qop=\"auth-int\",charset=utf-8,algorithm=md5-sess");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(ParseDirectives(*response)["qop"], "auth-int");
  EXPECT_EQ(mechanism.qop(), SaslQop::kAuthInt);
}

TEST(DigestMd5Test, RejectsGarbageChallenge) {
  DigestMd5Mechanism mechanism(kToken);
  ASSERT_TRUE(mechanism.Start(TokenOffer()).ok());
  EXPECT_FALSE(mechanism.Evaluate("this is not a challenge").ok());
}

// The server side of the handshake in memory, with the test's own DIGEST-MD5 server as the peer.
class DigestServerTransport final : public SaslTransport {
 public:
  struct Options {
    std::string password;            // what the server believes the token password is (base64)
    bool challenge_in_offer = true;  // Hadoop's servers put the first challenge in NEGOTIATE
    bool simple_server = false;      // answer NEGOTIATE with SUCCESS (security off)
    bool offer_kerberos_first = true;
    std::string qop = "auth";  // what the server offers (hadoop.rpc.protection)
    std::string cipher = "";
  };

  explicit DigestServerTransport(Options options)
      : options_(std::move(options)),
        server_({.password = options_.password, .qop = options_.qop, .cipher = options_.cipher}) {}

  absl::Status Send(const proto::RpcSasl& message) override {
    sent.push_back(message);
    proto::RpcSasl reply;
    switch (message.state()) {
      case proto::SASL_NEGOTIATE: {
        if (options_.simple_server) {
          reply.set_state(proto::SASL_SUCCESS);
          break;
        }
        reply.set_state(proto::SASL_NEGOTIATE);
        if (options_.offer_kerberos_first) {
          proto::SaslAuthOffer* kerberos = reply.add_auths();
          kerberos->set_method("KERBEROS");
          kerberos->set_mechanism("GSSAPI");
          kerberos->set_protocol("rm");
          kerberos->set_server_id("host.example.com");
        }
        proto::SaslAuthOffer* token = reply.add_auths();
        *token = TokenOffer();
        if (options_.challenge_in_offer) token->set_challenge(server_.Challenge());
        break;
      }
      case proto::SASL_INITIATE:
      case proto::SASL_RESPONSE: {
        if (message.state() == proto::SASL_INITIATE && !options_.challenge_in_offer) {
          reply.set_state(proto::SASL_CHALLENGE);
          reply.set_token(server_.Challenge());
          break;
        }
        absl::StatusOr<std::string> rspauth = server_.Verify(message.token());
        if (!rspauth.ok()) {
          return absl::PermissionDeniedError("javax.security.sasl.SaslException: bad digest");
        }
        reply.set_state(proto::SASL_SUCCESS);
        reply.set_token(*rspauth);
        break;
      }
      default:
        return absl::InvalidArgumentError("unexpected client state");
    }
    replies_.push_back(reply);
    return absl::OkStatus();
  }

  absl::StatusOr<proto::RpcSasl> Receive() override {
    if (replies_.empty()) return absl::UnavailableError("no reply queued");
    proto::RpcSasl reply = replies_.front();
    replies_.pop_front();
    return reply;
  }

  digest_test::DigestMd5TestServer& server() { return server_; }
  std::vector<proto::RpcSasl> sent;

 private:
  Options options_;
  digest_test::DigestMd5TestServer server_;
  std::deque<proto::RpcSasl> replies_;
};

TEST(SaslHandshakeTest, AuthenticatesWithTokenAgainstDigestServer) {
  DigestServerTransport server({.password = DigestMd5Mechanism::Password(kToken)});
  DigestMd5Mechanism mechanism(kToken);
  SaslMechanism* used = nullptr;
  absl::StatusOr<SaslOutcome> outcome = RunSaslHandshake(server, {&mechanism}, "rm:8030", &used);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(*outcome, SaslOutcome::kAuthenticated);
  EXPECT_EQ(used, &mechanism);
  EXPECT_TRUE(mechanism.complete());
  ASSERT_EQ(server.sent.size(), 2u);
  EXPECT_EQ(server.sent[0].state(), proto::SASL_NEGOTIATE);
  const proto::RpcSasl& initiate = server.sent[1];
  EXPECT_EQ(initiate.state(), proto::SASL_INITIATE);
  ASSERT_EQ(initiate.auths_size(), 1);
  EXPECT_EQ(initiate.auths(0).method(), "TOKEN");
  EXPECT_EQ(initiate.auths(0).mechanism(), "DIGEST-MD5");
  EXPECT_EQ(initiate.auths(0).server_id(), "default");
  EXPECT_FALSE(initiate.auths(0).has_challenge());
  EXPECT_NE(initiate.token().find("digest-uri=\"/default\""), std::string::npos)
      << initiate.token();
}

TEST(SaslHandshakeTest, HandlesAChallengeRoundWhenTheOfferHasNoChallenge) {
  DigestServerTransport server(
      {.password = DigestMd5Mechanism::Password(kToken), .challenge_in_offer = false});
  DigestMd5Mechanism mechanism(kToken);
  absl::StatusOr<SaslOutcome> outcome = RunSaslHandshake(server, {&mechanism}, "rm:8030");
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(*outcome, SaslOutcome::kAuthenticated);
  ASSERT_EQ(server.sent.size(), 3u);
  EXPECT_EQ(server.sent[1].state(), proto::SASL_INITIATE);
  EXPECT_TRUE(server.sent[1].token().empty());
  EXPECT_EQ(server.sent[2].state(), proto::SASL_RESPONSE);
}

TEST(SaslHandshakeTest, WrongPasswordFails) {
  DigestServerTransport server({.password = "bm90IHRoZSBwYXNzd29yZA=="});
  DigestMd5Mechanism mechanism(kToken);
  absl::StatusOr<SaslOutcome> outcome = RunSaslHandshake(server, {&mechanism}, "rm:8030");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_FALSE(mechanism.complete());
}

TEST(SaslHandshakeTest, SwitchesToSimpleWhenTheServerHasNoSecurity) {
  DigestServerTransport server({.password = "x", .simple_server = true});
  DigestMd5Mechanism mechanism(kToken);
  absl::StatusOr<SaslOutcome> outcome = RunSaslHandshake(server, {&mechanism}, "rm:8030");
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(*outcome, SaslOutcome::kSwitchedToSimple);
}

TEST(SaslHandshakeTest, NoUsableMechanismNamesTheOffers) {
  DigestServerTransport server({.password = "x"});
  absl::StatusOr<SaslOutcome> outcome = RunSaslHandshake(server, {}, "rm:8030");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kPermissionDenied);
  std::string_view message = ToStd(outcome.status().message());
  EXPECT_NE(message.find("KERBEROS/GSSAPI, TOKEN/DIGEST-MD5"), std::string_view::npos) << message;
  EXPECT_NE(message.find("rm:8030"), std::string_view::npos);
}

TEST(SaslHandshakeTest, PrivacyHandshakeLeavesAnEncryptingMechanism) {
  DigestServerTransport server({.password = DigestMd5Mechanism::Password(kToken),
                                .qop = "auth-conf,auth-int,auth",
                                .cipher = "des,3des,rc4-40"});
  DigestMd5Mechanism mechanism(kToken);
  SaslMechanism* used = nullptr;
  absl::StatusOr<SaslOutcome> outcome = RunSaslHandshake(server, {&mechanism}, "rm:8030", &used);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  ASSERT_EQ(used, &mechanism);
  EXPECT_EQ(used->qop(), SaslQop::kAuthConf);
  EXPECT_EQ(server.server().cipher(), "3des");
  absl::StatusOr<std::string> token = used->Wrap("getApplications");
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(token->find("getApplications"), std::string::npos);
  absl::StatusOr<std::string> seen = server.server().Unwrap(*token);
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(*seen, "getApplications");
  absl::StatusOr<std::string> answer = used->Unwrap(server.server().Wrap("applications: none"));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, "applications: none");
}

}  // namespace
}  // namespace tony::hadoop
