#include "hadoop/http/truststore.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/files.h"
#include "common/strings.h"

// testdata/truststore was made with the JDK's keytool: two CAs (ca.pem, other.pem, EC keys, 100
// years), each imported into a JKS, a JCEKS and a PKCS12 truststore (two.*), all with the
// password "changeit"; withkey.jks has a private-key entry of its own and the CA as a trusted
// certificate. legacy-rc2.p12 is the CA in a PKCS12 file under RC2-40 (openssl pkcs12 -export
// -legacy -nokeys). umlaut.jks is the CA under the password "pässwörd" (keytool in a UTF-8 locale).

namespace tony::hadoop {
namespace {

namespace fs = std::filesystem;

// Beside this file (named by the build: under a compiler cache __FILE__ may be relative).
const std::string kDir = TONY_TRUSTSTORE_TESTDATA;
constexpr char kPassword[] = "changeit";

std::string Read(const std::string& name) {
  std::ifstream in(kDir + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Whether `pem` holds the certificate of the PEM file `name` (as the loader writes it: keytool
// wraps its lines differently).
bool Holds(const std::string& pem, const std::string& name) {
  absl::StatusOr<std::string> cert = TrustStoreToPem(Read(name), "");
  return cert.ok() && !cert->empty() && pem.find(*cert) != std::string::npos;
}

int Certificates(const std::string& pem) {
  int count = 0;
  for (size_t at = pem.find("-----BEGIN CERTIFICATE-----"); at != std::string::npos;
       at = pem.find("-----BEGIN CERTIFICATE-----", at + 1)) {
    ++count;
  }
  return count;
}

class TrustStoreFormatTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TrustStoreFormatTest, HoldsBothAuthorities) {
  absl::StatusOr<std::string> pem = TrustStoreToPem(Read("two." + GetParam()), kPassword);
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_EQ(Certificates(*pem), 2);
  EXPECT_TRUE(Holds(*pem, "ca.pem"));
  EXPECT_TRUE(Holds(*pem, "other.pem"));
}

INSTANTIATE_TEST_SUITE_P(Formats, TrustStoreFormatTest,
                         ::testing::Values("jks", "jceks", "pkcs12"));

TEST(TrustStoreTest, AnOldPkcs12FileWithRc2EncryptionIsRead) {
  // As Java before 8u301 wrote PKCS12: certificates under RC2-40, which OpenSSL 3 keeps in its
  // legacy provider.
  absl::StatusOr<std::string> pem = TrustStoreToPem(Read("legacy-rc2.p12"), kPassword);
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_EQ(Certificates(*pem), 1);
  EXPECT_TRUE(Holds(*pem, "ca.pem"));
}

TEST(TrustStoreTest, AWrongPasswordIsRefused) {
  for (const char* name : {"two.jks", "two.jceks", "two.pkcs12", "legacy-rc2.p12"}) {
    absl::StatusOr<std::string> pem = TrustStoreToPem(Read(name), "not-it");
    ASSERT_FALSE(pem.ok()) << name;
    EXPECT_EQ(pem.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_NE(ToStd(pem.status().message()).find("password"), std::string::npos) << pem.status();
  }
}

TEST(TrustStoreTest, AJksFileIsReadWithoutAPasswordAsJavaReadsIt) {
  absl::StatusOr<std::string> pem = TrustStoreToPem(Read("two.jks"), "");
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_EQ(Certificates(*pem), 2);
}

TEST(TrustStoreTest, AJksFileWhoseBytesChangedFailsItsIntegrityCheck) {
  std::string bytes = Read("two.jks");
  bytes[40] = static_cast<char>(bytes[40] ^ 1);
  absl::StatusOr<std::string> pem = TrustStoreToPem(bytes, kPassword);
  EXPECT_FALSE(pem.ok());
}

TEST(TrustStoreTest, APemFileIsTakenAsItIs) {
  absl::StatusOr<std::string> pem = TrustStoreToPem(Read("ca.pem") + Read("other.pem"), "");
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_EQ(Certificates(*pem), 2);
}

TEST(TrustStoreTest, TruncatedOrForeignBytesAreOneClearError) {
  const std::string jks = Read("two.jks");
  for (const std::string& bytes :
       {jks.substr(0, 30), jks.substr(0, 5), std::string("not a keystore at all"), std::string()}) {
    absl::StatusOr<std::string> pem = TrustStoreToPem(bytes, kPassword);
    ASSERT_FALSE(pem.ok());
    EXPECT_EQ(pem.status().code(), absl::StatusCode::kInvalidArgument) << pem.status();
  }
}

class ClientTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tony-truststore-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void WriteSslClient(const std::string& location, const std::string& password) {
    ASSERT_TRUE(WriteFile((dir_ / "ssl-client.xml").string(),
                          StrCat("<configuration>\n"
                                 "<property><name>ssl.client.truststore.location</name><value>",
                                 location,
                                 "</value></property>\n"
                                 "<property><name>ssl.client.truststore.password</name><value>",
                                 password, "</value></property>\n</configuration>\n"),
                          0600)
                    .ok());
  }

  absl::StatusOr<http::Tls> Load() {
    absl::StatusOr<HadoopConf> conf = HadoopConf::Load({dir_.string()});
    if (!conf.ok()) return conf.status();
    return ClientTls(*conf);
  }

  fs::path dir_;
};

TEST(TrustStoreTest, AKeystoresOwnCertificateIsTrustedAsJavaTrustsIt) {
  // withkey.jks: a private-key entry (its certificate, CN=a key) and the CA.
  absl::StatusOr<std::string> pem = TrustStoreToPem(Read("withkey.jks"), kPassword);
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_EQ(Certificates(*pem), 2);
}

TEST(TrustStoreTest, AJksPasswordIsJavasCharsNotItsBytes) {
  // keytool -storepass 'pässwörd' (UTF-16BE in the digest, UTF-8 in ssl-client.xml).
  absl::StatusOr<std::string> pem = TrustStoreToPem(Read("umlaut.jks"), "p\xC3\xA4ssw\xC3\xB6rd");
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_EQ(Certificates(*pem), 1);
}

TEST_F(ClientTlsTest, WithoutSslClientXmlTheSystemsAuthoritiesAreTrusted) {
  absl::StatusOr<http::Tls> tls = Load();
  ASSERT_TRUE(tls.ok()) << tls.status();
  EXPECT_TRUE(tls->ca_pem.empty());
}

TEST_F(ClientTlsTest, SslClientXmlsTruststoreIsTrusted) {
  WriteSslClient(kDir + "/two.jks", kPassword);
  absl::StatusOr<http::Tls> tls = Load();
  ASSERT_TRUE(tls.ok()) << tls.status();
  EXPECT_EQ(Certificates(tls->ca_pem), 2);
  EXPECT_NE(tls->source.find("two.jks"), std::string::npos) << tls->source;
}

TEST_F(ClientTlsTest, HadoopSslClientConfNamesAnotherFile) {
  ASSERT_TRUE(WriteFile((dir_ / "core-site.xml").string(),
                        "<configuration><property><name>hadoop.ssl.client.conf</name>"
                        "<value>my-ssl.xml</value></property></configuration>\n",
                        0600)
                  .ok());
  WriteSslClient(kDir + "/missing.jks", kPassword);  // would fail, were it read
  ASSERT_TRUE(WriteFile((dir_ / "my-ssl.xml").string(),
                        StrCat("<configuration><property><name>ssl.client.truststore.location"
                               "</name><value>",
                               kDir,
                               "/two.pkcs12</value></property><property><name>"
                               "ssl.client.truststore.password</name><value>changeit</value>"
                               "</property></configuration>\n"),
                        0600)
                  .ok());
  absl::StatusOr<http::Tls> tls = Load();
  ASSERT_TRUE(tls.ok()) << tls.status();
  EXPECT_EQ(Certificates(tls->ca_pem), 2);
}

TEST_F(ClientTlsTest, AMissingTruststoreNamesTheKeyAndTheFile) {
  WriteSslClient((dir_ / "nowhere.jks").string(), kPassword);
  absl::StatusOr<http::Tls> tls = Load();
  ASSERT_FALSE(tls.ok());
  EXPECT_EQ(tls.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(tls.status().message());
  EXPECT_NE(message.find("ssl.client.truststore.location"), std::string::npos) << message;
  EXPECT_NE(message.find("ssl-client.xml"), std::string::npos) << message;
  EXPECT_NE(message.find("nowhere.jks"), std::string::npos) << message;
}

TEST_F(ClientTlsTest, AWrongPasswordNamesTheFile) {
  WriteSslClient(kDir + "/two.jks", "wrong");
  absl::StatusOr<http::Tls> tls = Load();
  ASSERT_FALSE(tls.ok());
  EXPECT_NE(ToStd(tls.status().message()).find("two.jks"), std::string::npos) << tls.status();
  EXPECT_NE(ToStd(tls.status().message()).find("password"), std::string::npos) << tls.status();
}

}  // namespace
}  // namespace tony::hadoop
