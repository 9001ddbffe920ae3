#include "rpc/secret.h"

#include <sys/random.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "common/files.h"
#include "common/strings.h"
#include "grpcpp/client_context.h"
#include "grpcpp/server_context.h"

namespace tony::rpc {

absl::StatusOr<std::string> GenerateSecret() {
  unsigned char bytes[32];
  size_t filled = 0;
  while (filled < sizeof(bytes)) {
    ssize_t n = getrandom(bytes + filled, sizeof(bytes) - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(StrCat("getrandom: ", std::strerror(errno)));
    filled += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string secret;
  for (unsigned char b : bytes) {
    secret.push_back(kHex[b >> 4]);
    secret.push_back(kHex[b & 15]);
  }
  return secret;
}

absl::StatusOr<std::string> ReadSecretFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(StrCat("secret file ", path, ": ", std::strerror(errno)));
  }
  if ((st.st_mode & 077) != 0) {
    return absl::PermissionDeniedError(
        StrCat("secret file ", path, " is readable by others; expected mode 0600"));
  }
  absl::StatusOr<std::string> secret = ReadFile(path);
  if (!secret.ok()) return secret.status();
  std::string value(StripWhitespace(*secret));
  if (value.empty()) return absl::InvalidArgumentError(StrCat("secret file ", path, " is empty"));
  return value;
}

void AttachSecret(grpc::ClientContext* context, const std::string& secret) {
  context->AddMetadata(kSecretMetadataKey, secret);
}

bool CallHasSecret(const grpc::CallbackServerContext* context, const std::string& secret) {
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(kSecretMetadataKey);
  if (it == metadata.end() || it->second.size() != secret.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < secret.size(); ++i) {
    diff |= static_cast<unsigned char>(it->second.data()[i] ^ secret[i]);
  }
  return diff == 0;
}

}  // namespace tony::rpc
