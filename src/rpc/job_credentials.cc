#include "rpc/job_credentials.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "common/files.h"
#include "common/strings.h"

namespace tony::rpc {
namespace {

std::string Hex(const unsigned char* bytes, size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 15]);
  }
  return out;
}

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using PKey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Extension = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;

absl::Status OpenSslError(std::string_view what) {
  return absl::InternalError(StrCat("cannot create the job's TLS certificate (", what, ")"));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return size > 0 ? std::string(data, static_cast<size_t>(size)) : std::string();
}

absl::Status AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Extension extension(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (extension == nullptr || X509_add_ext(cert, extension.get(), -1) != 1) {
    return OpenSslError("extension");
  }
  return absl::OkStatus();
}

// A self-signed certificate for kAmTlsName, valid from an hour ago (clock skew between nodes)
// for ten years: it lives as long as the job and is trusted by nobody else.
absl::Status MakeCertificate(JobCredentials* out) {
  PKey key(EVP_EC_gen("P-256"));
  if (key == nullptr) return OpenSslError("key");
  Cert cert(X509_new());
  if (cert == nullptr) return OpenSslError("certificate");
  unsigned char serial[16];
  if (getrandom(serial, sizeof(serial), 0) != sizeof(serial)) return OpenSslError("serial");
  serial[0] &= 0x7f;  // positive
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> serial_bn(
      BN_bin2bn(serial, sizeof(serial), nullptr));
  X509_set_version(cert.get(), 2);
  if (serial_bn == nullptr ||
      BN_to_ASN1_INTEGER(serial_bn.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return OpenSslError("serial");
  }
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(kAmTlsName), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  const std::string san = StrCat("DNS:", kAmTlsName);
  for (const auto& [nid, value] : {std::pair<int, const char*>{NID_subject_alt_name, san.c_str()},
                                   {NID_basic_constraints, "critical,CA:FALSE"},
                                   {NID_key_usage, "critical,digitalSignature"},
                                   {NID_ext_key_usage, "serverAuth"}}) {
    if (absl::Status s = AddExtension(cert.get(), nid, value); !s.ok()) return s;
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return OpenSslError("signature");
  Bio cert_pem(BIO_new(BIO_s_mem()));
  Bio key_pem(BIO_new(BIO_s_mem()));
  if (cert_pem == nullptr || key_pem == nullptr ||
      PEM_write_bio_X509(cert_pem.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_pem.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
          1) {
    return OpenSslError("PEM");
  }
  out->am_cert_pem = BioText(cert_pem.get());
  out->am_key_pem = BioText(key_pem.get());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> GenerateSecret() {
  unsigned char bytes[32];
  size_t filled = 0;
  while (filled < sizeof(bytes)) {
    ssize_t n = getrandom(bytes + filled, sizeof(bytes) - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(StrCat("getrandom: ", std::strerror(errno)));
    filled += static_cast<size_t>(n);
  }
  return Hex(bytes, sizeof(bytes));
}

absl::StatusOr<JobCredentials> GenerateJobCredentials(bool tls) {
  JobCredentials credentials;
  absl::StatusOr<std::string> secret = GenerateSecret();
  if (!secret.ok()) return secret.status();
  credentials.secret = *std::move(secret);
  if (tls) {
    if (absl::Status s = MakeCertificate(&credentials); !s.ok()) return s;
  }
  return credentials;
}

std::string TaskCredential(std::string_view secret, std::string_view type, int index,
                           std::string_view container_id) {
  // NUL separates the fields: none of them can contain one.
  std::string message =
      StrCat("tony-task", std::string_view("\0", 1), type, std::string_view("\0", 1), index,
             std::string_view("\0", 1), container_id);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &size);
  return Hex(mac, size);
}

absl::Status WriteJobCredentials(const std::string& dir, const JobCredentials& credentials) {
  if (absl::Status s = WriteFile(StrCat(dir, "/", kSecretFile), credentials.secret + "\n", 0600);
      !s.ok()) {
    return s;
  }
  if (!credentials.tls()) return absl::OkStatus();
  if (absl::Status s = WriteFile(StrCat(dir, "/", kAmKeyFile), credentials.am_key_pem, 0600);
      !s.ok()) {
    return s;
  }
  return WriteFile(StrCat(dir, "/", kAmCertFile), credentials.am_cert_pem, 0600);
}

absl::StatusOr<std::string> ReadPrivateFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(StrCat(path, ": ", std::strerror(errno)));
  }
  if ((st.st_mode & 077) != 0) {
    return absl::PermissionDeniedError(StrCat(path, " is readable by others; expected mode 0600"));
  }
  absl::StatusOr<std::string> content = ReadFile(path);
  if (!content.ok()) return content.status();
  std::string value(StripWhitespace(*content));
  if (value.empty()) return absl::InvalidArgumentError(StrCat(path, " is empty"));
  return value;
}

absl::StatusOr<JobCredentials> ReadJobCredentials(const std::string& dir) {
  JobCredentials credentials;
  absl::StatusOr<std::string> secret = ReadPrivateFile(StrCat(dir, "/", kSecretFile));
  if (!secret.ok()) return secret.status();
  credentials.secret = *std::move(secret);
  const std::string cert_path = StrCat(dir, "/", kAmCertFile);
  struct stat st;
  if (stat(cert_path.c_str(), &st) != 0) return credentials;  // TLS is off for this job
  absl::StatusOr<std::string> cert = ReadPrivateFile(cert_path);
  absl::StatusOr<std::string> key =
      cert.ok() ? ReadPrivateFile(StrCat(dir, "/", kAmKeyFile)) : cert.status();
  if (!key.ok()) return key.status();
  credentials.am_cert_pem = *std::move(cert) + "\n";
  credentials.am_key_pem = *std::move(key) + "\n";
  return credentials;
}

}  // namespace tony::rpc
