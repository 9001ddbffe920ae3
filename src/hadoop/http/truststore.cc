#include "hadoop/http/truststore.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "common/strings.h"
#include "config/configuration.h"

namespace tony::hadoop {
namespace {

constexpr uint32_t kJksMagic = 0xFEEDFEED;
constexpr uint32_t kJceksMagic = 0xCECECECE;
constexpr uint32_t kPrivateKeyEntry = 1;
constexpr uint32_t kTrustedCertEntry = 2;
constexpr uint32_t kSecretKeyEntry = 3;
constexpr size_t kSha1Size = 20;
constexpr size_t kMaxTrustStoreBytes = size_t{64} << 20;
// What Java's JKS digest mixes in after the password.
constexpr std::string_view kJksWhitener = "Mighty Aphrodite";

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Deleter {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct Pkcs12Deleter {
  void operator()(PKCS12* p12) const { PKCS12_free(p12); }
};
struct KeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct StackDeleter {
  void operator()(STACK_OF(X509) * certs) const { sk_X509_pop_free(certs, X509_free); }
};

// The oldest OpenSSL error on this thread, cleared, for a message.
std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown error";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

absl::StatusOr<std::string> CertToPem(X509* cert) {
  std::unique_ptr<BIO, BioDeleter> out(BIO_new(BIO_s_mem()));
  if (out == nullptr || PEM_write_bio_X509(out.get(), cert) != 1) {
    return absl::InternalError(StrCat("cannot write a certificate as PEM: ", OpenSslError()));
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

absl::StatusOr<std::string> DerToPem(std::string_view der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<X509, X509Deleter> cert(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
  if (cert == nullptr) {
    return absl::InvalidArgumentError(StrCat("a certificate entry is not X.509: ", OpenSslError()));
  }
  return CertToPem(cert.get());
}

// Big-endian reads over Java's DataOutputStream encoding; each sets `ok_` false past the end.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  uint32_t U32() { return static_cast<uint32_t>(Read(4)); }
  uint64_t U64() { return Read(8); }
  std::string_view Bytes(size_t n) {
    if (!ok_ || bytes_.size() - offset_ < n) {
      ok_ = false;
      return {};
    }
    std::string_view out = bytes_.substr(offset_, n);
    offset_ += n;
    return out;
  }
  // Java's writeUTF: a 2-byte length, then (modified) UTF-8.
  std::string_view Utf() { return Bytes(static_cast<size_t>(Read(2))); }
  bool ok() const { return ok_; }
  size_t offset() const { return offset_; }

 private:
  uint64_t Read(int n) {
    std::string_view raw = Bytes(static_cast<size_t>(n));
    uint64_t value = 0;
    for (char c : raw) value = (value << 8) | static_cast<unsigned char>(c);
    return value;
  }
  std::string_view bytes_;
  size_t offset_ = 0;
  bool ok_ = true;
};

// A UTF-8 password as Java's char[] of it, UTF-16BE; a byte that is not UTF-8 stands for itself.
std::string Utf16Be(std::string_view utf8) {
  std::string out;
  const auto unit = [&out](uint32_t u) {
    out.push_back(static_cast<char>(u >> 8));
    out.push_back(static_cast<char>(u & 0xFF));
  };
  for (size_t i = 0; i < utf8.size();) {
    const auto byte = static_cast<unsigned char>(utf8[i]);
    const int extra = byte >= 0xF0 ? 3 : byte >= 0xE0 ? 2 : byte >= 0xC0 ? 1 : 0;
    uint32_t code = extra == 0 ? byte : byte & (0x3F >> extra);
    bool valid = i + extra < utf8.size() || extra == 0;
    for (int k = 1; valid && k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(utf8[i + k]);
      valid = (next & 0xC0) == 0x80;
      code = (code << 6) | (next & 0x3F);
    }
    if (!valid) {
      code = byte;
      i += 1;
    } else {
      i += static_cast<size_t>(extra) + 1;
    }
    if (code >= 0x10000) {
      code -= 0x10000;
      unit(0xD800 + (code >> 10));
      unit(0xDC00 + (code & 0x3FF));
    } else {
      unit(code);
    }
  }
  return out;
}

absl::Status CheckJksDigest(std::string_view bytes, size_t body_size, std::string_view password) {
  // SHA-1 of the password as Java's chars (UTF-16BE), the whitener, and the file's bytes before
  // the digest.
  const std::string key = Utf16Be(password);
  unsigned char digest[kSha1Size];
  unsigned int size = 0;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (ctx == nullptr || EVP_DigestInit_ex(ctx.get(), EVP_sha1(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), key.data(), key.size()) != 1 ||
      EVP_DigestUpdate(ctx.get(), kJksWhitener.data(), kJksWhitener.size()) != 1 ||
      EVP_DigestUpdate(ctx.get(), bytes.data(), body_size) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest, &size) != 1) {
    return absl::InternalError(StrCat("SHA-1: ", OpenSslError()));
  }
  if (bytes.size() - body_size != kSha1Size ||
      bytes.substr(body_size) != std::string_view(reinterpret_cast<char*>(digest), size)) {
    return absl::InvalidArgumentError(
        "the keystore's integrity check failed: the password is wrong or the file is corrupt");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> JksToPem(std::string_view bytes, std::string_view password) {
  Reader in(bytes);
  const uint32_t magic = in.U32();
  const uint32_t version = in.U32();
  const uint32_t count = in.U32();
  const char* format = magic == kJceksMagic ? "JCEKS" : "JKS";
  if (!in.ok()) return absl::InvalidArgumentError(StrCat("a truncated ", format, " keystore"));
  if (version != 1 && version != 2) {
    return absl::InvalidArgumentError(
        StrCat("a ", format, " keystore of unknown version ", version));
  }
  std::string pem;
  for (uint32_t i = 0; i < count && in.ok(); ++i) {
    const uint32_t tag = in.U32();
    (void)in.Utf();  // alias
    (void)in.U64();  // creation time
    if (tag == kPrivateKeyEntry) {
      // As Java's trust managers read a keystore: the entry's own certificate (its chain's first)
      // is trusted, not the rest of its chain.
      (void)in.Bytes(in.U32());  // the protected key
      const uint32_t chain = in.U32();
      for (uint32_t c = 0; c < chain && in.ok(); ++c) {
        if (version == 2) (void)in.Utf();  // certificate type
        std::string_view der = in.Bytes(in.U32());
        if (c > 0 || !in.ok()) continue;
        absl::StatusOr<std::string> own = DerToPem(der);
        if (!own.ok()) return own.status();
        pem += *own;
      }
    } else if (tag == kTrustedCertEntry) {
      if (version == 2) {
        if (std::string_view type = in.Utf(); in.ok() && type != "X.509") {
          return absl::InvalidArgumentError(StrCat("a certificate of type '", type, "'"));
        }
      }
      std::string_view der = in.Bytes(in.U32());
      if (!in.ok()) break;
      absl::StatusOr<std::string> one = DerToPem(der);
      if (!one.ok()) return one.status();
      pem += *one;
    } else if (tag == kSecretKeyEntry) {
      return absl::InvalidArgumentError(
          StrCat("a ", format, " keystore with a secret-key entry: not a truststore"));
    } else {
      return absl::InvalidArgumentError(StrCat("a ", format, " entry of unknown kind ", tag));
    }
  }
  if (!in.ok()) return absl::InvalidArgumentError(StrCat("a truncated ", format, " keystore"));
  if (!password.empty()) {
    if (absl::Status s = CheckJksDigest(bytes, in.offset(), password); !s.ok()) return s;
  }
  return pem;
}

// OpenSSL's legacy provider (with the default one) in a library context of its own, the calling
// thread's default while it lives: PKCS12 files from older Java (RC2 and 3DES) need it. Nothing
// of it outlives the call.
class LegacyContext {
 public:
  LegacyContext() : ctx_(OSSL_LIB_CTX_new()) {
    if (ctx_ == nullptr) return;
    legacy_ = OSSL_PROVIDER_load(ctx_, "legacy");
    default_ = OSSL_PROVIDER_load(ctx_, "default");
    previous_ = OSSL_LIB_CTX_set0_default(ctx_);
  }
  ~LegacyContext() {
    if (ctx_ == nullptr) return;
    OSSL_LIB_CTX_set0_default(previous_);
    if (legacy_ != nullptr) OSSL_PROVIDER_unload(legacy_);
    if (default_ != nullptr) OSSL_PROVIDER_unload(default_);
    OSSL_LIB_CTX_free(ctx_);
  }
  LegacyContext(const LegacyContext&) = delete;
  LegacyContext& operator=(const LegacyContext&) = delete;

 private:
  OSSL_LIB_CTX* ctx_;
  OSSL_PROVIDER* legacy_ = nullptr;
  OSSL_PROVIDER* default_ = nullptr;
  OSSL_LIB_CTX* previous_ = nullptr;
};

absl::StatusOr<std::string> Pkcs12ToPem(std::string_view bytes, std::string_view password) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::unique_ptr<PKCS12, Pkcs12Deleter> p12(
      d2i_PKCS12(nullptr, &p, static_cast<long>(bytes.size())));
  if (p12 == nullptr) {
    ERR_clear_error();
    return absl::InvalidArgumentError("not a JKS, JCEKS, PKCS12 or PEM truststore");
  }
  const std::string pass(password);
  EVP_PKEY* key_raw = nullptr;
  X509* cert_raw = nullptr;
  STACK_OF(X509)* ca_raw = nullptr;
  // Declared before what it may create, so that it outlives them.
  std::optional<LegacyContext> legacy;
  if (PKCS12_parse(p12.get(), pass.c_str(), &key_raw, &cert_raw, &ca_raw) != 1) {
    const std::string first = OpenSslError();
    legacy.emplace();
    if (PKCS12_parse(p12.get(), pass.c_str(), &key_raw, &cert_raw, &ca_raw) != 1) {
      ERR_clear_error();
      return absl::InvalidArgumentError(
          StrCat("cannot open the PKCS12 truststore (a wrong password?): ", first));
    }
  }
  std::unique_ptr<EVP_PKEY, KeyDeleter> key(key_raw);
  std::unique_ptr<X509, X509Deleter> cert(cert_raw);
  std::unique_ptr<STACK_OF(X509), StackDeleter> ca(ca_raw);
  std::string pem;
  if (cert != nullptr) {
    absl::StatusOr<std::string> one = CertToPem(cert.get());
    if (!one.ok()) return one.status();
    pem += *one;
  }
  for (int i = 0; ca != nullptr && i < sk_X509_num(ca.get()); ++i) {
    absl::StatusOr<std::string> one = CertToPem(sk_X509_value(ca.get(), i));
    if (!one.ok()) return one.status();
    pem += *one;
  }
  return pem;
}

absl::StatusOr<std::string> PemCertificates(std::string_view bytes) {
  constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----";
  if (bytes.size() > kMaxTrustStoreBytes) {
    return absl::InvalidArgumentError("a PEM file over 64 MiB is not a truststore");
  }
  std::unique_ptr<BIO, BioDeleter> in(
      BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
  std::string pem;
  size_t expected = 0;
  for (size_t at = bytes.find(kBegin); at != std::string_view::npos;
       at = bytes.find(kBegin, at + 1)) {
    ++expected;
  }
  for (size_t i = 0; i < expected; ++i) {
    std::unique_ptr<X509, X509Deleter> cert(PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr));
    if (cert == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("certificate ", i + 1, " of the PEM file cannot be read: ", OpenSslError()));
    }
    absl::StatusOr<std::string> one = CertToPem(cert.get());
    if (!one.ok()) return one.status();
    pem += *one;
  }
  ERR_clear_error();
  return pem;
}

}  // namespace

absl::StatusOr<std::string> TrustStoreToPem(std::string_view bytes, std::string_view password) {
  absl::StatusOr<std::string> pem;
  Reader magic(bytes);
  const uint32_t first = magic.U32();
  if (magic.ok() && (first == kJksMagic || first == kJceksMagic)) {
    pem = JksToPem(bytes, password);
  } else if (bytes.find("-----BEGIN CERTIFICATE-----") != std::string_view::npos) {
    pem = PemCertificates(bytes);
  } else {
    pem = Pkcs12ToPem(bytes, password);
  }
  if (pem.ok() && pem->empty()) {
    return absl::InvalidArgumentError("the truststore holds no trusted certificate");
  }
  return pem;
}

absl::StatusOr<std::string> LoadTrustStore(const std::string& path, std::string_view password) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::InvalidArgumentError(StrCat(path, ": cannot be read"));
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  absl::StatusOr<std::string> pem = TrustStoreToPem(bytes, password);
  if (!pem.ok()) {
    return absl::Status(pem.status().code(), StrCat(path, ": ", ToStd(pem.status().message())));
  }
  return pem;
}

absl::StatusOr<http::Tls> ClientTls(const HadoopConf& conf) {
  const std::string name = conf.Get("hadoop.ssl.client.conf");
  const std::string path = conf.FindFile(name);
  if (path.empty()) return http::Tls{};  // the system's authorities
  config::Configuration ssl;
  if (absl::Status s = ssl.LoadXmlFile(path, config::SourceKind::kSiteFile); !s.ok()) {
    return absl::InvalidArgumentError(
        StrCat("hadoop.ssl.client.conf (", name, "): ", ToStd(s.message())));
  }
  const auto value = [&ssl](std::string_view key) {
    const config::ConfigEntry* entry = ssl.Find(key);
    return entry != nullptr ? std::string(StripWhitespace(entry->value)) : std::string();
  };
  const std::string location = value("ssl.client.truststore.location");
  if (location.empty()) return http::Tls{};
  absl::StatusOr<std::string> pem =
      LoadTrustStore(location, value("ssl.client.truststore.password"));
  if (!pem.ok()) {
    return absl::InvalidArgumentError(
        StrCat("ssl.client.truststore.location in ", path, ": ", ToStd(pem.status().message())));
  }
  return http::Tls{*std::move(pem), StrCat("the truststore ", location, " (", path, ")")};
}

}  // namespace tony::hadoop
