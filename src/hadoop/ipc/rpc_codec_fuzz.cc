// libFuzzer target for what a Hadoop server (or anything pretending to be one) can send tony: IPC
// response frames, the SASL messages inside them, credentials files and WebHDFS token strings. Any
// input must give a value or an error Status, never a crash, a hang or a sanitizer report.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hadoop/common/credentials.h"
#include "hadoop/ipc/ipc.pb.h"
#include "hadoop/ipc/rpc_codec.h"
#include "hadoop/sasl/sasl.pb.h"

namespace {

void CheckFrame(const absl::StatusOr<tony::hadoop::ResponseFrame>& frame) {
  if (!frame.ok()) return;
  tony::hadoop::proto::RpcSasl sasl;
  (void)tony::hadoop::ParsePayload(frame->payload, &sasl, "SASL message");
  if (frame->header.status() != tony::hadoop::proto::RPC_STATUS_SUCCESS) {
    absl::Status status = tony::hadoop::RemoteErrorStatus(frame->header, "fuzz");
    std::optional<tony::hadoop::RemoteError> remote = tony::hadoop::GetRemoteError(status);
    if (!remote.has_value() || status.ok()) __builtin_trap();  // an error stays an error
  }
  // What the decoder accepted must survive a re-encode and decode unchanged.
  tony::hadoop::proto::RpcResponseHeader header = frame->header;
  std::string again = tony::hadoop::EncodeFrame({&header});
  absl::StatusOr<tony::hadoop::ResponseFrame> back = tony::hadoop::DecodeResponseFrame(again);
  if (!back.ok() || back->call_id != frame->call_id) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckFrame(tony::hadoop::DecodeResponseFrame(input));
  CheckFrame(tony::hadoop::DecodeResponseBody(input));

  size_t pos = 0;
  while (pos < input.size()) {
    size_t before = pos;
    if (!tony::hadoop::ReadVarint32(input, &pos).ok()) break;
    if (pos <= before || pos > input.size()) __builtin_trap();  // must advance, within bounds
  }

  absl::StatusOr<tony::hadoop::Credentials> credentials =
      tony::hadoop::Credentials::Parse(input, "fuzz");
  if (credentials.ok()) {
    for (auto format : {tony::hadoop::Credentials::Format::kWritable,
                        tony::hadoop::Credentials::Format::kProtobuf}) {
      absl::StatusOr<tony::hadoop::Credentials> back =
          tony::hadoop::Credentials::Parse(credentials->Serialize(format), "again");
      if (!back.ok() || !(*back == *credentials)) __builtin_trap();  // what tony writes it reads
    }
  }
  // A WebHDFS delegation token string (GETDELEGATIONTOKEN's urlString): a token, or an error;
  // what decodes re-encodes to a string that decodes to the same token.
  absl::StatusOr<tony::hadoop::Token> token = tony::hadoop::DecodeTokenUrlString(input);
  if (token.ok()) {
    absl::StatusOr<tony::hadoop::Token> again =
        tony::hadoop::DecodeTokenUrlString(tony::hadoop::EncodeTokenUrlString(*token));
    if (!again.ok() || !(*again == *token)) __builtin_trap();
  }
  // A delegation token's identifier (the AM reads when tokens die): fields, or an error.
  (void)tony::hadoop::DecodeDelegationTokenIdentifier(input);
  return 0;
}
