#pragma once
// DIGEST-MD5's security layer (RFC 2831 2.3 and 2.4), client side, on OpenSSL's libcrypto.
//
// Keys come from H(A1), the binary MD5 of the handshake's A1:
//   Kic/Kis = MD5(H(A1) + "Digest session key to {client-to-server,server-to-client} signing key
//             magic constant")
//   Kcc/Kcs = MD5(H(A1)[0..16) + "Digest H(A1) to {client-to-server,server-to-client} sealing key
//             magic constant")
// A token is
//   integrity (auth-int):       msg + HMAC-MD5(Ki, seq + msg)[0..10) + 0x0001 + seq
//   confidentiality (auth-conf): E(Kc, msg + pad + HMAC-MD5(Ki, seq + msg)[0..10)) + 0x0001 + seq
// with seq a 4-byte big-endian count of the messages sent (or received) so far, each direction
// its own. Ciphers: "3des" (DES-EDE3-CBC with keys K1,K2,K1 made from the first 14 bytes of Kc
// and IV = Kc[8..16), the CBC state running on across messages; pad is 1..8 bytes each equal to
// its length) and "rc4" (a running RC4 stream keyed with the 16 bytes of Kc, no pad), the latter
// only where OpenSSL's legacy provider can be loaded. The weak des, rc4-40 and rc4-56 are not
// offered.
//
// Wrap takes at most max_wrap_size() bytes: a sender splits longer data (Hadoop's client wraps its
// stream in pieces of the negotiated raw send size). Unwrap takes a token of any size, since
// Hadoop's server wraps each whole response in one token, maxbuf or not; bounding what is read is
// the connection's job.
//
// Unwrap refuses a token whose message type, sequence number (so replays, losses and reordering),
// MAC or padding is wrong. After any failure the layer stays failed: the cipher and sequence
// state are no longer in step with the server's, and the connection must be dropped.
//
// Threads: one connection, one thread (Wrap and Unwrap from different threads need a lock).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

struct evp_cipher_st;  // OpenSSL's EVP_CIPHER

namespace tony::hadoop {

enum class DigestMd5Cipher { k3Des, kRc4 };

// The RFC's name of a cipher ("3des", "rc4").
std::string_view DigestMd5CipherName(DigestMd5Cipher cipher);
// Whether this process's OpenSSL can run the cipher (rc4 needs the legacy provider).
bool DigestMd5CipherAvailable(DigestMd5Cipher cipher);
// MD5 of `data` as 16 raw bytes (H() of RFC 2831, for the mechanism and its keys), or "" if
// OpenSSL refuses.
std::string Md5(std::string_view data);

class DigestMd5SecurityLayer {
 public:
  // `ha1` is H(A1), 16 bytes. Without a cipher the layer gives integrity only (auth-int).
  // `server_maxbuf` is the largest token the server accepts.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DigestMd5SecurityLayer>> Create(
      std::string_view ha1, std::optional<DigestMd5Cipher> cipher, size_t server_maxbuf);
  ~DigestMd5SecurityLayer();
  DigestMd5SecurityLayer(const DigestMd5SecurityLayer&) = delete;
  DigestMd5SecurityLayer& operator=(const DigestMd5SecurityLayer&) = delete;

  [[nodiscard]] absl::StatusOr<std::string> Wrap(std::string_view message);
  [[nodiscard]] absl::StatusOr<std::string> Unwrap(std::string_view token);
  // The largest message whose token fits the server's maxbuf.
  size_t max_wrap_size() const { return max_wrap_size_; }

 private:
  struct CipherState;
  DigestMd5SecurityLayer() = default;
  static absl::StatusOr<std::unique_ptr<CipherState>> NewCipherState(DigestMd5Cipher cipher,
                                                                     const evp_cipher_st* evp,
                                                                     const std::string& kc,
                                                                     bool encrypt);
  absl::StatusOr<std::string> UnwrapChecked(std::string_view token);

  std::string send_integrity_key_;     // Kic
  std::string receive_integrity_key_;  // Kis
  std::optional<DigestMd5Cipher> cipher_;
  std::unique_ptr<CipherState> encrypt_;  // with Kcc; null for auth-int
  std::unique_ptr<CipherState> decrypt_;  // with Kcs
  uint32_t send_sequence_ = 0;
  uint32_t receive_sequence_ = 0;
  size_t max_wrap_size_ = 0;
  bool failed_ = false;
};

}  // namespace tony::hadoop
