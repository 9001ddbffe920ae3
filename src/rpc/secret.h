#pragma once
// The job's secret: created by the client, stored in a file only its user can read, and sent
// with every control-plane call. Any thread.

#include <string>

#include "absl/status/statusor.h"

namespace grpc {
class ClientContext;
class CallbackServerContext;
}  // namespace grpc

namespace tony::rpc {

inline constexpr char kSecretMetadataKey[] = "x-tony-secret";

// 32 random bytes from the kernel, hex-encoded.
absl::StatusOr<std::string> GenerateSecret();
// Reads a secret file, refusing one that others can read.
absl::StatusOr<std::string> ReadSecretFile(const std::string& path);

void AttachSecret(grpc::ClientContext* context, const std::string& secret);
// Constant-time comparison with the secret the call carries.
bool CallHasSecret(const grpc::CallbackServerContext* context, const std::string& secret);

}  // namespace tony::rpc
