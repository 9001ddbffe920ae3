// Signals at every moment of a job's life: SIGTERM or SIGINT to the client, the AM or an
// executor at a random delay after `tony submit` starts, many times over, with the binary built
// under AddressSanitizer and UndefinedBehaviorSanitizer (scripts/build-asan) when there is one.
// A signal that arrives while a process is starting or exiting must never crash it: every run
// ends with tony's own exit codes, no sanitizer report, and nothing of the job left.
//
// The runs are independent jobs, four at a time by default, each worker with a TONY_HOME of its
// own: most of a run is waiting for its moment. TONY_SIGNAL_RUNS sets the number of runs (default
// 200), TONY_SIGNAL_WORKERS how many run at once (default 4); TONY_ASAN_BINARY the binary (default
// build-asan/tony beside the source tree, else the build's own, unless TONY_REQUIRE_ASAN is set);
// TONY_SIGNAL_VERBOSE prints every run.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "e2e/tony_runner.h"

namespace tony::testing {
namespace {

namespace fs = std::filesystem;

std::string SanitizedBinary() {
  if (const char* binary = std::getenv("TONY_ASAN_BINARY"); binary != nullptr && *binary) {
    return binary;
  }
  const std::string built = TonyRunner::SourcePath("build-asan/tony");
  return fs::exists(built) ? built : TONY_BINARY;
}

// One run: a signal to the client, the AM or an executor at a random moment of a job's life.
struct SignalRun {
  int index = 0;
  int delay_ms = 0;
  int signal = 0;
  int target = 0;  // 0: the client, 1: the AM, 2: an executor
};

// Runs of the test, each on its own worker's runner (its own TONY_HOME): what they saw, and
// whether one failed (the others then stop).
class SignalRuns {
 public:
  SignalRuns(std::string binary, std::vector<SignalRun> runs)
      : binary_(std::move(binary)), runs_(std::move(runs)) {}

  // Takes runs off the list until none is left or one failed.
  void Work() {
    TonyRunner runner(binary_);
    const fs::path reports = fs::path(runner.home()) / "sanitizer";
    fs::create_directories(reports);
    const std::map<std::string, std::string> env = {
        // Leaks at exit are not what this test is after (detached threads, library globals).
        {"ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1:log_path=" + (reports / "asan").string()},
        {"UBSAN_OPTIONS", "print_stacktrace=1:log_path=" + (reports / "ubsan").string()}};
    for (;;) {
      const size_t next = next_.fetch_add(1);
      if (next >= runs_.size() || failed_.load()) return;
      if (!RunOne(runner, reports, env, runs_[next])) failed_.store(true);
    }
  }

  std::map<std::string, int> outcomes() {
    std::lock_guard<std::mutex> lock(mu_);
    return outcomes_;
  }

 private:
  // False when the run failed (the failure is already reported to GoogleTest).
  bool RunOne(TonyRunner& runner, const fs::path& reports,
              const std::map<std::string, std::string>& env, const SignalRun& run) {
    const pid_t client = runner.Start(
        {"submit", "--conf", "tony.worker.instances=2", "--conf", "tony.worker.memory=512m",
         "--conf", "tony.local.enforce-memory=false", "--conf", "tony.task.stop-grace-ms=500",
         "--conf", "tony.containers.command=sleep 0.4"},
        env);
    EXPECT_GT(client, 0);
    if (client <= 0) return false;
    // The random moment is the point of the test, not a synchronisation.
    std::this_thread::sleep_for(std::chrono::milliseconds(run.delay_ms));
    pid_t victim = client;
    std::string who = "client";
    if (run.target > 0) {
      const std::vector<pid_t> found =
          runner.FindJobProcesses(run.target == 1 ? "\\S*tony am" : "\\S*tony executor", {}, 0);
      if (!found.empty()) {
        victim = found[0];
        who = run.target == 1 ? "AM" : "executor";
      }
    }
    kill(victim, run.signal);
    TonyResult r = runner.Wait(client, 60000);
    const std::string label = "run " + std::to_string(run.index) + ": signal " +
                              std::to_string(run.signal) + " to the " + who + " after " +
                              std::to_string(run.delay_ms) + " ms";
    EXPECT_FALSE(r.timed_out) << label << "\n" << r.out << r.err;
    if (r.timed_out) return false;
    // 0: the job succeeded anyway; 1: it failed or was killed; 130: the client was interrupted.
    // A client signalled while it still reads its configuration dies of the signal, as any
    // program would: only then, before it has made anything (each run's job directory is
    // removed below, so no directory means none was made).
    std::error_code ec;
    const bool made_nothing =
        r.app_id.empty() &&
        fs::directory_iterator(fs::path(runner.home()) / "jobs", ec) == fs::directory_iterator();
    const bool died_before_starting =
        r.exit_code == 128 + run.signal && who == "client" && made_nothing;
    bool ok = r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 130 || died_before_starting;
    EXPECT_TRUE(ok) << label << ": exit " << r.exit_code << "\n" << r.out << r.err;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++outcomes_[who + " exit " + std::to_string(r.exit_code)];
    }
    if (std::getenv("TONY_SIGNAL_VERBOSE")) {
      std::printf("%s: exit %d\n%s%s\n", label.c_str(), r.exit_code, r.out.c_str(), r.err.c_str());
    }
    const bool none_left = runner.LeftoverProcesses().empty();
    EXPECT_TRUE(none_left) << label << ": processes left";
    ok = ok && none_left;
    for (const auto& entry : fs::directory_iterator(reports)) {
      std::ifstream in(entry.path());
      ADD_FAILURE() << label << ": sanitizer report " << entry.path() << "\n"
                    << std::string(std::istreambuf_iterator<char>(in), {});
      ok = false;
    }
    // The job's own files: the AM's log says whether it crashed after the client was gone.
    if (ok && !r.job_dir.empty()) fs::remove_all(r.job_dir, ec);
    return ok;
  }

  const std::string binary_;
  const std::vector<SignalRun> runs_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  std::map<std::string, int> outcomes_;
};

TEST(SignalTimingTest, ASignalAtAnyMomentNeverCrashesTony) {
  const std::string binary = SanitizedBinary();
  if (std::getenv("TONY_REQUIRE_ASAN") != nullptr) {
    ASSERT_NE(binary, TONY_BINARY)
        << "TONY_REQUIRE_ASAN: build build-asan/tony (scripts/build-asan)";
  }
  const char* runs_env = std::getenv("TONY_SIGNAL_RUNS");
  const int count = runs_env != nullptr ? std::atoi(runs_env) : 200;
  const char* workers_env = std::getenv("TONY_SIGNAL_WORKERS");
  const int workers = std::max(1, workers_env != nullptr ? std::atoi(workers_env) : 4);
  std::printf("binary %s, %d runs, %d at a time\n", binary.c_str(), count, workers);
  // The runs are drawn up front, so that a seed gives the same runs however they are shared out.
  std::mt19937 random(20261203);
  std::vector<SignalRun> runs;
  for (int i = 0; i < count; ++i) {
    SignalRun run;
    run.index = i;
    run.delay_ms = std::uniform_int_distribution<int>(0, 1000)(random);
    run.signal = std::uniform_int_distribution<int>(0, 1)(random) ? SIGTERM : SIGINT;
    run.target = std::uniform_int_distribution<int>(0, 2)(random);
    runs.push_back(run);
  }
  SignalRuns all(binary, std::move(runs));
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back([&all] { all.Work(); });
  for (std::thread& thread : threads) thread.join();
  for (const auto& [outcome, count] : all.outcomes()) {
    std::printf("%4d x %s\n", count, outcome.c_str());
  }
}

}  // namespace
}  // namespace tony::testing
