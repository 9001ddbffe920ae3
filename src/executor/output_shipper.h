#pragma once
// Sends what a task's user process printed (the stdout and stderr files in its log directory) to
// the AM for the job's history: new bytes in order, in pieces the AM accepts
// (rpc::kAmMaxReceiveBytes), each range once. A piece the AM did not take is sent again by the
// next call. At most `max_bytes` of each stream are sent.
//
// Thread: the executor's supervision loop.

#include <cstdint>
#include <functional>
#include <string>

#include "rpc/tony.pb.h"

namespace tony::executor {

class OutputShipper {
 public:
  // Delivers one piece; false if the AM did not take it.
  using Send = std::function<bool(const rpc::AppendOutputRequest&)>;
  // Bytes of each stream in one piece.
  static constexpr int64_t kPieceBytes = int64_t{96} * 1024;

  OutputShipper(const std::string& log_dir, int64_t max_bytes, Send send);

  // Sends what was printed since the last call, in at most `max_pieces` pieces. Returns true when
  // nothing is left to send (all of it, or all up to max_bytes), false when more is waiting or a
  // piece was refused.
  bool Ship(int max_pieces);
  // From now on reads the streams from these descriptors (the caller's, kept open by it), never by
  // their names, which the task can change; -1: that stream is not shipped.
  void UseFiles(int stdout_fd, int stderr_fd) {
    held_ = true;
    stdout_.fd = stdout_fd;
    stderr_.fd = stderr_fd;
  }

  int64_t sent_stdout() const { return stdout_.sent; }
  int64_t sent_stderr() const { return stderr_.sent; }

 private:
  struct Stream {
    std::string path;
    int64_t sent = 0;
    int fd = -1;  // with held_
  };
  // Up to kPieceBytes of the stream past what was sent (and within max_bytes).
  std::string NextPiece(const Stream& stream) const;

  const int64_t max_bytes_;
  const Send send_;
  Stream stdout_;
  Stream stderr_;
  bool held_ = false;  // UseFiles was called
};

}  // namespace tony::executor
