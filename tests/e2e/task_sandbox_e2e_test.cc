// What a task's own code can reach, tried as an attacker would on the local backend and on the
// real YARN mini cluster (backend_fixture.h): the probe (scripts/probe_credentials.py) searches
// every file and process it can see for the job's credentials, tries the AM's control plane with
// the credentials it can make up and `tony kill`, in the task's sandbox and, to show that it would
// find them, outside it; and a reused am.pid.

#include <signal.h>

#include <fstream>
#include <sstream>

#include "common/files.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "e2e/backend_fixture.h"
#include "rpc/job_credentials.h"
#include "rpc/launch_contract.h"

namespace tony::testing {
namespace {

// The bytes as lowercase hex, as the probe reports file contents.
std::string Hex(const std::string& text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() * 2);
  for (unsigned char c : text) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

class TaskSandboxE2eTest : public BackendE2eTest {
 protected:
  // Runs `command` as every task's, holding the job open until the test has read the job's
  // credentials (which the client removes when the job ends): each task then waits for a file.
  TonyResult RunHoldingCredentials(const std::vector<std::string>& conf, const std::string& command,
                                   absl::StatusOr<rpc::JobCredentials>* credentials) {
    const std::string go = runner_.work_dir() + "/credentials-read";
    const pid_t tony =
        Start(Submit(conf, command + "; while [ ! -e " + go + " ]; do sleep 0.05; done"));
    *credentials = absl::UnavailableError("the job did not start");
    // Printed once the job is staged (its credentials written) and submitted.
    if (runner_.WaitForOutput("tony: submitted ", 120000)) {
      *credentials = rpc::ReadJobCredentials(runner_.home() + "/jobs/" + runner_.SubmittedAppId());
    }
    std::ofstream(go) << "go";
    return Wait(tony);
  }
};

TEST_P(TaskSandboxE2eTest, TheUsersProcessGetsNoCredential) {
  // The probe also tries `tony kill` on its own job: locally with the client's binary, on a
  // Kerberized YARN with the container's own (./tony, with the cluster configuration the task
  // gets). Not on the plain YARN mini cluster, whose ResourceManager, with simple
  // authentication, kills for anyone who asks.
  const bool try_kill = !yarn() || cluster_->secure();
  absl::StatusOr<rpc::JobCredentials> credentials;
  TonyResult r = RunHoldingCredentials(
      {"tony.worker.instances=2", "tony.worker.memory=256m"},
      "/usr/bin/python3 probe_credentials.py" +
          (try_kill ? " " + (yarn() ? std::string("./tony --backend yarn") : runner_.binary())
                    : ""),
      &credentials);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("SUCCEEDED"), std::string::npos) << Describe(r);
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  // The ended job's directory keeps its logs and final status, and no key material.
  for (const char* name : {rpc::kSecretFile, rpc::kAmKeyFile, "am.pid"}) {
    EXPECT_FALSE(fs::exists(r.job_dir + "/" + name)) << name << " outlived the job";
  }
  const std::string out = TaskStdout(r);
  int probes = 0;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("probe ")) continue;
    ++probes;
    nlohmann::json report = nlohmann::json::parse(line.substr(6));
    for (const auto& [key, value] : report["env"].items()) {
      const std::string text = value.get<std::string>();
      EXPECT_EQ(std::find(rpc::kInternalVariables.begin(), rpc::kInternalVariables.end(), key),
                rpc::kInternalVariables.end())
          << "tony's internal variable reaches the user: " << key;
      // Any other TONY_* must be the submitting user's own, passed through, or one of those the
      // task is given on purpose (docs/security.md, "What the user's process sees"): paths of the
      // task's own, no credential (the checks below hold for them too).
      EXPECT_TRUE(!key.starts_with("TONY_") || key == "TONY_JOB_DIR" || key == "TONY_HOME" ||
                  key == "TONY_CHECKPOINT_DIR" || key == "TONY_PROGRESS_FILE" ||
                  key == "TONY_OUTPUT_DIR" || key == "TONY_OUTPUT_URI" ||
                  std::getenv(key.c_str()) != nullptr)
          << "a variable of tony's reaches the user: " << key;
      EXPECT_EQ(text.find(credentials->secret), std::string::npos) << key;
      EXPECT_EQ(text.find("BEGIN"), std::string::npos) << key;
    }
    // Neither the job's secret nor any entry of tony's in the container's credentials.
    const std::string tokens = report["tokens_hex"].get<std::string>();
    EXPECT_EQ(tokens.find(Hex("tony.")), std::string::npos) << "tony's entries in the tokens file";
    EXPECT_EQ(tokens.find(Hex(credentials->secret)), std::string::npos);
    // Every file it could read, its own working directory's up to the job directory and every
    // job's, the NodeManager's of every container, and the other processes' environments.
    int readable = 0;
    for (const auto& [path, content] : report["files"].items()) {
      const std::string bytes = content.get<std::string>();
      if (!bytes.starts_with("unreadable")) ++readable;
      EXPECT_EQ(bytes.find(Hex(credentials->secret)), std::string::npos) << path;
      EXPECT_EQ(bytes.find(Hex("tony.task.credential")), std::string::npos) << path;
      EXPECT_EQ(bytes.find(Hex("PRIVATE KEY")), std::string::npos) << path;
      EXPECT_EQ(bytes.find(Hex("TONY_CONTAINER_SECRETS")), std::string::npos) << path;
    }
    EXPECT_GT(readable, 0) << "the probe read nothing: it proves nothing";
    // Its own processes only: the sandbox's init, python and what it started.
    EXPECT_LE(report["pids"].size(), 4u) << report["pids"].dump();
    // The AM's control plane, found among the machine's listening ports, as another task or the
    // client with made-up credentials: refused before it reads the forged report.
    int reached_am = 0;
    for (const auto& attempt : report["rpc"]) {
      const std::string code = attempt["code"].get<std::string>();
      if (code == "UNAUTHENTICATED") ++reached_am;
      EXPECT_TRUE(code != "OK" && code != "PERMISSION_DENIED" && code != "RESOURCE_EXHAUSTED")
          << attempt.dump();
    }
    EXPECT_GE(reached_am, 4) << "the probe never reached the AM: " << report["rpc"].dump();
    if (try_kill) {
      ASSERT_TRUE(report["kill"].is_object()) << line;
      EXPECT_NE(report["kill"]["code"].get<int>(), 0) << report["kill"].dump();
      // Refused for what it lacks, not for a mistake of the probe's.
      EXPECT_EQ(report["kill"]["out"].get<std::string>().find("no application"), std::string::npos)
          << report["kill"].dump();
    }
  }
  EXPECT_EQ(probes, 2) << out;
  if (!yarn()) {
    // The executors removed the files the credentials came in.
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(r.job_dir + "/secrets", ec)) {
      ADD_FAILURE() << "left behind: " << entry.path();
    }
  }
}

TEST_P(TaskSandboxE2eTest, WithoutTheSandboxTaskCodeFindsTheCredentials) {
  // The probe of TheUsersProcessGetsNoCredential is able: outside the sandbox it finds the job's
  // secret (locally in the job directory, on YARN in the AM container's credentials) or another
  // container's task credential (in the NodeManager's files).
  absl::StatusOr<rpc::JobCredentials> credentials;
  TonyResult r = RunHoldingCredentials(
      {"tony.worker.instances=1", "tony.worker.memory=256m", "tony.task.sandbox=false"},
      "/usr/bin/python3 probe_credentials.py", &credentials);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  const std::string out = TaskStdout(r);
  const size_t at = out.find("probe ");
  ASSERT_NE(at, std::string::npos) << out;
  nlohmann::json report = nlohmann::json::parse(out.substr(at + 6, out.find('\n', at) - at - 6));
  const std::string secret_hex = Hex(credentials->secret);
  int found = 0;
  for (const auto& [path, content] : report["files"].items()) {
    if (content.get<std::string>().find(secret_hex) != std::string::npos) ++found;
  }
  EXPECT_GT(found, 0) << "the probe found no credential where there is one";
}

TEST_P(TaskSandboxE2eTest, AReusedAmPidIsNeverSignalled) {
  if (yarn()) GTEST_SKIP() << "am.pid is the local backend's";
  // A job whose AM is gone without a final status (killed outright with --force), and whose pid
  // now belongs to an unrelated process of the same user that started later.
  pid_t tony = Start(Submit({"tony.worker.instances=1", "tony.worker.memory=256m"},
                            "/usr/bin/python3 sleep_forever.py"));
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(runner_.WaitForOutput("1 running", 120000)) << runner_.CurrentOutput();
  const std::string app_id = runner_.SubmittedAppId();
  TonyRunner other;
  const std::map<std::string, std::string> env = {{"TONY_HOME", runner_.home()}};
  const std::string job_dir = runner_.home() + "/jobs/" + app_id;
  const pid_t am =
      static_cast<pid_t>(std::atol(ReadFile(job_dir + "/am.pid").value_or("").c_str()));
  ASSERT_GT(am, 0);
  ASSERT_EQ(kill(am, SIGKILL), 0);
  TonyResult ended = Wait(tony);
  EXPECT_NE(ended.exit_code, 0) << Describe(ended);
  ASSERT_FALSE(fs::exists(job_dir + "/final-status.json"));

  SpawnOptions spawn;
  spawn.argv = {"/bin/sleep", "120"};
  absl::StatusOr<pid_t> stranger = Spawn(spawn);
  ASSERT_TRUE(stranger.ok()) << stranger.status();
  std::optional<ProcessInfo> info = ReadProcessInfo(*stranger);
  ASSERT_TRUE(info.has_value());
  // The stranger's own pid and start time (what a reused pid looks like), then the pid alone.
  for (const std::string& record :
       {std::to_string(*stranger) + " " + std::to_string(info->start_ticks) + "\n",
        std::to_string(*stranger) + "\n"}) {
    ASSERT_TRUE(WriteFile(job_dir + "/am.pid", record, 0600).ok());
    TonyResult killed = other.Run({"kill", app_id}, 60000, env);
    TonyResult status = other.Run({"status", app_id}, 60000, env);
    EXPECT_EQ(status.out.find("RUNNING"), std::string::npos) << record << Describe(status);
    EXPECT_FALSE(PollExit(*stranger).value_or(std::nullopt).has_value())
        << "tony kill signalled the process am.pid named: " << record << Describe(killed);
  }
  kill(*stranger, SIGKILL);
  (void)WaitForExit(*stranger);
}

INSTANTIATE_TEST_SUITE_P(Backends, TaskSandboxE2eTest, ::testing::Values("local", "yarn"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tony::testing
