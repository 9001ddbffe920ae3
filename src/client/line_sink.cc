#include "client/line_sink.h"

namespace tony::client {

void LineSink::Write(const std::string& text) {
  MutexLock lock(mu_);
  target_ << text << std::flush;
}

LineWriter::LineWriter(LineSink& sink) : std::ostream(nullptr), buffer_(sink) { rdbuf(&buffer_); }

LineWriter::~LineWriter() { buffer_.pubsync(); }

LineWriter::Buffer::int_type LineWriter::Buffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  pending_.push_back(traits_type::to_char_type(c));
  if (pending_.back() == '\n') PassLines();
  return c;
}

std::streamsize LineWriter::Buffer::xsputn(const char* s, std::streamsize n) {
  pending_.append(s, static_cast<size_t>(n));
  PassLines();
  return n;
}

int LineWriter::Buffer::sync() {
  if (!pending_.empty()) {
    sink_.Write(pending_);
    pending_.clear();
  }
  return 0;
}

void LineWriter::Buffer::PassLines() {
  const size_t end = pending_.rfind('\n');
  if (end == std::string::npos) return;
  sink_.Write(pending_.substr(0, end + 1));
  pending_.erase(0, end + 1);
}

}  // namespace tony::client
