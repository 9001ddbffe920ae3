#include "rpc/auth.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/files.h"

namespace tony::rpc {
namespace {

namespace fs = std::filesystem;

TEST(AuthTest, TheJobSecretProvesTheJob) {
  const std::string secret = *GenerateSecret();
  EXPECT_EQ(secret.size(), 64u);
  EXPECT_TRUE(Authenticate(JobAuthValue(secret), secret).IsJob());
  EXPECT_EQ(Authenticate(JobAuthValue(secret.substr(1)), secret).kind, Principal::Kind::kNone);
  EXPECT_EQ(Authenticate(JobAuthValue(""), secret).kind, Principal::Kind::kNone);
  EXPECT_EQ(Authenticate("", secret).kind, Principal::Kind::kNone);
  EXPECT_EQ(Authenticate(JobAuthValue(secret), "").kind, Principal::Kind::kNone)
      << "no secret configured must prove nothing";
}

TEST(AuthTest, ATaskCredentialCoversOneTaskInOneContainer) {
  const std::string secret = *GenerateSecret();
  const std::string credential = TaskCredential(secret, "worker", 1, "container_1_0001_01_000003");
  const Principal task =
      Authenticate(TaskAuthValue("worker", 1, "container_1_0001_01_000003", credential), secret);
  ASSERT_EQ(task.kind, Principal::Kind::kTask);
  EXPECT_TRUE(task.IsTask("worker", 1, "container_1_0001_01_000003"));
  EXPECT_TRUE(task.IsTask("worker", 1, ""));
  EXPECT_FALSE(task.IsTask("worker", 0, ""));
  EXPECT_FALSE(task.IsTask("ps", 1, ""));
  EXPECT_FALSE(task.IsTask("worker", 1, "container_1_0001_01_000004"));
  EXPECT_FALSE(task.IsJob());
  // The same credential claimed for another task, index or container proves nothing.
  for (const std::string& forged :
       {TaskAuthValue("worker", 0, "container_1_0001_01_000003", credential),
        TaskAuthValue("ps", 1, "container_1_0001_01_000003", credential),
        TaskAuthValue("worker", 1, "container_1_0001_01_000004", credential),
        TaskAuthValue("worker", 1, "container_1_0001_01_000003", credential.substr(2) + "00"),
        JobAuthValue(credential), std::string("task worker 1 c ") + credential + " extra",
        std::string("task worker -1 container_1_0001_01_000003 ") + credential,
        std::string("task worker +1 container_1_0001_01_000003 ") + credential}) {
    EXPECT_EQ(Authenticate(forged, secret).kind, Principal::Kind::kNone) << forged;
  }
  // Another job's secret makes other credentials.
  EXPECT_NE(TaskCredential(*GenerateSecret(), "worker", 1, "container_1_0001_01_000003"),
            credential);
}

TEST(AuthTest, CredentialsAreWrittenPrivateAndReadBack) {
  const fs::path dir = fs::temp_directory_path() / ("tony-auth-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const mode_t old_umask = umask(0);  // the caller's umask must not matter
  absl::StatusOr<JobCredentials> credentials = GenerateJobCredentials(/*tls=*/true);
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  EXPECT_NE(credentials->am_cert_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_NE(credentials->am_key_pem.find("PRIVATE KEY"), std::string::npos);
  ASSERT_TRUE(WriteJobCredentials(dir.string(), *credentials).ok());
  umask(old_umask);
  for (const char* name : {kSecretFile, kAmCertFile, kAmKeyFile}) {
    struct stat st;
    ASSERT_EQ(stat((dir / name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << name;
  }
  absl::StatusOr<JobCredentials> read = ReadJobCredentials(dir.string());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->secret, credentials->secret);
  EXPECT_EQ(read->am_cert_pem, credentials->am_cert_pem);
  EXPECT_EQ(read->am_key_pem, credentials->am_key_pem);
  // A secret others can read is refused.
  fs::permissions(dir / kSecretFile, fs::perms::others_read, fs::perm_options::add);
  EXPECT_EQ(ReadJobCredentials(dir.string()).status().code(), absl::StatusCode::kPermissionDenied);
  fs::remove_all(dir);
}

TEST(AuthTest, WithoutTlsThereIsNoCertificate) {
  absl::StatusOr<JobCredentials> credentials = GenerateJobCredentials(/*tls=*/false);
  ASSERT_TRUE(credentials.ok());
  EXPECT_FALSE(credentials->tls());
  EXPECT_FALSE(credentials->secret.empty());
}

}  // namespace
}  // namespace tony::rpc
