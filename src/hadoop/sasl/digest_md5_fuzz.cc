// libFuzzer target for what a DIGEST-MD5 server (or anything pretending to be one) can send tony:
// the challenge and the final rspauth message, through the parser and the whole mechanism, and
// security-layer tokens through Unwrap under auth-int, 3des and rc4. Any input must give a value
// or an error Status, never a crash, a hang or a sanitizer report.
//
// The input is the challenge; cut at each "\n--\n", its pieces are also tokens for Unwrap.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hadoop/sasl/digest_md5_challenge.h"
#include "hadoop/sasl/digest_md5_mechanism.h"
#include "hadoop/sasl/digest_md5_security_layer.h"

namespace {

using tony::hadoop::DigestMd5Cipher;
using tony::hadoop::DigestMd5SecurityLayer;

void CheckChallenge(std::string_view input) {
  absl::StatusOr<tony::hadoop::DigestMd5Challenge> challenge =
      tony::hadoop::ParseDigestMd5Challenge(input);
  if (challenge.ok()) {
    // What the parser promises.
    if (challenge->nonce.empty() || challenge->qops.empty()) __builtin_trap();
    if (challenge->maxbuf <= 16 || challenge->maxbuf >= 16777216) __builtin_trap();
  }
  absl::StatusOr<std::string> rspauth = tony::hadoop::ParseDigestMd5ResponseAuth(input);
  if (rspauth.ok() && rspauth->size() != 32) __builtin_trap();

  tony::hadoop::DigestMd5Options options;
  options.cnonce = []() -> absl::StatusOr<std::string> { return std::string("fuzz-cnonce"); };
  tony::hadoop::DigestMd5Mechanism mechanism("user", "password", options);
  tony::hadoop::proto::SaslAuthOffer offer;
  offer.set_protocol("");
  offer.set_server_id("default");
  if (!mechanism.Start(offer).ok()) __builtin_trap();
  absl::StatusOr<std::string> response = mechanism.Evaluate(input);
  if (response.ok() && !input.empty()) {
    (void)mechanism.Evaluate(input);  // as the final message: a rspauth that cannot match
    if (mechanism.complete()) __builtin_trap();
  }
}

void CheckTokens(std::string_view input, std::optional<DigestMd5Cipher> cipher) {
  if (cipher.has_value() && !tony::hadoop::DigestMd5CipherAvailable(*cipher)) return;
  absl::StatusOr<std::unique_ptr<DigestMd5SecurityLayer>> layer =
      DigestMd5SecurityLayer::Create(std::string(16, '\x5a'), cipher, 65536);
  if (!layer.ok()) __builtin_trap();
  bool failed = false;
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find("\n--\n", start);
    if (end == std::string_view::npos) end = input.size();
    absl::StatusOr<std::string> message = (*layer)->Unwrap(input.substr(start, end - start));
    // Once refused, always refused.
    if (failed && message.ok()) __builtin_trap();
    failed = failed || !message.ok();
    start = end + 4;
  }
  // Wrap still works after any Unwrap that did not fail.
  if (!failed && !(*layer)->Wrap("after").ok()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckChallenge(input);
  CheckTokens(input, std::nullopt);
  CheckTokens(input, DigestMd5Cipher::k3Des);
  CheckTokens(input, DigestMd5Cipher::kRc4);
  return 0;
}
