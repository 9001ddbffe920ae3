#include "common/signal_thread.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <thread>

namespace tony {
namespace {

// Whether `sig` is pending for the process (sent, not yet taken by the signal thread).
bool Pending(int sig) {
  sigset_t pending;
  return sigpending(&pending) == 0 && sigismember(&pending, sig) == 1;
}

// The scenario runs in a child of its own, single-threaded when it starts, so that no thread of
// the test binary can take the signal. Exit codes name the step that failed.
int Scenario() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::mutex mu;
  std::condition_variable changed;
  int delivered = 0;
  {
    SignalThread thread(set, [&](int sig) {
      std::lock_guard lock(mu);
      if (sig == SIGUSR1) ++delivered;
      changed.notify_all();
    });
    kill(getpid(), SIGUSR1);
    std::unique_lock lock(mu);
    if (!changed.wait_for(lock, std::chrono::seconds(10), [&] { return delivered == 1; })) {
      return 3;
    }
  }
  // The owner is gone: the next signal is taken and dropped, never handed to the handler (whose
  // captures would now dangle).
  kill(getpid(), SIGUSR1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Pending(SIGUSR1) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  if (Pending(SIGUSR1)) return 4;
  std::lock_guard lock(mu);
  return delivered == 1 ? 0 : 5;
}

TEST(SignalThreadTest, DeliversWhileTheOwnerLivesAndDropsSignalsAfterIt) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(Scenario());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the scenario died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: not delivered; 4: not taken after the owner; "
                                       "5: delivered after the owner was gone";
}

}  // namespace
}  // namespace tony
