#include "hadoop/sasl/digest_md5_security_layer.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/provider.h>

#include "absl/status/status.h"
#include "common/strings.h"

namespace tony::hadoop {
namespace {

constexpr char kClientSigningMagic[] =
    "Digest session key to client-to-server signing key magic constant";
constexpr char kServerSigningMagic[] =
    "Digest session key to server-to-client signing key magic constant";
constexpr char kClientSealingMagic[] =
    "Digest H(A1) to client-to-server sealing key magic constant";
constexpr char kServerSealingMagic[] =
    "Digest H(A1) to server-to-client sealing key magic constant";

constexpr size_t kMacSize = 10;
constexpr size_t kTrailerSize = 6;  // message type (2) and sequence number (4)
constexpr size_t kDesBlock = 8;

// HMAC-MD5(key, seq + message)[0..10).
std::string Mac(const std::string& key, std::string_view sequence, std::string_view message) {
  std::string input = StrCat(sequence, message);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (HMAC(EVP_md5(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest,
           &length) == nullptr ||
      length < kMacSize) {
    return {};
  }
  return std::string(reinterpret_cast<char*>(digest), kMacSize);
}

std::string BigEndian32(uint32_t value) {
  return {static_cast<char>(value >> 24), static_cast<char>(value >> 16),
          static_cast<char>(value >> 8), static_cast<char>(value)};
}

uint32_t ReadBigEndian32(std::string_view bytes) {
  return (uint32_t{static_cast<uint8_t>(bytes[0])} << 24) |
         (uint32_t{static_cast<uint8_t>(bytes[1])} << 16) |
         (uint32_t{static_cast<uint8_t>(bytes[2])} << 8) | uint32_t{static_cast<uint8_t>(bytes[3])};
}

// A DES key from 56 bits: 7 bits per byte, the low bit of each byte set for odd parity.
std::string DesKeyFrom56Bits(std::string_view seven) {
  uint64_t bits = 0;
  for (char c : seven.substr(0, 7)) bits = (bits << 8) | static_cast<uint8_t>(c);
  std::string key(8, '\0');
  for (int i = 0; i < 8; ++i) {
    auto byte = static_cast<uint8_t>(((bits >> (7 * (7 - i))) & 0x7f) << 1);
    if (__builtin_popcount(byte) % 2 == 0) byte |= 1;
    key[i] = static_cast<char>(byte);
  }
  return key;
}

// RC4 lives in OpenSSL 3's legacy provider, loaded once into a library context of tony's own so
// that the process's default context (and what it offers TLS) is left as it is. Null when the
// provider cannot be loaded (not installed, or a FIPS-only build).
const EVP_CIPHER* Rc4Cipher() {
  static EVP_CIPHER* const rc4 = []() -> EVP_CIPHER* {
    OSSL_LIB_CTX* context = OSSL_LIB_CTX_new();
    if (context == nullptr) return nullptr;
    if (OSSL_PROVIDER_load(context, "legacy") == nullptr) {
      ERR_clear_error();
      OSSL_LIB_CTX_free(context);
      return nullptr;
    }
    // The context and provider stay loaded for the life of the process.
    EVP_CIPHER* cipher = EVP_CIPHER_fetch(context, "RC4", nullptr);
    ERR_clear_error();
    return cipher;
  }();
  return rc4;
}

std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

}  // namespace

struct DigestMd5SecurityLayer::CipherState {
  ~CipherState() { EVP_CIPHER_CTX_free(context); }
  EVP_CIPHER_CTX* context = nullptr;
};

// A running cipher keyed from Kc (16 bytes): 3des takes K1,K2,K1 from Kc[0..14) and its IV from
// Kc[8..16); rc4 takes all of Kc.
absl::StatusOr<std::unique_ptr<DigestMd5SecurityLayer::CipherState>>
DigestMd5SecurityLayer::NewCipherState(DigestMd5Cipher cipher, const EVP_CIPHER* evp,
                                       const std::string& kc, bool encrypt) {
  auto state = std::make_unique<CipherState>();
  state->context = EVP_CIPHER_CTX_new();
  if (state->context == nullptr || kc.size() != 16) {
    return absl::InternalError("DIGEST-MD5: cannot allocate a cipher context");
  }
  std::string key = kc;
  const unsigned char* iv = nullptr;
  if (cipher == DigestMd5Cipher::k3Des) {
    std::string k1 = DesKeyFrom56Bits(std::string_view(kc).substr(0, 7));
    std::string k2 = DesKeyFrom56Bits(std::string_view(kc).substr(7, 7));
    key = StrCat(k1, k2, k1);
    iv = reinterpret_cast<const unsigned char*>(kc.data() + 8);
  }
  if (EVP_CipherInit_ex2(state->context, evp, nullptr, nullptr, encrypt ? 1 : 0, nullptr) != 1 ||
      EVP_CIPHER_CTX_set_key_length(state->context, static_cast<int>(key.size())) != 1 ||
      EVP_CipherInit_ex2(state->context, nullptr,
                         reinterpret_cast<const unsigned char*>(key.data()), iv, -1,
                         nullptr) != 1 ||
      EVP_CIPHER_CTX_set_padding(state->context, 0) != 1) {
    return absl::InternalError(
        StrCat("DIGEST-MD5: cannot set up ", DigestMd5CipherName(cipher), ": ", OpenSslError()));
  }
  return state;
}

std::string Md5(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_md5(), nullptr) != 1) {
    return {};
  }
  return std::string(reinterpret_cast<char*>(digest), length);
}

std::string_view DigestMd5CipherName(DigestMd5Cipher cipher) {
  switch (cipher) {
    case DigestMd5Cipher::k3Des:
      return "3des";
    case DigestMd5Cipher::kRc4:
      return "rc4";
  }
  return "?";
}

bool DigestMd5CipherAvailable(DigestMd5Cipher cipher) {
  return cipher == DigestMd5Cipher::k3Des || Rc4Cipher() != nullptr;
}

absl::StatusOr<std::unique_ptr<DigestMd5SecurityLayer>> DigestMd5SecurityLayer::Create(
    std::string_view ha1, std::optional<DigestMd5Cipher> cipher, size_t server_maxbuf) {
  if (ha1.size() != 16) {
    return absl::InternalError(StrCat("DIGEST-MD5: H(A1) has ", ha1.size(), " bytes, not 16"));
  }
  std::unique_ptr<DigestMd5SecurityLayer> layer(new DigestMd5SecurityLayer());
  layer->send_integrity_key_ = Md5(StrCat(ha1, kClientSigningMagic));
  layer->receive_integrity_key_ = Md5(StrCat(ha1, kServerSigningMagic));
  if (layer->send_integrity_key_.size() != 16 || layer->receive_integrity_key_.size() != 16) {
    return absl::InternalError(StrCat("DIGEST-MD5: MD5 failed: ", OpenSslError()));
  }
  layer->cipher_ = cipher;
  size_t overhead = kMacSize + kTrailerSize;
  if (!cipher.has_value()) {
    layer->max_wrap_size_ = server_maxbuf > overhead ? server_maxbuf - overhead : 0;
  } else {
    const EVP_CIPHER* evp = *cipher == DigestMd5Cipher::k3Des ? EVP_des_ede3_cbc() : Rc4Cipher();
    if (evp == nullptr) {
      return absl::FailedPreconditionError(
          StrCat("DIGEST-MD5: cipher ", DigestMd5CipherName(*cipher),
                 " is not available (OpenSSL's legacy provider cannot be loaded)"));
    }
    // All of these ciphers take n = 16 bytes of H(A1).
    std::string client_key = Md5(StrCat(ha1, kClientSealingMagic));
    std::string server_key = Md5(StrCat(ha1, kServerSealingMagic));
    absl::StatusOr<std::unique_ptr<CipherState>> encrypt =
        NewCipherState(*cipher, evp, client_key, true);
    if (!encrypt.ok()) return encrypt.status();
    absl::StatusOr<std::unique_ptr<CipherState>> decrypt =
        NewCipherState(*cipher, evp, server_key, false);
    if (!decrypt.ok()) return decrypt.status();
    layer->encrypt_ = *std::move(encrypt);
    layer->decrypt_ = *std::move(decrypt);
    if (*cipher == DigestMd5Cipher::k3Des) {
      // The ciphertext (message, 1..8 bytes of pad, MAC) is a whole number of blocks.
      size_t room = server_maxbuf > kTrailerSize ? server_maxbuf - kTrailerSize : 0;
      size_t blocks = room / kDesBlock * kDesBlock;
      layer->max_wrap_size_ = blocks > kMacSize + 1 ? blocks - kMacSize - 1 : 0;
    } else {
      layer->max_wrap_size_ = server_maxbuf > overhead ? server_maxbuf - overhead : 0;
    }
  }
  if (layer->max_wrap_size_ == 0) {
    return absl::InvalidArgumentError(
        StrCat("DIGEST-MD5: the server's maxbuf ", server_maxbuf, " leaves no room for a message"));
  }
  return layer;
}

DigestMd5SecurityLayer::~DigestMd5SecurityLayer() = default;

absl::StatusOr<std::string> DigestMd5SecurityLayer::Wrap(std::string_view message) {
  if (failed_) {
    return absl::FailedPreconditionError(
        "DIGEST-MD5: the security layer failed earlier; the connection must be reopened");
  }
  if (message.size() > max_wrap_size_) {
    return absl::InvalidArgumentError(StrCat("DIGEST-MD5: a message of ", message.size(),
                                             " bytes is over the ", max_wrap_size_,
                                             " the server's maxbuf allows"));
  }
  if (send_sequence_ == UINT32_MAX) {
    return absl::ResourceExhaustedError("DIGEST-MD5: the sequence numbers are used up");
  }
  const std::string sequence = BigEndian32(send_sequence_);
  const std::string mac = Mac(send_integrity_key_, sequence, message);
  if (mac.size() != kMacSize) {
    failed_ = true;
    return absl::InternalError(StrCat("DIGEST-MD5: HMAC-MD5 failed: ", OpenSslError()));
  }
  std::string token;
  if (encrypt_ == nullptr) {
    token = StrCat(message, mac);
  } else {
    std::string plain(message);
    if (cipher_ == DigestMd5Cipher::k3Des) {
      size_t pad = kDesBlock - (message.size() + kMacSize) % kDesBlock;
      plain.append(pad, static_cast<char>(pad));
    }
    plain += mac;
    token.resize(plain.size() + EVP_MAX_BLOCK_LENGTH);
    int length = 0;
    if (EVP_CipherUpdate(encrypt_->context, reinterpret_cast<unsigned char*>(token.data()), &length,
                         reinterpret_cast<const unsigned char*>(plain.data()),
                         static_cast<int>(plain.size())) != 1 ||
        static_cast<size_t>(length) != plain.size()) {
      failed_ = true;
      return absl::InternalError(StrCat("DIGEST-MD5: encryption failed: ", OpenSslError()));
    }
    token.resize(static_cast<size_t>(length));
  }
  token += std::string("\x00\x01", 2);
  token += sequence;
  ++send_sequence_;
  return token;
}

absl::StatusOr<std::string> DigestMd5SecurityLayer::Unwrap(std::string_view token) {
  if (failed_) {
    return absl::FailedPreconditionError(
        "DIGEST-MD5: the security layer failed earlier; the connection must be reopened");
  }
  absl::StatusOr<std::string> message = UnwrapChecked(token);
  if (!message.ok()) failed_ = true;
  return message;
}

absl::StatusOr<std::string> DigestMd5SecurityLayer::UnwrapChecked(std::string_view token) {
  auto refused = [](std::string_view why) {
    return absl::DataLossError(StrCat("DIGEST-MD5: refused a token from the server: ", why));
  };
  const size_t minimum =
      kTrailerSize + (cipher_ == DigestMd5Cipher::k3Des ? 2 * kDesBlock : kMacSize);
  if (token.size() < minimum) {
    return refused(StrCat(token.size(), " bytes is too short"));
  }
  std::string_view body = token.substr(0, token.size() - kTrailerSize);
  std::string_view type = token.substr(token.size() - kTrailerSize, 2);
  std::string_view sequence = token.substr(token.size() - 4);
  if (type != std::string_view("\x00\x01", 2)) return refused("message type is not 1");

  std::string plain;
  if (decrypt_ != nullptr) {
    if (cipher_ == DigestMd5Cipher::k3Des && body.size() % kDesBlock != 0) {
      return refused("ciphertext is not a whole number of 3des blocks");
    }
    plain.resize(body.size() + EVP_MAX_BLOCK_LENGTH);
    int length = 0;
    if (EVP_CipherUpdate(decrypt_->context, reinterpret_cast<unsigned char*>(plain.data()), &length,
                         reinterpret_cast<const unsigned char*>(body.data()),
                         static_cast<int>(body.size())) != 1 ||
        static_cast<size_t>(length) != body.size()) {
      return absl::InternalError(StrCat("DIGEST-MD5: decryption failed: ", OpenSslError()));
    }
    plain.resize(static_cast<size_t>(length));
    body = plain;
  }
  std::string_view mac = body.substr(body.size() - kMacSize);
  std::string_view message = body.substr(0, body.size() - kMacSize);
  if (cipher_ == DigestMd5Cipher::k3Des) {
    auto pad = static_cast<uint8_t>(message.back());
    bool bad = pad < 1 || pad > kDesBlock || pad > message.size();
    for (size_t i = 0; !bad && i < pad; ++i) {
      bad = static_cast<uint8_t>(message[message.size() - 1 - i]) != pad;
    }
    if (bad) return refused("bad padding");
    message.remove_suffix(pad);
  }
  std::string expected = Mac(receive_integrity_key_, sequence, message);
  if (expected.size() != kMacSize || CRYPTO_memcmp(expected.data(), mac.data(), kMacSize) != 0) {
    return refused("MAC does not match (tampered, or not from this session)");
  }
  uint32_t number = ReadBigEndian32(sequence);
  if (number != receive_sequence_) {
    return refused(StrCat("sequence number ", number, " where ", receive_sequence_,
                          " was expected (replayed, lost or reordered)"));
  }
  ++receive_sequence_;
  return std::string(message);
}

}  // namespace tony::hadoop
