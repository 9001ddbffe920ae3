#pragma once
// Hadoop's Writable encodings that tony reads and writes: the zero-compressed variable-length
// integer of WritableUtils (VLong/VInt) and Text (a VInt byte count, then UTF-8 bytes). Used by
// version-0 credentials files.
//
// VLong: values in [-112, 127] are one byte. Otherwise a first byte says the sign and how many
// big-endian magnitude bytes follow (-113..-120: positive, 1..8 bytes; -121..-128: negative, the
// bytes hold the one's complement).
//
// Threads: WritableReader is a plain value over borrowed bytes; the functions are pure.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tony::hadoop {

void WriteVLong(int64_t value, std::string* out);
inline void WriteVInt(int32_t value, std::string* out) { WriteVLong(value, out); }
// VInt byte count, then the bytes.
void WriteText(std::string_view text, std::string* out);

// Reads Writable values from a byte string with strict bounds. Every error names `what` and the
// byte offset. The reader does not own the bytes.
class WritableReader {
 public:
  explicit WritableReader(std::string_view data) : data_(data) {}

  [[nodiscard]] absl::StatusOr<int64_t> ReadVLong(std::string_view what);
  // A VLong that must fit 32 bits.
  [[nodiscard]] absl::StatusOr<int32_t> ReadVInt(std::string_view what);
  // A VInt length in [0, remaining()], then that many bytes.
  [[nodiscard]] absl::StatusOr<std::string> ReadLengthPrefixed(std::string_view what);
  [[nodiscard]] absl::StatusOr<std::string> ReadBytes(size_t count, std::string_view what);
  [[nodiscard]] absl::StatusOr<uint8_t> ReadByte(std::string_view what);

  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace tony::hadoop
