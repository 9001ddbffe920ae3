#include "common/quick_exit.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace tony {
namespace {

// A child that leaves output in stdio's buffer ends through ExitWithoutTeardown: the parent gets
// the output and the code. (With sanitizers the function returns the code, and the child ends as
// returning it from main would.)
TEST(ExitWithoutTeardownTest, EndsWithTheCodeAndLosesNoBufferedOutput) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    dup2(fds[1], STDOUT_FILENO);
    close(fds[1]);
    std::setvbuf(stdout, nullptr, _IOFBF, 1 << 16);  // a pipe: fully buffered
    std::fputs("left in the buffer", stdout);
    const int code = ExitWithoutTeardown(7);
    // Reached only with sanitizers, where the caller returns the code from main, which flushes.
    std::fflush(nullptr);
    _exit(code);
  }
  close(fds[1]);
  std::string out;
  char buffer[256];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_EQ(out, "left in the buffer");
}

}  // namespace
}  // namespace tony
