#pragma once
// The job's key material, created by the client for every job (GenerateJobCredentials):
//  - the job secret: the credential of the client and the AM, which covers the whole job;
//  - the AM's TLS certificate and key: a self-signed certificate made for this job alone, which
//    the client and the executors pin as their only trusted root (so the AM's host name does not
//    matter: every caller verifies the name kAmTlsName);
//  - from the secret, each executor's task credential (TaskCredential), which covers only the
//    calls about its own task in its own container.
// They travel only in files that the job's user alone can read (local: the job directory, mode
// 0600; YARN: the containers' credentials), never in an environment variable or a command line.
// Any thread.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tony::rpc {

// The name in the AM's certificate, which every caller verifies.
inline constexpr char kAmTlsName[] = "tony-am";

// The entries of the credentials that the AM's and the executors' containers carry.
inline constexpr char kJobSecretAlias[] = "tony.job.secret";
inline constexpr char kAmCertAlias[] = "tony.am.tls-certificate";
inline constexpr char kAmKeyAlias[] = "tony.am.tls-key";
inline constexpr char kTaskCredentialAlias[] = "tony.task.credential";
// YARN: the authorities an executor trusts for WebHDFS over HTTPS (the client's truststore, PEM),
// when it reads the next AM attempt's address there.
inline constexpr char kWebHdfsCaAlias[] = "tony.webhdfs.ca";

// The files of the job directory that hold them (mode 0600).
inline constexpr char kSecretFile[] = "secret";
inline constexpr char kAmCertFile[] = "am-tls.crt";
inline constexpr char kAmKeyFile[] = "am-tls.key";

struct JobCredentials {
  std::string secret;       // 64 hex digits
  std::string am_cert_pem;  // "" when TLS is off (tony.am.tls.enabled=false)
  std::string am_key_pem;
  bool tls() const { return !am_cert_pem.empty(); }
};

// A new secret, and with `tls` a new EC P-256 key and a self-signed certificate for kAmTlsName.
[[nodiscard]] absl::StatusOr<JobCredentials> GenerateJobCredentials(bool tls);

// 32 random bytes from the kernel, hex-encoded.
[[nodiscard]] absl::StatusOr<std::string> GenerateSecret();

// The credential of the executor of task `type`:`index` in `container_id`: HMAC-SHA256 under the
// job secret, hex-encoded. The AM recomputes it to check a call; it stores nothing per task.
std::string TaskCredential(std::string_view secret, std::string_view type, int index,
                           std::string_view container_id);

// Writes the credentials into `dir` (each file 0600), or reads them back; without the
// certificate files, TLS is off. Reading refuses a file that others can read.
[[nodiscard]] absl::Status WriteJobCredentials(const std::string& dir,
                                               const JobCredentials& credentials);
[[nodiscard]] absl::StatusOr<JobCredentials> ReadJobCredentials(const std::string& dir);

// Reads one private file, refusing one that others can read; surrounding whitespace is dropped.
[[nodiscard]] absl::StatusOr<std::string> ReadPrivateFile(const std::string& path);

}  // namespace tony::rpc
