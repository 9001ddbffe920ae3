#pragma once
// Runs the real `tony` binary for end-to-end tests: in its own temporary TONY_HOME and working
// directory, output to files, waited for with a deadline. Every process a job starts inherits
// TONY_HOME, which is how a test proves that none is left behind.

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace tony::testing {

struct TonyResult {
  int exit_code = -1;
  bool timed_out = false;
  std::string out;
  std::string err;
  std::string app_id;  // from "tony: submitted <id>", if printed
  std::string job_dir;

  // For failure messages: the exit code and everything printed.
  std::string Describe() const { return "exit " + std::to_string(exit_code) + "\n" + out + err; }
};

class TonyRunner {
 public:
  // Runs the build's own binary (TONY_BINARY), or the one TONY_E2E_BINARY names (the local
  // suites under AddressSanitizer: scripts/sanitized-tests), or `binary`.
  TonyRunner();
  explicit TonyRunner(std::string binary);
  ~TonyRunner();

  const std::string& home() const { return home_; }
  const std::string& binary() const { return binary_; }
  const std::string& work_dir() const { return work_dir_; }

  // Runs `tony args...` to its end, or kills it after `timeout_ms`.
  TonyResult Run(const std::vector<std::string>& args, int timeout_ms = 120000,
                 const std::map<std::string, std::string>& env = {});

  // Starts tony in the background; Wait() collects it. `env` may set TONY_HOME to another
  // runner's home(), to act on that runner's jobs.
  pid_t Start(const std::vector<std::string>& args,
              const std::map<std::string, std::string>& env = {});
  TonyResult Wait(pid_t pid, int timeout_ms);
  // What the running (or last) tony printed to stdout so far.
  std::string CurrentOutput() const;
  // The application id the running (or last) tony printed ("tony: submitted <id>"), or "".
  std::string SubmittedAppId() const;
  // Waits until tony's stdout contains `text` (a bounded wait on the file with a deadline).
  bool WaitForOutput(const std::string& text, int timeout_ms);

  // Processes of this runner's jobs whose command line (arguments joined by spaces) matches the
  // regular expression `cmdline` from its start, and whose
  // environment has every pair of `env`; waits up to `timeout_ms` for at least one to appear.
  std::vector<pid_t> FindJobProcesses(const std::string& cmdline,
                                      const std::map<std::string, std::string>& env,
                                      int timeout_ms = 30000);

  // Waits until some task's stdout (any job of this runner) contains `text`.
  bool WaitForTaskOutput(const std::string& text, int timeout_ms);

  // Processes still carrying this runner's TONY_HOME; waits up to `timeout_ms` for them to go.
  std::vector<pid_t> LeftoverProcesses(int timeout_ms = 10000);

  static std::string Script(const std::string& name);  // tests/e2e/scripts/<name>
  static std::string SourcePath(const std::string& relative);
  // The contents of every file named `name` below `root` whose path contains `path_part`,
  // concatenated. Directories that vanish during the walk (a NodeManager cleaning up) are
  // skipped, never an error.
  static std::string ReadFilesBelow(const std::string& root, const std::string& name,
                                    const std::string& path_part);

 private:
  std::string binary_;
  std::string root_;
  std::string home_;
  std::string work_dir_;
  std::string out_path_;
  std::string err_path_;
};

}  // namespace tony::testing
