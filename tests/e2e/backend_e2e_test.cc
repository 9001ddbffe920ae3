// The cases that differ only in the backend, one body each, run on the local backend and on the
// real YARN mini cluster (when TONY_TEST_HADOOP_CONF_DIR names one). Real processes, real PyTorch;
// after every case no process of the job may be left.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "e2e/tony_runner.h"
#include "hadoop/hadoop_conf.h"
#include "hadoop/yarn_client.h"
#include "nlohmann/json.hpp"

namespace tony::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Task ports from a summary table ("host:port" cells) that something still holds: each must be
// bindable again once the job is over.
std::vector<int> PortsStillBound(const std::string& summary) {
  std::vector<int> bound;
  const std::regex address(R"((?:127\.0\.0\.1|localhost):(\d+) )");
  for (auto it = std::sregex_iterator(summary.begin(), summary.end(), address);
       it != std::sregex_iterator(); ++it) {
    const int port = std::stoi((*it)[1].str());
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // TIME_WAIT is no holder
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) bound.push_back(port);
    close(fd);
  }
  return bound;
}

class BackendE2eTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool yarn() const { return GetParam() == "yarn"; }

  void SetUp() override {
    if (!yarn()) return;
    const char* dir = std::getenv("TONY_TEST_HADOOP_CONF_DIR");
    if (dir == nullptr) GTEST_SKIP() << "TONY_TEST_HADOOP_CONF_DIR is not set (no mini cluster)";
    conf_dir_ = dir;
  }
  void TearDown() override {
    if (yarn() && conf_dir_.empty()) return;
    EXPECT_TRUE(runner_.LeftoverProcesses().empty()) << "processes of the job outlived it";
    const std::vector<int> bound = PortsStillBound(runner_.CurrentOutput());
    EXPECT_TRUE(bound.empty()) << "a task port is still bound after the job: " << bound[0];
    if (!app_id_.empty()) {
      std::vector<pid_t> left;
      for (int i = 0; i < 300; ++i) {
        left = JobProcesses("", {});
        if (left.empty()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      EXPECT_TRUE(left.empty()) << left.size() << " processes of " << app_id_ << " are left";
    }
  }

  // `tony submit` for this backend, with the test scripts as the source directory.
  std::vector<std::string> Submit(const std::vector<std::string>& conf,
                                  const std::string& command) const {
    std::vector<std::string> args = {"submit", "--src_dir",
                                     TonyRunner::SourcePath("tests/e2e/scripts"), "--conf",
                                     "tony.task.stop-grace-ms=1000"};
    if (yarn()) {
      args.insert(args.end(), {"--backend", "yarn", "--conf", "tony.am.memory=256m"});
    } else {
      args.insert(args.end(), {"--conf", "tony.local.vcores=16"});
    }
    args.insert(args.end(), {"--conf", "tony.containers.command=" + command});
    for (const std::string& c : conf) args.insert(args.end(), {"--conf", c});
    return args;
  }
  std::map<std::string, std::string> Env() const {
    if (!yarn()) return {};
    return {{"HADOOP_CONF_DIR", conf_dir_}};
  }
  TonyResult Run(const std::vector<std::string>& args) {
    TonyResult r = runner_.Run(args, 180000, Env());
    app_id_ = r.app_id;
    return r;
  }
  pid_t Start(const std::vector<std::string>& args) { return runner_.Start(args, Env()); }
  TonyResult Wait(pid_t tony) {
    TonyResult r = runner_.Wait(tony, 180000);
    app_id_ = r.app_id;
    return r;
  }

  // Every task's stdout: the job directory's logs (local) or the NodeManager's (YARN).
  std::string TaskStdout(const TonyResult& r) const {
    std::string out;
    std::error_code ec;
    const fs::path root = yarn() ? fs::path(conf_dir_) / "data" : fs::path(r.job_dir) / "logs";
    for (const auto& entry : fs::recursive_directory_iterator(root, ec)) {
      if (entry.path().filename() == "stdout" &&
          entry.path().string().find(r.app_id) != std::string::npos) {
        out += ReadAll(entry.path());
      }
    }
    return out;
  }

  // The final status as the backend recorded it: the AM's final-status.json (local) or the
  // ResourceManager's report (YARN).
  std::string RecordedFinalStatus(const TonyResult& r) const {
    if (!yarn()) {
      nlohmann::json record =
          nlohmann::json::parse(ReadAll(fs::path(r.job_dir) / "final-status.json"), nullptr, false);
      return record.is_object() ? record.value("final_state", "") : "";
    }
    absl::StatusOr<hadoop::HadoopConf> conf = hadoop::HadoopConf::Load({conf_dir_});
    absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> client =
        conf.ok() ? hadoop::YarnClient::Connect(*conf, "")
                  : absl::StatusOr<std::unique_ptr<hadoop::YarnClient>>(conf.status());
    absl::StatusOr<hadoop::ApplicationId> id = hadoop::ApplicationId::Parse(r.app_id);
    if (!client.ok() || !id.ok()) return "";
    absl::StatusOr<hadoop::ApplicationReport> report = (*client)->GetApplicationReport(*id);
    if (!report.ok()) return "";
    switch (report->final_status) {
      case hadoop::FinalApplicationStatus::kSucceeded:
        return "SUCCEEDED";
      case hadoop::FinalApplicationStatus::kFailed:
        return "FAILED";
      case hadoop::FinalApplicationStatus::kKilled:
        return "KILLED";
      default:
        return "UNDEFINED";
    }
  }

  // This job's processes (TONY_APP_ID, and this runner's TONY_HOME on the local backend) whose
  // command line starts with `prefix` and whose environment has every pair of `env`.
  std::vector<pid_t> JobProcesses(const std::string& prefix,
                                  const std::map<std::string, std::string>& env) const {
    std::map<std::string, std::string> wanted = env;
    wanted["TONY_APP_ID"] = app_id_;
    if (!yarn()) wanted["TONY_HOME"] = runner_.home();
    std::vector<pid_t> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::string environ = std::string(1, '\0') + ReadAll(entry.path() / "environ");
      std::string cmdline = ReadAll(entry.path() / "cmdline");
      std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
      bool match = cmdline.starts_with(prefix) && !cmdline.empty();
      for (const auto& [key, value] : wanted) {
        match = match &&
                environ.find(std::string(1, '\0') + key + "=" + value + '\0') != std::string::npos;
      }
      if (match) found.push_back(std::stoi(name));
    }
    return found;
  }
  // This job's `tony <role>` processes (the AM, or executors) whose environment has every pair
  // of `env`.
  std::vector<pid_t> TonyRoleProcesses(const std::string& role,
                                       const std::map<std::string, std::string>& env) const {
    std::vector<pid_t> found;
    for (const pid_t pid : JobProcesses("", env)) {
      const std::string cmdline = ReadAll("/proc/" + std::to_string(pid) + "/cmdline");
      if (cmdline.find(std::string("tony") + '\0' + role + '\0') != std::string::npos) {
        found.push_back(pid);
      }
    }
    return found;
  }

  // Waits (bounded) until tony printed its application id and one such process runs.
  pid_t WaitForJobProcess(const std::string& prefix,
                          const std::map<std::string, std::string>& env) {
    if (!runner_.WaitForOutput("running", 120000)) return -1;
    std::smatch match;
    const std::string out = runner_.CurrentOutput();
    if (!std::regex_search(out, match, std::regex(R"(submitted (application_\d+_\d+))"))) return -1;
    app_id_ = match[1].str();
    for (int i = 0; i < 600; ++i) {
      std::vector<pid_t> pids = JobProcesses(prefix, env);
      if (!pids.empty()) return pids[0];
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }

  // Waits (bounded) until the running job's application id is known and some task printed
  // `text` to its stdout.
  bool WaitForTaskOutput(const std::string& text) {
    if (!runner_.WaitForOutput("running", 120000)) return false;
    std::smatch match;
    const std::string out = runner_.CurrentOutput();
    if (!std::regex_search(out, match, std::regex(R"(submitted (application_\d+_\d+))"))) {
      return false;
    }
    TonyResult pending;
    pending.app_id = match[1].str();
    pending.job_dir = runner_.home() + "/jobs/" + pending.app_id;
    for (int i = 0; i < 600; ++i) {
      if (TaskStdout(pending).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  static bool TaskRow(const std::string& out, const std::string& task, const std::string& state) {
    return std::regex_search(out, std::regex("(^|\\n)" + task + " +" + state + " "));
  }
  static std::string Describe(const TonyResult& r) {
    return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "--- stderr\n" +
           r.err;
  }

  std::string conf_dir_;
  std::string app_id_;
  TonyRunner runner_;
};

TEST_P(BackendE2eTest, PyTorchDigitsTrainsWithTwoWorkers) {
  std::vector<std::string> args = {"submit",
                                   "--src_dir",
                                   TonyRunner::SourcePath("examples/pytorch-digits"),
                                   "--executes",
                                   "train.py",
                                   "--python_binary_path",
                                   "/usr/bin/python3",
                                   "--conf_file",
                                   TonyRunner::SourcePath("examples/pytorch-digits/tony.xml")};
  if (yarn()) {
    args.insert(args.end(), {"--backend", "yarn", "--conf", "tony.am.memory=256m"});
  } else {
    args.insert(args.end(), {"--conf", "tony.local.vcores=4"});
  }
  TonyResult r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
  const std::string out = TaskStdout(r);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(out, match, std::regex(R"(test accuracy: ([0-9.]+))"))) << out;
  EXPECT_GT(std::stod(match[1].str()), 0.9);
  EXPECT_NE(out.find("rank 1 of world size 2"), std::string::npos) << out;
}

TEST_P(BackendE2eTest, TensorFlowClusterSpecAndTfConfigAgree) {
  // ps is tracked here so that its own check always completes (an untracked ps may be stopped
  // before it ran; PsRunningForeverIsStoppedWhenWorkersFinish covers stopping it).
  TonyResult r =
      Run(Submit({"tony.application.framework=tensorflow", "tony.chief.instances=1",
                  "tony.worker.instances=2", "tony.ps.instances=1", "tony.evaluator.instances=1",
                  "tony.application.untracked.jobtypes=", "tony.chief.memory=256m",
                  "tony.worker.memory=256m", "tony.ps.memory=256m", "tony.evaluator.memory=256m"},
                 "/usr/bin/python3 check_tf_env.py --untracked="));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string out = TaskStdout(r);
  for (const char* task : {"chief:0", "worker:0", "worker:1", "ps:0", "evaluator:0"}) {
    EXPECT_NE(out.find(std::string("ok ") + task), std::string::npos) << task << out;
  }
}

TEST_P(BackendE2eTest, FailedWorkerWithFailOnWorkerFailureFailsTheJob) {
  TonyResult r = Run(Submit({"tony.worker.instances=3", "tony.worker.memory=256m",
                             "tony.application.fail-on-worker-failure-enabled=true"},
                            "/usr/bin/python3 exit_with.py 3 --only worker:1"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("task worker:1 failed (exit code 3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failing on purpose with exit code 3"), std::string::npos) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

TEST_P(BackendE2eTest, FailingChiefFailsTheJobAtOnce) {
  // The workers would run forever; the chief's failure must end the job regardless.
  TonyResult r = Run(Submit({"tony.chief.instances=1", "tony.worker.instances=2",
                             "tony.chief.memory=256m", "tony.worker.memory=256m"},
                            "if [ $JOB_NAME = chief ]; then exit 7; fi; "
                            "exec /usr/bin/python3 sleep_forever.py"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("chief chief:0 failed (exit code 7)"), std::string::npos) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "STOPPED")) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

TEST_P(BackendE2eTest, PsRunningForeverIsStoppedWhenWorkersFinish) {
  TonyResult r = Run(Submit({"tony.worker.instances=2", "tony.ps.instances=1",
                             "tony.worker.memory=256m", "tony.ps.memory=256m"},
                            "if [ $JOB_NAME = ps ]; then exec /usr/bin/python3 sleep_forever.py; "
                            "fi; echo done"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(TaskRow(r.out, "ps:0", "STOPPED")) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "worker:1", "SUCCEEDED")) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
}

TEST_P(BackendE2eTest, InterruptKillsTheJob) {
  pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                            "/usr/bin/python3 sleep_forever.py"));
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(runner_.WaitForOutput("2 running", 120000));
  kill(tony, SIGINT);
  TonyResult r = Wait(tony);
  EXPECT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 130) << Describe(r);
  EXPECT_NE(r.out.find("KILLED"), std::string::npos) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "KILLED");
}

TEST_P(BackendE2eTest, WorkerThatFailsOnceIsRestartedAndTheJobSucceeds) {
  TonyResult r = Run(Submit({"tony.worker.instances=2", "tony.worker.memory=256m",
                             "tony.worker.max-restarts=1", "tony.worker.restart-backoff-ms=100"},
                            "echo attempt $ATTEMPT_NUMBER of $JOB_NAME:$TASK_INDEX; "
                            "if [ $TASK_INDEX = 0 ] && [ $ATTEMPT_NUMBER = 0 ]; "
                            "then echo first attempt fails >&2; exit 3; fi"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("worker:0 attempt 0 failed with exit code 3 and was restarted"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("first attempt fails"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(worker:0 +SUCCEEDED +\S+ +0 +2 )"))) << r.out;
  EXPECT_NE(TaskStdout(r).find("attempt 1 of worker:0"), std::string::npos);
  EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
}

TEST_P(BackendE2eTest, KillMinusNineOfAWorkersUserProcessFailsTheJob) {
  pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m",
                             "tony.application.fail-on-worker-failure-enabled=true"},
                            "/usr/bin/python3 sleep_forever.py"));
  pid_t user = WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                                 {{"JOB_NAME", "worker"}, {"TASK_INDEX", "1"}});
  ASSERT_GT(user, 0);
  kill(user, SIGKILL);
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("task worker:1 failed (killed by signal 9)"), std::string::npos) << r.out;
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "STOPPED")) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

TEST_P(BackendE2eTest, KillMinusNineOfTheAmFailsTheJobAndLeavesNothing) {
  pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                            "/usr/bin/python3 sleep_forever.py"));
  ASSERT_GT(WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                              {{"JOB_NAME", "worker"}, {"TASK_INDEX", "1"}}),
            0);
  const std::vector<pid_t> am = TonyRoleProcesses("am", {});
  ASSERT_EQ(am.size(), 1u);
  kill(am[0], SIGKILL);
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  if (yarn()) {
    EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
  } else {
    EXPECT_NE(r.out.find("the AM killed by signal 9 (SIGKILL) before it recorded a final status"),
              std::string::npos)
        << r.out;
  }
  // TearDown checks that no task survived the AM.
}

TEST_P(BackendE2eTest, StoppedExecutorIsFoundByItsMissingHeartbeats) {
  pid_t tony = Start(Submit(
      {"tony.worker.instances=2", "tony.worker.memory=256m", "tony.task.heartbeat-interval-ms=100",
       "tony.task.max-missed-heartbeats=5", "tony.application.fail-on-worker-failure-enabled=true"},
      "/usr/bin/python3 sleep_forever.py"));
  ASSERT_GT(WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                              {{"JOB_NAME", "worker"}, {"TASK_INDEX", "1"}}),
            0);
  const std::vector<pid_t> executor =
      TonyRoleProcesses("executor", {{"TONY_TASK_TYPE", "worker"}, {"TONY_TASK_INDEX", "1"}});
  ASSERT_EQ(executor.size(), 1u);
  kill(executor[0], SIGSTOP);
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("task worker:1 failed (lost heartbeat): no heartbeat for"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

TEST_P(BackendE2eTest, EvaluatorThatOutlivesTrainingIsStoppedByTheDependencyTimeout) {
  const std::string command =
      "if [ $JOB_NAME = evaluator ]; then exec /usr/bin/python3 sleep_forever.py; fi; echo trained";
  const std::vector<std::string> conf = {
      "tony.worker.instances=2",
      "tony.evaluator.instances=1",
      "tony.worker.memory=256m",
      "tony.evaluator.memory=256m",
      "tony.application.group.training=worker",
      "tony.application.dependency.evaluator.timeout.after.training=1"};
  TonyResult failed = Run(Submit(conf, command));
  ASSERT_EQ(failed.exit_code, 1) << Describe(failed);
  EXPECT_NE(failed.out.find("evaluator:0 still ran 1 s after group training (worker) finished"),
            std::string::npos)
      << failed.out;
  EXPECT_EQ(RecordedFinalStatus(failed), "FAILED");

  std::vector<std::string> ignored = conf;
  ignored.push_back("tony.application.dependency.evaluator.timeout.after.training.ignored=true");
  TonyResult succeeded = Run(Submit(ignored, command));
  ASSERT_EQ(succeeded.exit_code, 0) << Describe(succeeded);
  EXPECT_TRUE(TaskRow(succeeded.out, "evaluator:0", "STOPPED")) << succeeded.out;
  EXPECT_EQ(RecordedFinalStatus(succeeded), "SUCCEEDED");
}

TEST_P(BackendE2eTest, StoppedTaskGetsItsGracePeriodToCleanUp) {
  // The handler needs a second, longer than YARN's own SIGTERM-to-SIGKILL delay (250 ms).
  pid_t tony = Start(
      Submit({"tony.worker.instances=1", "tony.worker.memory=256m", "tony.task.stop-grace-ms=5000"},
             "trap 'sleep 1; echo cleaned up; exit 0' TERM; echo ready; "
             "while true; do sleep 0.1; done"));
  ASSERT_GT(tony, 0);
  ASSERT_TRUE(WaitForTaskOutput("ready")) << "the task never printed ready";
  kill(tony, SIGINT);
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 130) << Describe(r);
  EXPECT_NE(TaskStdout(r).find("cleaned up"), std::string::npos) << "the grace period was cut";
  EXPECT_TRUE(TaskRow(r.out, "worker:0", "STOPPED")) << r.out;
}

TEST_P(BackendE2eTest, KillMinusNineOfAWorkersExecutorFailsTheJob) {
  pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m",
                             "tony.application.fail-on-worker-failure-enabled=true"},
                            "/usr/bin/python3 sleep_forever.py"));
  ASSERT_GT(WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                              {{"JOB_NAME", "worker"}, {"TASK_INDEX", "1"}}),
            0);
  const std::vector<pid_t> executor =
      TonyRoleProcesses("executor", {{"TONY_TASK_TYPE", "worker"}, {"TONY_TASK_INDEX", "1"}});
  ASSERT_EQ(executor.size(), 1u);
  kill(executor[0], SIGKILL);
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("task worker:1 failed"), std::string::npos) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

TEST_P(BackendE2eTest, KillMinusNineOfThePsOrTheChiefFailsTheJob) {
  for (const std::string victim : {"ps", "chief"}) {
    pid_t tony = Start(Submit({"tony.chief.instances=1", "tony.ps.instances=1",
                               "tony.chief.memory=256m", "tony.ps.memory=256m"},
                              "/usr/bin/python3 sleep_forever.py"));
    pid_t pid = WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                                  {{"JOB_NAME", victim}, {"TASK_INDEX", "0"}});
    ASSERT_GT(pid, 0) << victim;
    kill(pid, SIGKILL);
    TonyResult r = Wait(tony);
    ASSERT_EQ(r.exit_code, 1) << Describe(r);
    EXPECT_NE(r.out.find(victim == "ps" ? "ps is in tony.application.stop-on-failure-jobtypes"
                                        : "chief chief:0 failed (killed by signal 9)"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
  }
}

TEST_P(BackendE2eTest, UserProcessThatIgnoresSigtermIsKilledAfterTheGracePeriod) {
  pid_t tony = Start(
      Submit({"tony.worker.instances=1", "tony.worker.memory=256m", "tony.task.stop-grace-ms=500"},
             "trap '' TERM; echo ignoring; while true; do sleep 1; done"));
  ASSERT_GT(tony, 0);
  // Only once the shell runs its loop does it ignore SIGTERM.
  ASSERT_TRUE(WaitForTaskOutput("ignoring")) << "the task never printed ignoring";
  kill(tony, SIGINT);
  TonyResult r = Wait(tony);
  ASSERT_EQ(r.exit_code, 130) << Describe(r);
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"((^|\n)worker:0 +STOPPED +\S+ +137 )")))
      << r.out;
}

TEST_P(BackendE2eTest, CommandThatCannotStartFailsTheTaskWithTheReason) {
  TonyResult r = Run(Submit({"tony.worker.instances=1", "tony.worker.memory=256m"},
                            "./no-such-entry-point --flag"));
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("worker:0 failed with exit code 127"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no-such-entry-point: not found"), std::string::npos) << r.out;
  EXPECT_EQ(RecordedFinalStatus(r), "FAILED");
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendE2eTest, ::testing::Values("local", "yarn"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tony::testing
