#pragma once
// For unit tests only: the server side of DIGEST-MD5 (RFC 2831), written apart from
// DigestMd5Mechanism so that the client is checked against a peer that derives every value on its
// own: the challenge, the check of the client's response, rspauth, and the security layer seen
// from the server (it verifies and decrypts with the client-to-server keys, signs and encrypts
// with the server-to-client ones). OpenSSL provides only the primitives (MD5, HMAC, 3DES, RC4).

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/provider.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/strings.h"

namespace tony::hadoop::digest_test {

inline std::string TestMd5(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), out, &length, EVP_md5(), nullptr);
  return std::string(reinterpret_cast<char*>(out), length);
}

inline std::string TestHex(std::string_view bytes) {
  std::string out;
  for (char c : bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    out += kDigits[(c >> 4) & 15];
    out += kDigits[c & 15];
  }
  return out;
}

// key=value pairs of a DIGEST-MD5 message, quotes and escapes removed; the last of a repeated key.
inline std::map<std::string, std::string> TestParseDirectives(std::string_view text) {
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

class DigestMd5TestServer {
 public:
  struct Options {
    std::string password;  // what the server believes the password is
    std::string realm = "default";
    std::string qop = "auth";  // the qop-options it offers
    std::string cipher = "";   // the cipher-opts it offers ("" for none)
    std::string digest_uri = "/default";
    std::string nonce = "OA6MG9tEQGm2hh";
    size_t maxbuf = 0;  // 0: no maxbuf directive (65536)
  };

  explicit DigestMd5TestServer(Options options) : options_(std::move(options)) {}
  ~DigestMd5TestServer() {
    EVP_CIPHER_CTX_free(encrypt_);
    EVP_CIPHER_CTX_free(decrypt_);
  }

  std::string Challenge() const {
    std::string out = StrCat("realm=\"", options_.realm, "\",nonce=\"", options_.nonce, "\",qop=\"",
                             options_.qop, "\"");
    if (options_.maxbuf != 0) out += StrCat(",maxbuf=", options_.maxbuf);
    if (!options_.cipher.empty()) out += StrCat(",cipher=\"", options_.cipher, "\"");
    return out + ",charset=utf-8,algorithm=md5-sess";
  }

  // Checks the client's digest-response; gives the response-auth ("rspauth=...") and sets up the
  // security layer the client chose.
  absl::StatusOr<std::string> Verify(std::string_view response) {
    std::map<std::string, std::string> d = TestParseDirectives(response);
    if (d["nonce"] != options_.nonce) return absl::PermissionDeniedError("nonce");
    if (d["digest-uri"] != options_.digest_uri) return absl::PermissionDeniedError("digest-uri");
    if (d["nc"] != "00000001") return absl::PermissionDeniedError("nc");
    if (d["realm"] != options_.realm) return absl::PermissionDeniedError("realm");
    qop_ = d["qop"];
    if (qop_.empty() || !Contains(options_.qop, qop_)) return absl::PermissionDeniedError("qop");
    cipher_ = d["cipher"];
    if (qop_ == "auth-conf" && (cipher_.empty() || !Contains(options_.cipher, cipher_))) {
      return absl::PermissionDeniedError("cipher");
    }
    const std::string cnonce = d["cnonce"];
    ha1_ =
        TestMd5(StrCat(TestMd5(StrCat(d["username"], ":", options_.realm, ":", options_.password)),
                       ":", options_.nonce, ":", cnonce));
    std::string suffix = qop_ == "auth" ? "" : ":00000000000000000000000000000000";
    auto kd = [&](const std::string& a2) {
      return TestHex(TestMd5(StrCat(TestHex(ha1_), ":", options_.nonce, ":00000001:", cnonce, ":",
                                    qop_, ":", TestHex(TestMd5(a2)))));
    };
    if (d["response"] != kd(StrCat("AUTHENTICATE:", options_.digest_uri, suffix))) {
      return absl::PermissionDeniedError("response");
    }
    if (qop_ != "auth") SetUpLayer();
    return StrCat("rspauth=", kd(StrCat(":", options_.digest_uri, suffix)));
  }

  const std::string& qop() const { return qop_; }
  const std::string& cipher() const { return cipher_; }

  // A token for the client: the server-to-client keys and the server's sequence number.
  // `first_pad_byte`, when set, replaces the first byte of 3des padding (to test its check).
  std::string Wrap(std::string_view message, std::optional<uint8_t> first_pad_byte = {}) {
    std::string seq = BigEndian(send_seq_++);
    std::string mac = Hmac(kis_, seq + std::string(message)).substr(0, 10);
    std::string body;
    if (qop_ == "auth-int") {
      body = StrCat(message, mac);
    } else {
      std::string plain(message);
      if (cipher_ == "3des") {
        size_t pad = 8 - (message.size() + 10) % 8;
        plain.append(pad, static_cast<char>(pad));
        if (first_pad_byte) plain[message.size()] = static_cast<char>(*first_pad_byte);
      }
      body = Crypt(encrypt_, plain + mac);
    }
    return body + std::string("\x00\x01", 2) + seq;
  }

  // Checks a token from the client with the client-to-server keys; error on any mismatch.
  absl::StatusOr<std::string> Unwrap(std::string_view token) {
    if (token.size() < 16) return absl::DataLossError("short");
    std::string seq(token.substr(token.size() - 4));
    if (token.substr(token.size() - 6, 2) != std::string_view("\x00\x01", 2)) {
      return absl::DataLossError("type");
    }
    if (seq != BigEndian(receive_seq_)) return absl::DataLossError("sequence");
    std::string body(token.substr(0, token.size() - 6));
    if (qop_ == "auth-conf") body = Crypt(decrypt_, body);
    std::string mac = body.substr(body.size() - 10);
    std::string message = body.substr(0, body.size() - 10);
    if (cipher_ == "3des") {
      size_t pad = static_cast<uint8_t>(message.back());
      if (pad < 1 || pad > 8 ||
          message.find_first_not_of(static_cast<char>(pad), message.size() - pad) !=
              std::string::npos) {
        return absl::DataLossError("padding");
      }
      message.resize(message.size() - pad);
    }
    if (Hmac(kic_, seq + message).substr(0, 10) != mac) return absl::DataLossError("mac");
    ++receive_seq_;
    return message;
  }

  // The process-wide RC4 of the legacy provider, or null.
  static const EVP_CIPHER* Rc4() {
    static const EVP_CIPHER* rc4 = [] {
      OSSL_LIB_CTX* context = OSSL_LIB_CTX_new();
      return OSSL_PROVIDER_load(context, "legacy") == nullptr
                 ? nullptr
                 : EVP_CIPHER_fetch(context, "RC4", nullptr);
    }();
    return rc4;
  }

 private:
  static std::string BigEndian(uint32_t n) {
    return {static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
            static_cast<char>(n)};
  }
  static std::string Hmac(const std::string& key, const std::string& data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    HMAC(EVP_md5(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &length);
    return std::string(reinterpret_cast<char*>(out), length);
  }
  // 56 key bits, most significant first, spread over 8 bytes as bits 7..1; bit 0 odd parity.
  static std::string DesKey(std::string_view seven) {
    std::string key;
    for (int out = 0; out < 8; ++out) {
      uint8_t byte = 0;
      for (int bit = 0; bit < 7; ++bit) {
        int index = out * 7 + bit;
        int set = (static_cast<uint8_t>(seven[index / 8]) >> (7 - index % 8)) & 1;
        byte |= static_cast<uint8_t>(set << (7 - bit));
      }
      int ones = 0;
      for (int bit = 1; bit < 8; ++bit) ones += (byte >> bit) & 1;
      if (ones % 2 == 0) byte |= 1;
      key.push_back(static_cast<char>(byte));
    }
    return key;
  }
  static std::string Crypt(EVP_CIPHER_CTX* context, const std::string& in) {
    std::string out(in.size() + 16, '\0');
    int length = 0;
    EVP_CipherUpdate(context, reinterpret_cast<unsigned char*>(out.data()), &length,
                     reinterpret_cast<const unsigned char*>(in.data()),
                     static_cast<int>(in.size()));
    out.resize(static_cast<size_t>(length));
    return out;
  }
  EVP_CIPHER_CTX* NewCipher(const std::string& kc, bool encrypt) {
    EVP_CIPHER_CTX* context = EVP_CIPHER_CTX_new();
    if (cipher_ == "3des") {
      std::string k1 = DesKey(kc.substr(0, 7)), k2 = DesKey(kc.substr(7, 7));
      std::string key = k1 + k2 + k1;
      EVP_CipherInit_ex(context, EVP_des_ede3_cbc(), nullptr,
                        reinterpret_cast<const unsigned char*>(key.data()),
                        reinterpret_cast<const unsigned char*>(kc.data() + 8), encrypt ? 1 : 0);
      EVP_CIPHER_CTX_set_padding(context, 0);
    } else {
      EVP_CipherInit_ex(context, Rc4(), nullptr, reinterpret_cast<const unsigned char*>(kc.data()),
                        nullptr, encrypt ? 1 : 0);
    }
    return context;
  }
  void SetUpLayer() {
    kic_ = TestMd5(ha1_ + "Digest session key to client-to-server signing key magic constant");
    kis_ = TestMd5(ha1_ + "Digest session key to server-to-client signing key magic constant");
    if (qop_ != "auth-conf") return;
    std::string kcc = TestMd5(ha1_ + "Digest H(A1) to client-to-server sealing key magic constant");
    std::string kcs = TestMd5(ha1_ + "Digest H(A1) to server-to-client sealing key magic constant");
    decrypt_ = NewCipher(kcc, false);
    encrypt_ = NewCipher(kcs, true);
  }

  Options options_;
  std::string qop_, cipher_, ha1_, kic_, kis_;
  EVP_CIPHER_CTX* encrypt_ = nullptr;
  EVP_CIPHER_CTX* decrypt_ = nullptr;
  uint32_t send_seq_ = 0, receive_seq_ = 0;
};

}  // namespace tony::hadoop::digest_test
