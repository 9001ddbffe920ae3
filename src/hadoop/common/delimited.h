#pragma once
// Protobuf messages prefixed by their varint32 length ("delimited"), as Hadoop writes them in its
// IPC frames (ipc/rpc_codec.h) and in the protobuf form of its credentials file
// (common/credentials.h).
//
// Threads: every function is pure and may be called from any thread.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message_lite.h"

namespace tony::hadoop {

// Base-128 varint of a uint32 (1 to 5 bytes), as protobuf writes lengths.
void AppendVarint32(uint32_t value, std::string* out);
// Reads a varint32 at data[*pos] and advances *pos past it. Fails, leaving *pos alone, if the
// varint is truncated, longer than 5 bytes or does not fit 32 bits.
[[nodiscard]] absl::StatusOr<uint32_t> ReadVarint32(std::string_view data, size_t* pos);

// Appends varint32(size) + message bytes.
void AppendDelimited(const google::protobuf::MessageLite& message, std::string* out);
// Parses one delimited message at data[*pos] into *message and advances *pos past it. `what`
// names the message in errors ("RPC response header").
[[nodiscard]] absl::Status ReadDelimited(std::string_view data, size_t* pos,
                                         google::protobuf::MessageLite* message,
                                         std::string_view what);

// Parses a success payload: exactly one delimited message and nothing after it.
[[nodiscard]] absl::Status ParsePayload(std::string_view payload,
                                        google::protobuf::MessageLite* message,
                                        std::string_view what);

}  // namespace tony::hadoop
