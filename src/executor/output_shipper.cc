#include "executor/output_shipper.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace tony::executor {

OutputShipper::OutputShipper(const std::string& log_dir, int64_t max_bytes, Send send)
    : max_bytes_(max_bytes),
      send_(std::move(send)),
      stdout_{log_dir + "/stdout"},
      stderr_{log_dir + "/stderr"} {}

std::string OutputShipper::NextPiece(const Stream& stream) const {
  const int64_t want = std::min(kPieceBytes, max_bytes_ - stream.sent);
  if (want <= 0) return {};
  if (held_ && stream.fd < 0) return {};
  // Held: the file as it was before the task ran, whatever is at its name now.
  const int fd = held_ ? stream.fd : open(stream.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};  // nothing printed yet
  std::string piece(static_cast<size_t>(want), '\0');
  size_t got = 0;
  while (got < piece.size()) {
    const ssize_t n = pread(fd, piece.data() + got, piece.size() - got,
                            static_cast<off_t>(stream.sent + static_cast<int64_t>(got)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (!held_) close(fd);
  piece.resize(got);
  return piece;
}

bool OutputShipper::Ship(int max_pieces) {
  for (int i = 0; i < max_pieces; ++i) {
    std::string out = NextPiece(stdout_);
    std::string err = NextPiece(stderr_);
    if (out.empty() && err.empty()) return true;
    rpc::AppendOutputRequest request;
    request.set_stdout_offset(stdout_.sent);
    request.set_stderr_offset(stderr_.sent);
    const auto out_size = static_cast<int64_t>(out.size());
    const auto err_size = static_cast<int64_t>(err.size());
    request.set_stdout_data(std::move(out));
    request.set_stderr_data(std::move(err));
    if (!send_(request)) return false;
    stdout_.sent += out_size;
    stderr_.sent += err_size;
  }
  return NextPiece(stdout_).empty() && NextPiece(stderr_).empty();
}

}  // namespace tony::executor
