#pragma once
// Whole lines to one stream from several threads: `tony submit --tee` prints the tasks' lines
// (its tee thread) beside its own progress lines (the main thread) on the same stdout, and
// neither may cut into a line of the other. Each thread writes through a LineWriter of its own;
// a writer hands the sink one complete line at a time, and the sink writes each under its lock.
// A flush (std::flush, std::endl) also passes on a partial line.
//
// Threads: a LineSink is shared; each LineWriter belongs to one thread.

#include <ostream>
#include <streambuf>
#include <string>

#include "common/mutex.h"

namespace tony::client {

class LineSink {
 public:
  explicit LineSink(std::ostream& target) : target_(target) {}
  LineSink(const LineSink&) = delete;
  LineSink& operator=(const LineSink&) = delete;

  // Writes `text` (whole lines, or what a writer flushed) and flushes the target.
  void Write(const std::string& text);

 private:
  Mutex mu_;
  std::ostream& target_ TONY_GUARDED_BY(mu_);
};

class LineWriter : public std::ostream {
 public:
  explicit LineWriter(LineSink& sink);
  // Passes on what is left of a line.
  ~LineWriter() override;
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;

 private:
  class Buffer : public std::streambuf {
   public:
    explicit Buffer(LineSink& sink) : sink_(sink) {}
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

   private:
    // Passes on every complete line of pending_.
    void PassLines();
    LineSink& sink_;
    std::string pending_;
  };
  Buffer buffer_;
};

}  // namespace tony::client
