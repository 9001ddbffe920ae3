#include "hadoop/sasl/digest_md5_mechanism.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/strings.h"
#include "hadoop/sasl/digest_md5_challenge.h"
#include "hadoop/sasl/digest_md5_test_server.h"

namespace tony::hadoop {
namespace {

using digest_test::DigestMd5TestServer;
using digest_test::TestHex;
using digest_test::TestMd5;
using digest_test::TestParseDirectives;

proto::SaslAuthOffer Offer(const std::string& protocol, const std::string& server_id) {
  proto::SaslAuthOffer offer;
  offer.set_method("TOKEN");
  offer.set_mechanism("DIGEST-MD5");
  offer.set_protocol(protocol);
  offer.set_server_id(server_id);
  return offer;
}

DigestMd5Options FixedCnonce(const std::string& cnonce) {
  DigestMd5Options options;
  options.cnonce = [cnonce]() -> absl::StatusOr<std::string> { return cnonce; };
  return options;
}

bool Rc4Available() { return DigestMd5CipherAvailable(DigestMd5Cipher::kRc4); }

// RFC 2831 section 4, the IMAP example.
TEST(DigestMd5MechanismTest, ReproducesTheRfc2831Example) {
  DigestMd5Mechanism mechanism("chris", "secret", FixedCnonce("OA6MHXh6VqTrRk"));
  ASSERT_TRUE(mechanism.Start(Offer("imap", "elwood.innosoft.com")).ok());
  absl::StatusOr<std::string> response = mechanism.Evaluate(
      "realm=\"elwood.innosoft.com\",nonce=\"OA6MG9tEQGm2hh\",qop=\"auth\","
      "algorithm=md5-sess,charset=utf-8");
  ASSERT_TRUE(response.ok()) << response.status();
  std::map<std::string, std::string> d = TestParseDirectives(*response);
  EXPECT_EQ(d["charset"], "utf-8");
  EXPECT_EQ(d["username"], "chris");
  EXPECT_EQ(d["realm"], "elwood.innosoft.com");
  EXPECT_EQ(d["nonce"], "OA6MG9tEQGm2hh");
  EXPECT_EQ(d["nc"], "00000001");
  EXPECT_EQ(d["cnonce"], "OA6MHXh6VqTrRk");
  EXPECT_EQ(d["digest-uri"], "imap/elwood.innosoft.com");
  EXPECT_EQ(d["qop"], "auth");
  EXPECT_EQ(d["maxbuf"], "65536");
  EXPECT_EQ(d.count("cipher"), 0u);
  EXPECT_EQ(d["response"], "d388dad90d4bbd760a152321f2143af7");

  absl::StatusOr<std::string> last = mechanism.Evaluate("rspauth=ea40f60335c427b5527b84dbabcdfffd");
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_TRUE(last->empty());
  EXPECT_TRUE(mechanism.complete());
  EXPECT_EQ(mechanism.qop(), SaslQop::kAuth);
  EXPECT_EQ(mechanism.max_wrap_size(), 0u);
  EXPECT_EQ(mechanism.Wrap("x").status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(DigestMd5MechanismTest, RandomCnoncesDiffer) {
  std::vector<std::string> cnonces;
  for (int i = 0; i < 2; ++i) {
    DigestMd5Mechanism mechanism("u", "p", {});
    ASSERT_TRUE(mechanism.Start(Offer("", "default")).ok());
    absl::StatusOr<std::string> response =
        mechanism.Evaluate("nonce=\"n\",algorithm=md5-sess,qop=\"auth\"");
    ASSERT_TRUE(response.ok()) << response.status();
    cnonces.push_back(TestParseDirectives(*response)["cnonce"]);
    EXPECT_GE(cnonces.back().size(), 16u);
  }
  EXPECT_NE(cnonces[0], cnonces[1]);
}

struct SelectionCase {
  std::string qop;
  std::string cipher;  // "" for no cipher directive
  std::string want_qop;
  std::string want_cipher;
};

std::string SelectionChallenge(const SelectionCase& c) {
  std::string challenge = StrCat("realm=\"default\",nonce=\"n\",qop=\"", c.qop, "\"");
  if (!c.cipher.empty()) challenge += StrCat(",cipher=\"", c.cipher, "\"");
  return challenge + ",charset=utf-8,algorithm=md5-sess";
}

TEST(DigestMd5MechanismTest, PicksTheStrongestProtectionAndCipherOffered) {
  std::vector<SelectionCase> cases = {
      {"auth", "", "auth", ""},
      {"auth,auth-int", "", "auth-int", ""},
      {"auth-int,auth", "", "auth-int", ""},
      {"auth,auth-int,auth-conf", "rc4-40,rc4-56,rc4,des,3des", "auth-conf", "3des"},
      {"auth-conf", "3des,rc4", "auth-conf", "3des"},
      // Unknown qop values and ciphers are ignored; a cipher tony lacks falls back to auth-int.
      {"auth-int,auth-conf,x-future", "des,rc4-40", "auth-int", ""},
      {"auth-conf,auth-int", "", "auth-int", ""},
      {"AUTH-CONF", "3DES", "auth-conf", "3des"},
  };
  if (Rc4Available()) cases.push_back({"auth-conf", "des,rc4", "auth-conf", "rc4"});
  for (const SelectionCase& c : cases) {
    SCOPED_TRACE(SelectionChallenge(c));
    DigestMd5Mechanism mechanism("u", "p", FixedCnonce("c"));
    ASSERT_TRUE(mechanism.Start(Offer("", "default")).ok());
    absl::StatusOr<std::string> response = mechanism.Evaluate(SelectionChallenge(c));
    ASSERT_TRUE(response.ok()) << response.status();
    std::map<std::string, std::string> d = TestParseDirectives(*response);
    EXPECT_EQ(d["qop"], c.want_qop);
    EXPECT_EQ(d["cipher"], c.want_cipher);
  }
}

TEST(DigestMd5MechanismTest, RefusesAServerOfferingNothingTonySupports) {
  for (const SelectionCase& c :
       std::vector<SelectionCase>{{"auth-conf", "des,rc4-40,rc4-56", "", ""},
                                  {"auth-conf", "", "", ""},
                                  {"x-other", "", "", ""}}) {
    SCOPED_TRACE(SelectionChallenge(c));
    DigestMd5Mechanism mechanism("u", "p", FixedCnonce("c"));
    ASSERT_TRUE(mechanism.Start(Offer("", "default")).ok());
    absl::StatusOr<std::string> response = mechanism.Evaluate(SelectionChallenge(c));
    ASSERT_FALSE(response.ok());
    EXPECT_EQ(response.status().code(), absl::StatusCode::kFailedPrecondition);
    std::string_view message = ToStd(response.status().message());
    EXPECT_NE(message.find("the server offers no protection tony supports (qop " + c.qop),
              std::string_view::npos)
        << message;
    if (!c.cipher.empty()) {
      EXPECT_NE(message.find(c.cipher), std::string_view::npos) << message;
    }
    EXPECT_FALSE(mechanism.complete());
    EXPECT_FALSE(mechanism.Evaluate("rspauth=00000000000000000000000000000000").ok());
  }
}

TEST(DigestMd5MechanismTest, ServerIdDefaultsAndRealmIsTheFirstNamed) {
  DigestMd5Mechanism mechanism("u", "p", FixedCnonce("c"));
  proto::SaslAuthOffer offer = Offer("", "x");
  offer.clear_server_id();
  ASSERT_TRUE(mechanism.Start(offer).ok());
  absl::StatusOr<std::string> response = mechanism.Evaluate(
      "realm=\"first\",realm=\"second\",nonce=\"n\",qop=\"auth\",algorithm=md5-sess");
  ASSERT_TRUE(response.ok()) << response.status();
  std::map<std::string, std::string> d = TestParseDirectives(*response);
  EXPECT_EQ(d["digest-uri"], "/default");
  EXPECT_EQ(d["realm"], "first");
  // Without charset=utf-8 from the server the client must not claim it.
  EXPECT_EQ(d.count("charset"), 0u);
}

TEST(DigestMd5MechanismTest, QuotesAndHashesRealmsAsTheRfcSays) {
  // A realm with a quote and a backslash comes back escaped.
  {
    DigestMd5Mechanism mechanism("u", "p", FixedCnonce("c"));
    ASSERT_TRUE(mechanism.Start(Offer("", "default")).ok());
    absl::StatusOr<std::string> response = mechanism.Evaluate(
        R"(realm="a\"b\\c", nonce="n", qop="auth", algorithm=md5-sess, unknown="ignored")");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_NE(response->find(R"(realm="a\"b\\c")"), std::string::npos) << *response;
  }
  // With charset=utf-8, a realm within ISO 8859-1 is hashed in ISO 8859-1 (RFC 2831 2.1.2.1).
  const std::string utf8_realm = "caf\xc3\xa9";
  DigestMd5Mechanism mechanism("u", "p", FixedCnonce("c"));
  ASSERT_TRUE(mechanism.Start(Offer("", "default")).ok());
  absl::StatusOr<std::string> response = mechanism.Evaluate(StrCat(
      "realm=\"", utf8_realm, "\",nonce=\"n\",qop=\"auth\",charset=utf-8,algorithm=md5-sess"));
  ASSERT_TRUE(response.ok()) << response.status();
  std::map<std::string, std::string> d = TestParseDirectives(*response);
  EXPECT_EQ(d["realm"], utf8_realm);
  std::string ha1 = TestMd5(StrCat(TestMd5("u:caf\xe9:p"), ":n:c"));
  EXPECT_EQ(d["response"], TestHex(TestMd5(StrCat(TestHex(ha1), ":n:00000001:c:auth:",
                                                  TestHex(TestMd5("AUTHENTICATE:/default"))))));

  // Each of user name, realm and password on its own: a user name beyond U+00FF stays UTF-8
  // while the realm still goes to ISO 8859-1.
  const std::string cjk_user = "\xe7\x94\xa8";
  DigestMd5Mechanism cjk(cjk_user, "p", FixedCnonce("c"));
  ASSERT_TRUE(cjk.Start(Offer("", "default")).ok());
  response = cjk.Evaluate(StrCat("realm=\"", utf8_realm,
                                 "\",nonce=\"n\",qop=\"auth\",charset=utf-8,algorithm=md5-sess"));
  ASSERT_TRUE(response.ok()) << response.status();
  ha1 = TestMd5(StrCat(TestMd5(StrCat(cjk_user, ":caf\xe9:p")), ":n:c"));
  EXPECT_EQ(TestParseDirectives(*response)["response"],
            TestHex(TestMd5(StrCat(
                TestHex(ha1), ":n:00000001:c:auth:", TestHex(TestMd5("AUTHENTICATE:/default"))))));
}

TEST(DigestMd5MechanismTest, RefusesMalformedChallengesWithAClearError) {
  const std::vector<std::string> bad = {
      "",
      "this is not a challenge",
      "nonce=\"n\",qop=\"auth\"",                                      // no algorithm
      "realm=\"r\",qop=\"auth\",algorithm=md5-sess",                   // no nonce
      "nonce=\"\",algorithm=md5-sess",                                 // empty nonce
      "nonce=\"n\",algorithm=md5",                                     // not md5-sess
      "nonce=\"n\",nonce=\"m\",algorithm=md5-sess",                    // duplicate nonce
      "nonce=\"n\",qop=\"auth\",qop=\"auth-int\",algorithm=md5-sess",  // duplicate qop
      "nonce=\"n\",algorithm=md5-sess,algorithm=md5-sess",             // duplicate algorithm
      "nonce=\"n\",qop=\"\",algorithm=md5-sess",                       // empty qop list
      "nonce=\"n\",qop=\" , \",algorithm=md5-sess",
      "nonce=\"n\",maxbuf=1024,maxbuf=2048,algorithm=md5-sess",
      "nonce=\"n\",cipher=\"3des\",cipher=\"rc4\",algorithm=md5-sess",
      "nonce=\"n\",charset=utf-8,charset=utf-8,algorithm=md5-sess",
      "nonce=\"n\",maxbuf=abc,algorithm=md5-sess",
      "nonce=\"n\",maxbuf=16,algorithm=md5-sess",
      "nonce=\"n\",maxbuf=16777216,algorithm=md5-sess",
      "nonce=\"n\",maxbuf=99999999999999999999999,algorithm=md5-sess",
      "nonce=\"n\",charset=iso-8859-1,algorithm=md5-sess",
      "nonce=\"n,algorithm=md5-sess",  // unterminated quote
      "nonce=\"n\\",                   // escape at the end
      "=\"n\",algorithm=md5-sess",
      "nonce=,algorithm=md5-sess",
      "nonce\"n\",algorithm=md5-sess",
      "nonce=\"n\" algorithm=md5-sess",
      std::string("nonce=\"n\x01\",algorithm=md5-sess"),
      std::string("nonce=\"n\",algorithm=md5-sess,\0", 30),
      StrCat("nonce=\"", std::string(3000, 'n'), "\",algorithm=md5-sess"),
  };
  for (const std::string& challenge : bad) {
    SCOPED_TRACE(challenge.substr(0, 80));
    DigestMd5Mechanism mechanism("u", "p", FixedCnonce("c"));
    ASSERT_TRUE(mechanism.Start(Offer("", "default")).ok());
    absl::StatusOr<std::string> response = mechanism.Evaluate(challenge);
    if (challenge.empty()) {
      // An empty challenge asks for the initial response, which DIGEST-MD5 does not have.
      ASSERT_TRUE(response.ok());
      EXPECT_TRUE(response->empty());
      continue;
    }
    ASSERT_FALSE(response.ok());
    EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
    std::string_view message = ToStd(response.status().message());
    EXPECT_TRUE(message.starts_with("DIGEST-MD5: ")) << message;
    EXPECT_EQ(message.find('\n'), std::string_view::npos) << message;
  }
}

TEST(DigestMd5ChallengeTest, ParsesTokensQuotedStringsAndLists) {
  absl::StatusOr<DigestMd5Challenge> c = ParseDigestMd5Challenge(
      " , Realm = \"r1\" ,, realm=r2, NONCE=\"a\\\"b\", qop=\"auth, auth-conf\",\r\n"
      " cipher=\"3des , rc4\", maxbuf=4096, stale=true, charset=UTF-8, future=\"x,y\", "
      "algorithm=MD5-SESS");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->realms, (std::vector<std::string>{"r1", "r2"}));
  EXPECT_EQ(c->nonce, "a\"b");
  EXPECT_EQ(c->qops, (std::vector<std::string>{"auth", "auth-conf"}));
  EXPECT_EQ(c->ciphers, (std::vector<std::string>{"3des", "rc4"}));
  EXPECT_EQ(c->maxbuf, 4096u);
  EXPECT_TRUE(c->utf8);

  absl::StatusOr<DigestMd5Challenge> defaults =
      ParseDigestMd5Challenge("nonce=n,algorithm=md5-sess");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_TRUE(defaults->realms.empty());
  EXPECT_EQ(defaults->qops, (std::vector<std::string>{"auth"}));
  EXPECT_EQ(defaults->maxbuf, kDefaultDigestMd5MaxBuf);
  EXPECT_FALSE(defaults->utf8);
}

TEST(DigestMd5ChallengeTest, ResponseAuthNeedsOneHexRspauth) {
  EXPECT_EQ(*ParseDigestMd5ResponseAuth("rspauth=EA40F60335C427B5527B84DBABCDFFFD"),
            "ea40f60335c427b5527b84dbabcdfffd");
  EXPECT_FALSE(ParseDigestMd5ResponseAuth("").ok());
  EXPECT_FALSE(ParseDigestMd5ResponseAuth("rspauth=xyz").ok());
  EXPECT_FALSE(ParseDigestMd5ResponseAuth("rspauth=ea40f60335c427b5527b84dbabcdfffd0").ok());
  EXPECT_FALSE(ParseDigestMd5ResponseAuth("rspauth=ea40f60335c427b5527b84dbabcdfffd,"
                                          "rspauth=ea40f60335c427b5527b84dbabcdfffd")
                   .ok());
}

// A handshake against the test's server; the mechanism then holds the agreed security layer.
struct Session {
  explicit Session(const std::string& qop, const std::string& cipher, size_t maxbuf = 0)
      : server({.password = "secret", .qop = qop, .cipher = cipher, .maxbuf = maxbuf}),
        mechanism("chris", "secret", {}) {
    EXPECT_TRUE(mechanism.Start(Offer("", "default")).ok());
    absl::StatusOr<std::string> response = mechanism.Evaluate(server.Challenge());
    EXPECT_TRUE(response.ok()) << response.status();
    absl::StatusOr<std::string> rspauth = server.Verify(response.value_or(""));
    EXPECT_TRUE(rspauth.ok()) << rspauth.status();
    absl::StatusOr<std::string> done = mechanism.Evaluate(rspauth.value_or(""));
    EXPECT_TRUE(done.ok()) << done.status();
    EXPECT_TRUE(mechanism.complete());
  }
  DigestMd5TestServer server;
  DigestMd5Mechanism mechanism;
};

struct LayerCase {
  std::string qop;
  std::string cipher;
  SaslQop want;
};

std::vector<LayerCase> LayerCases() {
  std::vector<LayerCase> cases = {{"auth-int", "", SaslQop::kAuthInt},
                                  {"auth-conf", "3des", SaslQop::kAuthConf}};
  if (Rc4Available()) cases.push_back({"auth-conf", "rc4", SaslQop::kAuthConf});
  return cases;
}

TEST(DigestMd5SecurityLayerTest, ExchangesMessagesBothWaysWithTheServer) {
  const std::vector<std::string> messages = {"",
                                             "a",
                                             "12345",
                                             "123456",
                                             "1234567",
                                             "0123456789abcdef",
                                             std::string(1000, 'x'),
                                             std::string("\0\xff binary\n", 10)};
  for (const LayerCase& c : LayerCases()) {
    SCOPED_TRACE(c.qop + " " + c.cipher);
    Session s(c.qop, c.cipher);
    ASSERT_EQ(s.mechanism.qop(), c.want);
    EXPECT_EQ(s.server.cipher(), c.cipher);
    for (int round = 0; round < 3; ++round) {
      for (const std::string& message : messages) {
        absl::StatusOr<std::string> token = s.mechanism.Wrap(message);
        ASSERT_TRUE(token.ok()) << token.status();
        if (c.qop == "auth-int") {
          EXPECT_EQ(token->size(), message.size() + 16);
          EXPECT_EQ(token->substr(0, message.size()), message);
        } else {
          if (message.size() >= 5) {
            EXPECT_EQ(token->find(message), std::string::npos);
          }
          if (c.cipher == "3des") {
            EXPECT_EQ((token->size() - 6) % 8, 0u);
          }
        }
        absl::StatusOr<std::string> at_server = s.server.Unwrap(*token);
        ASSERT_TRUE(at_server.ok()) << at_server.status() << " round " << round;
        EXPECT_EQ(*at_server, message);

        absl::StatusOr<std::string> back = s.mechanism.Unwrap(s.server.Wrap(message + "!"));
        ASSERT_TRUE(back.ok()) << back.status() << " round " << round;
        EXPECT_EQ(*back, message + "!");
      }
    }
  }
}

TEST(DigestMd5SecurityLayerTest, RefusesTamperedTokensAndStaysFailed) {
  for (const LayerCase& c : LayerCases()) {
    SCOPED_TRACE(c.qop + " " + c.cipher);
    // Each byte of a token, flipped, is refused: MAC, ciphertext, message type, sequence number.
    Session reference(c.qop, c.cipher);
    const size_t size = reference.server.Wrap("hello, world").size();
    for (size_t i = 0; i < size; ++i) {
      Session s(c.qop, c.cipher);
      std::string token = s.server.Wrap("hello, world");
      token[i] ^= 0x01;
      absl::StatusOr<std::string> out = s.mechanism.Unwrap(token);
      ASSERT_FALSE(out.ok()) << "byte " << i;
      EXPECT_TRUE(ToStd(out.status().message()).starts_with("DIGEST-MD5: ")) << out.status();
      // The layer is out of step now: even a good token is refused.
      EXPECT_EQ(s.mechanism.Unwrap(s.server.Wrap("next")).status().code(),
                absl::StatusCode::kFailedPrecondition);
    }
    Session s(c.qop, c.cipher);
    EXPECT_FALSE(s.mechanism.Unwrap("").ok());
    Session t(c.qop, c.cipher);
    EXPECT_FALSE(t.mechanism.Unwrap(t.server.Wrap("x").substr(1)).ok());
  }
}

TEST(DigestMd5SecurityLayerTest, RefusesReplayedAndReorderedTokens) {
  for (const LayerCase& c : LayerCases()) {
    if (c.qop == "auth-conf") continue;  // a running cipher garbles them before the check
    SCOPED_TRACE(c.qop);
    {
      Session s(c.qop, c.cipher);
      std::string first = s.server.Wrap("one");
      ASSERT_TRUE(s.mechanism.Unwrap(first).ok());
      absl::StatusOr<std::string> replay = s.mechanism.Unwrap(first);
      ASSERT_FALSE(replay.ok());
      EXPECT_NE(ToStd(replay.status().message()).find("sequence number 0 where 1 was expected"),
                std::string_view::npos)
          << replay.status();
    }
    {
      Session s(c.qop, c.cipher);
      std::string first = s.server.Wrap("one");
      std::string second = s.server.Wrap("two");
      absl::StatusOr<std::string> early = s.mechanism.Unwrap(second);
      ASSERT_FALSE(early.ok());
      EXPECT_NE(ToStd(early.status().message()).find("sequence number 1 where 0 was expected"),
                std::string_view::npos)
          << early.status();
    }
  }
  // With a cipher, a replay or reordering shows as a MAC or padding failure.
  for (const LayerCase& c : LayerCases()) {
    if (c.qop != "auth-conf") continue;
    SCOPED_TRACE(c.cipher);
    Session s(c.qop, c.cipher);
    std::string first = s.server.Wrap("one");
    ASSERT_TRUE(s.mechanism.Unwrap(first).ok());
    EXPECT_EQ(s.mechanism.Unwrap(first).status().code(), absl::StatusCode::kDataLoss);
    Session t(c.qop, c.cipher);
    t.server.Wrap("one");
    EXPECT_EQ(t.mechanism.Unwrap(t.server.Wrap("two")).status().code(),
              absl::StatusCode::kDataLoss);
  }
}

TEST(DigestMd5SecurityLayerTest, RefusesBad3DesPadding) {
  // "1234567" + 10 bytes of MAC leaves 7 bytes of pad; "12345" leaves 1.
  for (auto [message, pad_byte] : std::vector<std::pair<std::string, uint8_t>>{
           {"1234567", 6}, {"1234567", 0}, {"12345", 9}, {"12345", 0}}) {
    SCOPED_TRACE(message + " " + std::to_string(pad_byte));
    Session s("auth-conf", "3des");
    absl::StatusOr<std::string> out = s.mechanism.Unwrap(s.server.Wrap(message, pad_byte));
    ASSERT_FALSE(out.ok());
    EXPECT_NE(ToStd(out.status().message()).find("bad padding"), std::string_view::npos)
        << out.status();
  }
}

TEST(DigestMd5SecurityLayerTest, MaxWrapSizeKeepsTokensWithinTheServersMaxbuf) {
  struct Case {
    std::string qop, cipher;
    size_t want;
  };
  std::vector<Case> cases = {{"auth-int", "", 1000 - 16}, {"auth-conf", "3des", 992 - 11}};
  if (Rc4Available()) cases.push_back({"auth-conf", "rc4", 1000 - 16});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.qop + " " + c.cipher);
    Session s(c.qop, c.cipher, 1000);
    ASSERT_EQ(s.mechanism.max_wrap_size(), c.want);
    absl::StatusOr<std::string> largest = s.mechanism.Wrap(std::string(c.want, 'm'));
    ASSERT_TRUE(largest.ok()) << largest.status();
    EXPECT_LE(largest->size(), 1000u);
    EXPECT_TRUE(s.server.Unwrap(*largest).ok());
    absl::StatusOr<std::string> over = s.mechanism.Wrap(std::string(c.want + 1, 'm'));
    EXPECT_EQ(over.status().code(), absl::StatusCode::kInvalidArgument);
  }
  Session defaults("auth-int", "");
  EXPECT_EQ(defaults.mechanism.max_wrap_size(), 65536u - 16);
}

TEST(DigestMd5SecurityLayerTest, NoLayerBeforeTheHandshakeCompletes) {
  DigestMd5TestServer server({.password = "secret", .qop = "auth-conf", .cipher = "3des"});
  DigestMd5Mechanism mechanism("chris", "secret", {});
  ASSERT_TRUE(mechanism.Start(Offer("", "default")).ok());
  ASSERT_TRUE(mechanism.Evaluate(server.Challenge()).ok());
  EXPECT_EQ(mechanism.Wrap("x").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(mechanism.Unwrap("x").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(mechanism.max_wrap_size(), 0u);
}

}  // namespace
}  // namespace tony::hadoop
