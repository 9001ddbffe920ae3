#include "client/line_sink.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace tony::client {
namespace {

TEST(LineSinkTest, ThreadsNeverCutIntoEachOthersLines) {
  std::ostringstream target;
  LineSink sink(target);
  constexpr int kThreads = 4;
  constexpr int kLines = 2000;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&sink, t] {
      LineWriter out(sink);
      for (int i = 0; i < kLines; ++i) {
        // A line in pieces, as operator<< writes it.
        out << "thread " << t << " line " << i << ' ' << std::string(50, static_cast<char>('a' + t))
            << "\n";
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::istringstream lines(target.str());
  std::map<int, int> next;  // each thread's lines arrive whole and in order
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    int t = -1;
    int i = -1;
    char rest[64] = {0};
    ASSERT_EQ(std::sscanf(line.c_str(), "thread %d line %d %63s", &t, &i, rest), 3) << line;
    ASSERT_EQ(std::string(rest), std::string(50, static_cast<char>('a' + t))) << line;
    EXPECT_EQ(i, next[t]++) << line;
  }
  EXPECT_EQ(count, kThreads * kLines);
}

TEST(LineSinkTest, AFlushOrTheWritersEndPassesOnAPartialLine) {
  std::ostringstream target;
  LineSink sink(target);
  {
    LineWriter out(sink);
    out << "progress: ";
    EXPECT_EQ(target.str(), "");  // held back: not a whole line yet
    out << std::flush;
    EXPECT_EQ(target.str(), "progress: ");
    out << "50%";
  }
  EXPECT_EQ(target.str(), "progress: 50%");
}

TEST(LineSinkTest, SeveralLinesInOneWrite) {
  std::ostringstream target;
  LineSink sink(target);
  LineWriter out(sink);
  out << "one\ntwo\nthr";
  EXPECT_EQ(target.str(), "one\ntwo\n");
  out << "ee\n";
  EXPECT_EQ(target.str(), "one\ntwo\nthree\n");
}

}  // namespace
}  // namespace tony::client
