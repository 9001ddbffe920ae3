// tony's GSSAPI mechanism (RFC 4752, Hadoop's KERBEROS method) against MIT Kerberos's acceptor,
// in process: the test plays a Hadoop server holding hdfs/localhost's key from the Kerberized mini
// cluster's services keytab (scripts/hadoop-minicluster start DIR --secure;
// TONY_TEST_HADOOP_CONF_DIR names DIR), and tony runs the SASL handshake with the mechanisms
// KerberosSasl makes, as IpcClient does. Covered: the context tokens, the security-layer offer and
// answer for each layer the server may offer, and wrapped messages both ways after it.

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/strings.h"
#include "hadoop/gssapi_test_server.h"
#include "hadoop/sasl/gssapi_mechanism.h"
#include "hadoop/sasl/kerberos.h"
#include "hadoop/sasl/sasl.h"
#include "hadoop/test_cluster.h"

namespace tony::testing {
namespace {

using hadoop::SaslQop;
namespace proto = hadoop::proto;

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

class GssapiAcceptorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = TestCluster::FromEnvironment();
    if (!cluster_) GTEST_SKIP() << "TONY_TEST_HADOOP_CONF_DIR is not set (no mini cluster)";
    if (!cluster_->secure()) GTEST_SKIP() << cluster_->conf_dir() << " is not Kerberized";
    absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> login = cluster_->Login();
    ASSERT_TRUE(login.ok()) << login.status();
    login_ = *std::move(login);
    service_ = cluster_->Value("MINICLUSTER_HDFS_PRINCIPAL");
    ASSERT_EQ(service_, "hdfs/localhost@" + cluster_->Value("MINICLUSTER_REALM"));

    const std::string keytab = cluster_->conf_dir() + "/data/keytabs/services.keytab";
    gss_buffer_desc name_buffer = AsBuffer(service_);
    gss_name_t name = GSS_C_NO_NAME;
    OM_uint32 minor = 0;
    OM_uint32 major = gss_import_name(&minor, &name_buffer, GSS_KRB5_NT_PRINCIPAL_NAME, &name);
    ASSERT_FALSE(GSS_ERROR(major)) << hadoop::GssStatusText(major, minor);
    gss_key_value_element_desc element = {"keytab", keytab.c_str()};
    gss_key_value_set_desc store = {1, &element};
    major = gss_acquire_cred_from(&minor, name, GSS_C_INDEFINITE, GSS_C_NO_OID_SET, GSS_C_ACCEPT,
                                  &store, &acceptor_, nullptr, nullptr);
    gss_release_name(&minor, &name);
    ASSERT_FALSE(GSS_ERROR(major)) << keytab << ": " << hadoop::GssStatusText(major, minor);
  }

  void TearDown() override {
    OM_uint32 minor = 0;
    if (acceptor_ != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &acceptor_);
  }

  // tony's side of one connection, as IpcClient sets it up for a NameNode at 127.0.0.1: the
  // mechanisms KerberosSasl makes for the configured principal, and the handshake's result.
  struct Client {
    std::vector<std::unique_ptr<hadoop::SaslMechanism>> mechanisms;
    hadoop::SaslMechanism* used = nullptr;
    absl::StatusOr<hadoop::SaslOutcome> outcome;
  };
  Client Handshake(GssapiServer& server) {
    Client client;
    client.mechanisms = hadoop::KerberosSasl(login_, service_, "127.0.0.1")();
    std::vector<hadoop::SaslMechanism*> raw;
    for (auto& mechanism : client.mechanisms) raw.push_back(mechanism.get());
    client.outcome = hadoop::RunSaslHandshake(server, raw, "127.0.0.1:8020", &client.used);
    return client;
  }

  std::optional<TestCluster> cluster_;
  std::shared_ptr<const hadoop::KerberosCredentials> login_;
  std::string service_;
  gss_cred_id_t acceptor_ = GSS_C_NO_CREDENTIAL;
};

TEST_F(GssapiAcceptorTest, ContextIsEstablishedOnBothSides) {
  GssapiServer server(acceptor_, kLayerNone, 0);
  Client client = Handshake(server);
  ASSERT_TRUE(client.outcome.ok()) << client.outcome.status();
  EXPECT_EQ(*client.outcome, hadoop::SaslOutcome::kAuthenticated);
  ASSERT_EQ(client.mechanisms.size(), 1u);
  ASSERT_EQ(client.used, client.mechanisms[0].get());
  EXPECT_TRUE(client.used->complete());
  EXPECT_EQ(client.used->mechanism(), "GSSAPI");
  auto* gssapi = dynamic_cast<hadoop::GssapiMechanism*>(client.used);
  ASSERT_NE(gssapi, nullptr);
  EXPECT_EQ(gssapi->server_principal(), service_);

  ASSERT_TRUE(server.established());
  // Kerberos 5: one AP-REQ, and the AP-REP back for mutual authentication.
  EXPECT_EQ(server.context_tokens(), 1);
  EXPECT_EQ(server.client_principal(), cluster_->Value("MINICLUSTER_USER_PRINCIPAL"));
  EXPECT_EQ(server.client_principal(), login_->principal());
  EXPECT_NE(server.flags() & GSS_C_MUTUAL_FLAG, 0u);
  EXPECT_NE(server.flags() & GSS_C_SEQUENCE_FLAG, 0u);
  // The acceptor's own view of the context: open, between the user and the service.
  gss_name_t source = GSS_C_NO_NAME;
  gss_name_t target = GSS_C_NO_NAME;
  int open = 0;
  OM_uint32 minor = 0;
  OM_uint32 major = gss_inquire_context(&minor, server.context(), &source, &target, nullptr,
                                        nullptr, nullptr, nullptr, &open);
  ASSERT_FALSE(GSS_ERROR(major)) << hadoop::GssStatusText(major, minor);
  EXPECT_NE(open, 0);
  gss_buffer_desc text = GSS_C_EMPTY_BUFFER;
  ASSERT_FALSE(GSS_ERROR(gss_display_name(&minor, target, &text, nullptr)));
  EXPECT_EQ(TakeBuffer(&text), service_);
  gss_release_name(&minor, &source);
  gss_release_name(&minor, &target);
}

TEST_F(GssapiAcceptorTest, AnotherServicesKeyCannotAcceptTheTicket) {
  // The same keytab's yarn/localhost key: the ticket tony got for hdfs/localhost is not for it.
  const std::string yarn_principal = cluster_->Value("MINICLUSTER_YARN_PRINCIPAL");
  gss_buffer_desc name_buffer = AsBuffer(yarn_principal);
  gss_name_t name = GSS_C_NO_NAME;
  OM_uint32 minor = 0;
  ASSERT_FALSE(GSS_ERROR(gss_import_name(&minor, &name_buffer, GSS_KRB5_NT_PRINCIPAL_NAME, &name)));
  const std::string keytab = cluster_->conf_dir() + "/data/keytabs/services.keytab";
  gss_key_value_element_desc element = {"keytab", keytab.c_str()};
  gss_key_value_set_desc store = {1, &element};
  gss_cred_id_t yarn = GSS_C_NO_CREDENTIAL;
  OM_uint32 major = gss_acquire_cred_from(&minor, name, GSS_C_INDEFINITE, GSS_C_NO_OID_SET,
                                          GSS_C_ACCEPT, &store, &yarn, nullptr, nullptr);
  gss_release_name(&minor, &name);
  ASSERT_FALSE(GSS_ERROR(major)) << hadoop::GssStatusText(major, minor);
  {
    GssapiServer server(yarn, kLayerNone, 0);
    Client client = Handshake(server);
    EXPECT_FALSE(client.outcome.ok());
    EXPECT_EQ(client.used, nullptr);
    EXPECT_FALSE(server.established());
  }
  gss_release_cred(&minor, &yarn);
}

// One offer of the server and what tony must answer.
struct LayerCase {
  const char* name;
  uint8_t offered;
  uint8_t chosen;
  SaslQop qop;
};
void PrintTo(const LayerCase& c, std::ostream* os) { *os << c.name; }

class GssapiLayerTest : public GssapiAcceptorTest,
                        public ::testing::WithParamInterface<LayerCase> {};

TEST_P(GssapiLayerTest, ClientAnswersWithTheStrongestLayerOffered) {
  const LayerCase& c = GetParam();
  const uint32_t buffer = c.offered == kLayerNone ? 0 : kServerBuffer;
  GssapiServer server(acceptor_, c.offered, buffer);
  Client client = Handshake(server);
  ASSERT_TRUE(client.outcome.ok()) << client.outcome.status();
  ASSERT_NE(client.used, nullptr);
  EXPECT_EQ(client.used->qop(), c.qop);
  // The answer: the chosen layer, tony's receive buffer (0 without a layer), no authzid.
  const std::string& answer = server.answer();
  ASSERT_EQ(answer.size(), 4u);
  EXPECT_EQ(static_cast<uint8_t>(answer[0]), c.chosen);
  const uint32_t client_buffer = (static_cast<uint8_t>(answer[1]) << 16) |
                                 (static_cast<uint8_t>(answer[2]) << 8) |
                                 static_cast<uint8_t>(answer[3]);
  if (c.qop == SaslQop::kAuth) {
    EXPECT_EQ(client_buffer, 0u);
    EXPECT_EQ(client.used->max_wrap_size(), 0u);
    absl::StatusOr<std::string> wrapped = client.used->Wrap("x");
    EXPECT_EQ(wrapped.status().code(), absl::StatusCode::kFailedPrecondition);
    return;
  }
  EXPECT_EQ(client_buffer, 0xFFFFFFu);
  // The largest message tony wraps still fits the server's buffer once wrapped.
  const size_t limit = client.used->max_wrap_size();
  ASSERT_GT(limit, 0u);
  ASSERT_LT(limit, kServerBuffer);
  absl::StatusOr<std::string> wrapped = client.used->Wrap(std::string(limit, 'x'));
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();
  EXPECT_LE(wrapped->size(), kServerBuffer);
}

INSTANTIATE_TEST_SUITE_P(
    Offers, GssapiLayerTest,
    ::testing::Values(LayerCase{"auth", kLayerNone, kLayerNone, SaslQop::kAuth},
                      LayerCase{"auth_int", kLayerIntegrity, kLayerIntegrity, SaslQop::kAuthInt},
                      LayerCase{"auth_conf", kLayerPrivacy, kLayerPrivacy, SaslQop::kAuthConf},
                      LayerCase{"auth_or_int", kLayerNone | kLayerIntegrity, kLayerIntegrity,
                                SaslQop::kAuthInt},
                      LayerCase{"any", kLayerNone | kLayerIntegrity | kLayerPrivacy, kLayerPrivacy,
                                SaslQop::kAuthConf}),
    [](const ::testing::TestParamInfo<LayerCase>& info) { return info.param.name; });

// tony accepts every RFC 4752 layer (it has no hadoop.rpc.protection of its own: the server's
// offer is what the cluster requires), so only an offer without any of them is refused.
TEST_F(GssapiAcceptorTest, OfferWithoutAKnownLayerIsRefused) {
  for (uint8_t offered : {uint8_t{0}, uint8_t{8}, uint8_t{0xF8}}) {
    SCOPED_TRACE(static_cast<int>(offered));
    GssapiServer server(acceptor_, offered, kServerBuffer);
    Client client = Handshake(server);
    ASSERT_FALSE(client.outcome.ok());
    EXPECT_EQ(client.outcome.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(Message(client.outcome.status()), "no security layer"))
        << client.outcome.status();
    EXPECT_EQ(client.used, nullptr);
    EXPECT_FALSE(client.mechanisms[0]->complete());
    EXPECT_TRUE(server.answer().empty());
  }
}

TEST_F(GssapiAcceptorTest, LayerWithoutReceiveBufferIsRefused) {
  GssapiServer server(acceptor_, kLayerIntegrity, 0);
  Client client = Handshake(server);
  ASSERT_FALSE(client.outcome.ok());
  EXPECT_TRUE(Contains(Message(client.outcome.status()), "receive buffer of 0"))
      << client.outcome.status();
  EXPECT_TRUE(server.answer().empty());
}

TEST_F(GssapiAcceptorTest, TamperedLayerOfferIsRefused) {
  GssapiServer server(acceptor_, kLayerPrivacy, kServerBuffer);
  server.tamper_offer = [](std::string& token) { token.back() ^= 0x01; };
  Client client = Handshake(server);
  ASSERT_FALSE(client.outcome.ok());
  EXPECT_EQ(client.outcome.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Contains(Message(client.outcome.status()), "fails its check"))
      << client.outcome.status();
  EXPECT_TRUE(server.answer().empty());
}

// Wrapped messages after the handshake, for integrity (conf false) and privacy (conf true).
class GssapiWrapTest : public GssapiAcceptorTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    GssapiAcceptorTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    server_ = std::make_unique<GssapiServer>(
        acceptor_, GetParam() ? kLayerPrivacy : kLayerIntegrity, kServerBuffer);
    client_ = Handshake(*server_);
    ASSERT_TRUE(client_.outcome.ok()) << client_.outcome.status();
    ASSERT_EQ(client_.used->qop(), GetParam() ? SaslQop::kAuthConf : SaslQop::kAuthInt);
  }
  void TearDown() override {
    server_.reset();
    GssapiAcceptorTest::TearDown();
  }

  // The acceptor's gss_wrap of `message`, with or without confidentiality.
  std::string ServerWrap(const std::string& message, bool conf) {
    gss_buffer_desc input = AsBuffer(message);
    gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major = gss_wrap(&minor, server_->context(), conf ? 1 : 0, GSS_C_QOP_DEFAULT, &input,
                               &conf_state, &output);
    EXPECT_FALSE(GSS_ERROR(major)) << hadoop::GssStatusText(major, minor);
    EXPECT_EQ(conf_state != 0, conf);
    return TakeBuffer(&output);
  }

  std::unique_ptr<GssapiServer> server_;
  Client client_;
};

TEST_P(GssapiWrapTest, ClientWrapUnwrapsOnTheAcceptor) {
  const bool privacy = GetParam();
  const std::string message("\x00\x00\x00\x2a a call frame for the NameNode", 34);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::string> wrapped = client_.used->Wrap(message);
    ASSERT_TRUE(wrapped.ok()) << wrapped.status();
    // Under privacy the message is not readable on the wire; under integrity it is.
    EXPECT_EQ(Contains(*wrapped, "a call frame"), !privacy);
    gss_buffer_desc input = AsBuffer(*wrapped);
    gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    int conf_state = -1;
    OM_uint32 major = gss_unwrap(&minor, server_->context(), &input, &output, &conf_state, nullptr);
    ASSERT_EQ(major, static_cast<OM_uint32>(GSS_S_COMPLETE)) << hadoop::GssStatusText(major, minor);
    EXPECT_EQ(TakeBuffer(&output), message);
    EXPECT_EQ(conf_state != 0, privacy);
  }
}

TEST_P(GssapiWrapTest, AcceptorWrapUnwrapsInTony) {
  const bool privacy = GetParam();
  for (const std::string& message : {std::string("response 1"), std::string(4096, '\x5a')}) {
    absl::StatusOr<std::string> plain = client_.used->Unwrap(ServerWrap(message, privacy));
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_EQ(*plain, message);
  }
}

TEST_P(GssapiWrapTest, TamperedTokenIsRefused) {
  const bool privacy = GetParam();
  const std::string token = ServerWrap("a response", privacy);
  // The checksum at the end and a byte of the message itself.
  for (size_t at : {token.size() - 1, token.size() / 2}) {
    std::string tampered = token;
    tampered[at] ^= 0x01;
    absl::StatusOr<std::string> plain = client_.used->Unwrap(tampered);
    ASSERT_FALSE(plain.ok()) << "byte " << at;
    EXPECT_EQ(plain.status().code(), absl::StatusCode::kDataLoss) << plain.status();
  }
  // The token as it was sent still unwraps: the refusals were the tampering's.
  absl::StatusOr<std::string> plain = client_.used->Unwrap(token);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(*plain, "a response");
}

TEST_P(GssapiWrapTest, ReplayedTokenIsRefused) {
  const std::string token = ServerWrap("a response", GetParam());
  const std::string sent(token.data(), token.size());
  ASSERT_TRUE(client_.used->Unwrap(token).ok());
  // MIT's gss_unwrap rearranges integrity tokens in place; tony's Unwrap takes a const view.
  EXPECT_EQ(token, sent) << "Unwrap changed its input";
  absl::StatusOr<std::string> again = client_.used->Unwrap(token);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(Message(again.status()), "replayed")) << again.status();
}

INSTANTIATE_TEST_SUITE_P(Layers, GssapiWrapTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "auth_conf" : "auth_int";
                         });

// Privacy only: a token the server did not encrypt.
class GssapiPrivacyTest : public GssapiWrapTest {};

TEST_P(GssapiPrivacyTest, UnencryptedTokenIsRefused) {
  absl::StatusOr<std::string> plain = client_.used->Unwrap(ServerWrap("a response", false));
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(Message(plain.status()), "unencrypted")) << plain.status();
}

INSTANTIATE_TEST_SUITE_P(Layers, GssapiPrivacyTest, ::testing::Values(true),
                         [](const ::testing::TestParamInfo<bool>&) { return "auth_conf"; });

}  // namespace
}  // namespace tony::testing
