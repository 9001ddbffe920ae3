#include "hadoop/common/writable.h"

#include <limits>

#include "common/strings.h"

namespace tony::hadoop {
namespace {

// How many bytes (first byte included) a VLong with this first byte takes.
int EncodedSize(int8_t first) {
  if (first >= -112) return 1;
  if (first < -120) return -119 - first;
  return -111 - first;
}

bool IsNegative(int8_t first) { return first < -120 || (first >= -112 && first < 0); }

}  // namespace

void WriteVLong(int64_t value, std::string* out) {
  if (value >= -112 && value <= 127) {
    out->push_back(static_cast<char>(value));
    return;
  }
  int first = -112;
  uint64_t magnitude = static_cast<uint64_t>(value);
  if (value < 0) {
    magnitude = ~magnitude;  // one's complement: -113 -> 112
    first = -120;
  }
  int bytes = 0;
  for (uint64_t rest = magnitude; rest != 0; rest >>= 8) ++bytes;
  out->push_back(static_cast<char>(first - bytes));
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>(magnitude >> (8 * i)));
}

void WriteText(std::string_view text, std::string* out) {
  WriteVInt(static_cast<int32_t>(text.size()), out);
  out->append(text);
}

absl::StatusOr<uint8_t> WritableReader::ReadByte(std::string_view what) {
  if (remaining() < 1) {
    return absl::InvalidArgumentError(StrCat("truncated ", what, " at byte ", pos_));
  }
  return static_cast<uint8_t>(data_[pos_++]);
}

absl::StatusOr<int64_t> WritableReader::ReadVLong(std::string_view what) {
  size_t start = pos_;
  absl::StatusOr<uint8_t> first_byte = ReadByte(what);
  if (!first_byte.ok()) return first_byte.status();
  int8_t first = static_cast<int8_t>(*first_byte);
  int size = EncodedSize(first);
  if (size == 1) return first;
  if (remaining() < static_cast<size_t>(size - 1)) {
    pos_ = start;
    return absl::InvalidArgumentError(
        StrCat("truncated ", what, " at byte ", start, ": needs ", size - 1, " more bytes"));
  }
  uint64_t magnitude = 0;
  for (int i = 1; i < size; ++i) magnitude = (magnitude << 8) | static_cast<uint8_t>(data_[pos_++]);
  return static_cast<int64_t>(IsNegative(first) ? ~magnitude : magnitude);
}

absl::StatusOr<int32_t> WritableReader::ReadVInt(std::string_view what) {
  size_t start = pos_;
  absl::StatusOr<int64_t> value = ReadVLong(what);
  if (!value.ok()) return value.status();
  if (*value > std::numeric_limits<int32_t>::max() ||
      *value < std::numeric_limits<int32_t>::min()) {
    pos_ = start;
    return absl::InvalidArgumentError(
        StrCat(what, " at byte ", start, " is ", *value, ", too large for a 32-bit int"));
  }
  return static_cast<int32_t>(*value);
}

absl::StatusOr<std::string> WritableReader::ReadBytes(size_t count, std::string_view what) {
  if (count > remaining()) {
    return absl::InvalidArgumentError(StrCat("truncated ", what, " at byte ", pos_, ": needs ",
                                             count, " bytes, ", remaining(), " remain"));
  }
  std::string bytes(data_.substr(pos_, count));
  pos_ += count;
  return bytes;
}

absl::StatusOr<std::string> WritableReader::ReadLengthPrefixed(std::string_view what) {
  size_t start = pos_;
  absl::StatusOr<int32_t> length = ReadVInt(StrCat("length of ", what));
  if (!length.ok()) return length.status();
  if (*length < 0) {
    pos_ = start;
    return absl::InvalidArgumentError(
        StrCat("negative length ", *length, " of ", what, " at byte ", start));
  }
  absl::StatusOr<std::string> bytes = ReadBytes(static_cast<size_t>(*length), what);
  if (!bytes.ok()) pos_ = start;
  return bytes;
}

}  // namespace tony::hadoop
