#include "hadoop/common/delimited.h"

#include <limits>

#include "common/strings.h"

namespace tony::hadoop {

void AppendVarint32(uint32_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

absl::StatusOr<uint32_t> ReadVarint32(std::string_view data, size_t* pos) {
  uint32_t value = 0;
  size_t at = *pos;
  for (int i = 0; i < 5; ++i, ++at) {
    if (at >= data.size()) {
      return absl::InvalidArgumentError(
          StrCat("truncated varint at byte ", *pos, " of ", data.size()));
    }
    auto byte = static_cast<uint8_t>(data[at]);
    if (i == 4 && byte > 0x0F) {
      return absl::InvalidArgumentError(StrCat("varint at byte ", *pos, " does not fit 32 bits"));
    }
    value |= static_cast<uint32_t>(byte & 0x7F) << (7 * i);
    if ((byte & 0x80) == 0) {
      *pos = at + 1;
      return value;
    }
  }
  return absl::InvalidArgumentError(StrCat("varint at byte ", *pos, " is longer than 5 bytes"));
}

void AppendDelimited(const google::protobuf::MessageLite& message, std::string* out) {
  size_t size = message.ByteSizeLong();
  AppendVarint32(static_cast<uint32_t>(size), out);
  size_t start = out->size();
  out->resize(start + size);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out->data() + start));
}

absl::Status ReadDelimited(std::string_view data, size_t* pos,
                           google::protobuf::MessageLite* message, std::string_view what) {
  size_t at = *pos;
  absl::StatusOr<uint32_t> size = ReadVarint32(data, &at);
  if (!size.ok()) {
    return absl::InvalidArgumentError(
        StrCat("bad length of ", what, ": ", ToStd(size.status().message())));
  }
  if (*size > data.size() - at || *size > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(StrCat(what, " says it has ", *size, " bytes but only ",
                                             data.size() - at, " remain in the frame"));
  }
  if (!message->ParseFromArray(data.data() + at, static_cast<int>(*size))) {
    return absl::InvalidArgumentError(StrCat("cannot parse ", what, " (", *size, " bytes)"));
  }
  *pos = at + *size;
  return absl::OkStatus();
}

absl::Status ParsePayload(std::string_view payload, google::protobuf::MessageLite* message,
                          std::string_view what) {
  size_t pos = 0;
  if (absl::Status s = ReadDelimited(payload, &pos, message, what); !s.ok()) return s;
  if (pos != payload.size()) {
    return absl::InvalidArgumentError(
        StrCat(payload.size() - pos, " unexpected bytes after the ", what));
  }
  return absl::OkStatus();
}

}  // namespace tony::hadoop
