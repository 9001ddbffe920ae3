// Kerberos login failures that need no KDC (a KDC that is down is one of them), and the principal
// helpers. Logins against a real KDC are in tests/hadoop (the Kerberized mini cluster).
#include "hadoop/sasl/kerberos.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <krb5/krb5.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/strings.h"

namespace tony::hadoop {
namespace {

namespace fs = std::filesystem;

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

// Points MIT Kerberos at a private krb5.conf and ticket cache for one test, and restores the
// environment after.
class KerberosEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tony-krb5-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    for (const char* name : {"KRB5_CONFIG", "KRB5CCNAME", "KRB5_KTNAME"}) {
      const char* value = std::getenv(name);
      saved_.emplace_back(name,
                          value != nullptr ? std::optional<std::string>(value) : std::nullopt);
    }
    setenv("KRB5CCNAME", StrCat("FILE:", dir_, "/no-such-cache").c_str(), 1);
    WriteConfig(ClosedPort());
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A loopback port nothing listens on: bound, then closed.
  static int ClosedPort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    socklen_t length = sizeof(address);
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    close(fd);
    return ntohs(address.sin_port);
  }

  void WriteConfig(int kdc_port) {
    std::ofstream(dir_ + "/krb5.conf")
        << "[libdefaults]\n default_realm = TONY.TEST\n dns_lookup_kdc = false\n"
        << " dns_lookup_realm = false\n udp_preference_limit = 1\n rdns = false\n"
        << " kdc_timeout = 2000\n max_retries = 1\n"
        << "[realms]\n TONY.TEST = {\n  kdc = 127.0.0.1:" << kdc_port << "\n }\n";
    setenv("KRB5_CONFIG", (dir_ + "/krb5.conf").c_str(), 1);
  }

  // A keytab holding a made-up key for `principal`.
  std::string WriteKeytab(const std::string& principal) {
    std::string path = dir_ + "/user.keytab";
    krb5_context context = nullptr;
    EXPECT_EQ(krb5_init_context(&context), 0);
    krb5_keytab keytab = nullptr;
    EXPECT_EQ(krb5_kt_resolve(context, StrCat("FILE:", path).c_str(), &keytab), 0);
    krb5_keytab_entry entry{};
    EXPECT_EQ(krb5_parse_name(context, principal.c_str(), &entry.principal), 0);
    entry.vno = 1;
    EXPECT_EQ(krb5_c_make_random_key(context, ENCTYPE_AES256_CTS_HMAC_SHA1_96, &entry.key), 0);
    EXPECT_EQ(krb5_kt_add_entry(context, keytab, &entry), 0);
    krb5_free_keyblock_contents(context, &entry.key);
    krb5_free_principal(context, entry.principal);
    krb5_kt_close(context, keytab);
    krb5_free_context(context);
    return path;
  }

  std::string dir_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(KerberosEnv, NoTicketSaysToKinitOrSetTheKeytabKeys) {
  absl::StatusOr<std::shared_ptr<KerberosCredentials>> login = KerberosCredentials::Acquire({});
  ASSERT_FALSE(login.ok());
  EXPECT_EQ(login.status().code(), absl::StatusCode::kUnauthenticated) << login.status();
  EXPECT_NE(Message(login.status()).find("no Kerberos ticket"), std::string::npos)
      << login.status();
  EXPECT_NE(Message(login.status()).find("run kinit"), std::string::npos) << login.status();
  EXPECT_NE(Message(login.status()).find("tony.kerberos.keytab"), std::string::npos)
      << login.status();
}

TEST_F(KerberosEnv, MissingOrEmptyKeytabIsNamed) {
  absl::StatusOr<std::shared_ptr<KerberosCredentials>> login =
      KerberosCredentials::Acquire({"alice@TONY.TEST", dir_ + "/nothing.keytab"});
  ASSERT_FALSE(login.ok());
  EXPECT_EQ(login.status().code(), absl::StatusCode::kInvalidArgument) << login.status();
  EXPECT_NE(Message(login.status()).find(dir_ + "/nothing.keytab"), std::string::npos);
  EXPECT_NE(Message(login.status()).find("tony.kerberos.keytab"), std::string::npos);

  std::ofstream(dir_ + "/empty.keytab") << "";
  login = KerberosCredentials::Acquire({"", dir_ + "/empty.keytab"});
  ASSERT_FALSE(login.ok());
  EXPECT_EQ(login.status().code(), absl::StatusCode::kInvalidArgument) << login.status();
}

TEST_F(KerberosEnv, KdcThatIsDownIsUnavailableAndSaysSo) {
  const std::string keytab = WriteKeytab("alice@TONY.TEST");
  absl::StatusOr<std::shared_ptr<KerberosCredentials>> login =
      KerberosCredentials::Acquire({"alice@TONY.TEST", keytab});
  ASSERT_FALSE(login.ok());
  EXPECT_EQ(login.status().code(), absl::StatusCode::kUnavailable) << login.status();
  EXPECT_NE(Message(login.status()).find("alice@TONY.TEST"), std::string::npos) << login.status();
  EXPECT_NE(Message(login.status()).find("KDC"), std::string::npos) << login.status();
}

TEST_F(KerberosEnv, KeytabWithoutThePrincipalsKeyIsRefusedBeforeAnyKdc) {
  const std::string keytab = WriteKeytab("alice@TONY.TEST");
  absl::StatusOr<std::shared_ptr<KerberosCredentials>> login =
      KerberosCredentials::Acquire({"bob@TONY.TEST", keytab});
  ASSERT_FALSE(login.ok());
  EXPECT_NE(Message(login.status()).find("bob@TONY.TEST"), std::string::npos) << login.status();
}

TEST(PrincipalTest, SubstitutesHostInLowerCase) {
  EXPECT_EQ(SubstituteHost("rm/_HOST@EXAMPLE.COM", "RM1.Example.com"),
            "rm/rm1.example.com@EXAMPLE.COM");
  EXPECT_EQ(SubstituteHost("rm/fixed@EXAMPLE.COM", "other"), "rm/fixed@EXAMPLE.COM");
}

TEST(PrincipalTest, SplitsServiceHostAndRealm) {
  PrincipalParts parts = SplitPrincipal("nn/host.example.com@EXAMPLE.COM");
  EXPECT_EQ(parts.service, "nn");
  EXPECT_EQ(parts.host, "host.example.com");
  EXPECT_EQ(parts.realm, "EXAMPLE.COM");
  parts = SplitPrincipal("alice");
  EXPECT_EQ(parts.service, "alice");
  EXPECT_EQ(parts.host, "");
  EXPECT_EQ(parts.realm, "");
}

TEST(PrincipalTest, CanonicalNameOfLoopbackIsWhatTheResolverSays) {
  // 127.0.0.1 reverse-resolves through /etc/hosts; a name that does not resolve stays itself.
  EXPECT_FALSE(CanonicalHostName("127.0.0.1").empty());
  EXPECT_EQ(CanonicalHostName("No-Such-Host.invalid"), "no-such-host.invalid");
}

}  // namespace
}  // namespace tony::hadoop
