#pragma once
// The fixture of the end-to-end cases that differ only in the backend: each body runs on the local
// backend and on the real YARN mini cluster (when TONY_TEST_HADOOP_CONF_DIR names one). After
// every case no process of the job may be left and no task port may still be bound.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "curl/curl.h"
#include "e2e/metrics_check.h"
#include "e2e/tony_runner.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/test_cluster.h"
#include "hadoop/yarn/yarn_client.h"
#include "nlohmann/json.hpp"

namespace tony::testing {

namespace fs = std::filesystem;

// The file's contents, or what could be read of it: a process's /proc files fail to read (ESRCH)
// once it has exited, and libstdc++'s filebuf then throws whatever the stream's exception mask.
inline std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), {});
  } catch (const std::ios_base::failure&) {
    // The process is gone: it has no environment, command line or state left to describe.
  }
  return text;
}

// The processes holding a TCP socket whose local port is `port` (IPv4 or IPv6, any state), from
// /proc/net and each process's descriptors. Sockets that are bound but neither listening nor
// connected are not listed by the kernel, so an empty answer proves nothing.
inline std::vector<pid_t> TcpPortHolders(int port) {
  std::set<std::string> inodes;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      const size_t colon = local.rfind(':');
      if (colon == std::string::npos || inode == "0") continue;
      if (std::stoi(local.substr(colon + 1), nullptr, 16) == port) inodes.insert(inode);
    }
  }
  std::vector<pid_t> holders;
  if (inodes.empty()) return holders;
  std::error_code ec;
  for (const auto& process : fs::directory_iterator("/proc", ec)) {
    const std::string name = process.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code fd_ec;
    for (const auto& fd : fs::directory_iterator(process.path() / "fd", fd_ec)) {
      std::error_code link_ec;
      const std::string target = fs::read_symlink(fd.path(), link_ec).string();
      if (target.starts_with("socket:[") &&
          inodes.count(target.substr(8, target.size() - 9)) != 0) {
        holders.push_back(std::stoi(name));
        break;
      }
    }
  }
  return holders;
}

// Task ports from a summary table ("host:port" cells) that the job still holds: each must be
// bindable again once the job is over. A port that cannot be bound only because a process outside
// the job (`is_job_process` false) happens to use the same number, such as an outgoing connection
// of the mini cluster's JVM, is not the job's.
template <typename IsJobProcess>
std::vector<int> PortsStillBound(const std::string& summary, IsJobProcess is_job_process) {
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
    const bool bindable = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    if (bindable) continue;
    const std::vector<pid_t> holders = TcpPortHolders(port);
    if (holders.empty() || std::any_of(holders.begin(), holders.end(), is_job_process)) {
      bound.push_back(port);
    }
  }
  return bound;
}

// One line per process: pid, state, parent, process group, the task it belongs to, command line;
// so that a process left behind says whose it is.
inline std::string DescribeProcesses(const std::vector<pid_t>& pids) {
  std::string out;
  for (const pid_t pid : pids) {
    const fs::path proc = "/proc/" + std::to_string(pid);
    // stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces, so parse after the last ')'.
    const std::string stat = ReadAll(proc / "stat");
    const size_t paren = stat.rfind(')');
    std::istringstream fields(paren == std::string::npos ? "" : stat.substr(paren + 1));
    std::string state, ppid, pgrp;
    fields >> state >> ppid >> pgrp;
    std::string task;
    const std::string environ = std::string(1, '\0') + ReadAll(proc / "environ");
    for (const std::string key :
         {"TONY_TASK_TYPE", "TONY_TASK_INDEX", "JOB_NAME", "TASK_INDEX", "CONTAINER_ID"}) {
      const std::string needle = std::string(1, '\0') + key + "=";
      const size_t at = environ.find(needle);
      if (at == std::string::npos) continue;
      const size_t start = at + needle.size();
      task += " " + key + "=" + environ.substr(start, environ.find('\0', start) - start);
    }
    std::string cmdline = ReadAll(proc / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    out += "  pid " + std::to_string(pid) + " state " + state + " ppid " + ppid + " pgrp " + pgrp +
           task + ": " + cmdline + "\n";
  }
  return out;
}

// GET `url` (redirects followed): the body, or "" on any failure. A server that asks for
// Kerberos (a Kerberized cluster's web proxy) gets SPNEGO from this process's ticket cache.
inline std::string HttpGet(const std::string& url, const std::string& ca_file = "") {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return "";
  std::string body;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  // An --https mini cluster's web proxy: its test CA.
  if (!ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_NEGOTIATE);
  curl_easy_setopt(curl, CURLOPT_USERPWD, ":");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char* data, size_t size, size_t n, void* out) -> size_t {
        static_cast<std::string*>(out)->append(data, size * n);
        return size * n;
      });
  long code = 0;
  const bool ok = curl_easy_perform(curl) == CURLE_OK &&
                  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code == 200;
  curl_easy_cleanup(curl);
  return ok ? body : "";
}

class BackendE2eTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool yarn() const { return GetParam() == "yarn"; }
  // HttpGet, trusting an --https mini cluster's test CA.
  std::string Get(const std::string& url) const {
    return HttpGet(url, yarn() ? cluster_->Value("MINICLUSTER_CA_PEM") : "");
  }

  void SetUp() override {
    if (!yarn()) return;
    cluster_ = TestCluster::FromEnvironment();
    if (!cluster_) GTEST_SKIP() << "TONY_TEST_HADOOP_CONF_DIR is not set (no mini cluster)";
    conf_dir_ = cluster_->conf_dir();
    // This process's own HTTP requests (HttpGet) use the same ticket as the job's client.
    if (cluster_->secure()) {
      setenv("KRB5CCNAME", cluster_->ProcessEnv(runner_.work_dir())["KRB5CCNAME"].c_str(), 1);
    }
  }
  void TearDown() override {
    if (yarn() && conf_dir_.empty()) return;
    EXPECT_TRUE(runner_.LeftoverProcesses().empty()) << "processes of the job outlived it";
    const std::vector<pid_t> job = JobProcesses("", {});
    const std::vector<int> bound = PortsStillBound(runner_.CurrentOutput(), [&](pid_t pid) {
      return std::find(job.begin(), job.end(), pid) != job.end();
    });
    EXPECT_TRUE(bound.empty()) << "a task port is still bound after the job: " << bound[0];
    if (!app_id_.empty()) {
      std::vector<pid_t> left;
      for (int i = 0; i < 300; ++i) {
        left = JobProcesses("", {});
        if (left.empty()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      EXPECT_TRUE(left.empty()) << left.size() << " processes of " << app_id_ << " are left:\n"
                                << DescribeProcesses(left);
    }
    if (yarn() && !app_id_.empty()) {
      // The client removed the job's staging directory (tony.application.keep-staging is off),
      // all but the outputs the tasks left there.
      absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster_->Hdfs();
      ASSERT_TRUE(hdfs.ok()) << hdfs.status();
      const std::string staging = "/user/" + cluster_->user() + "/.tony/" + app_id_;
      absl::StatusOr<std::vector<hadoop::FileStatus>> left = hdfs->ListStatus(staging);
      if (left.status().code() != absl::StatusCode::kNotFound) {
        ASSERT_TRUE(left.ok()) << left.status();
        ASSERT_EQ(left->size(), 1u) << staging << " outlived the job";
        EXPECT_EQ(left->front().path_suffix, "outputs") << staging << " outlived the job";
        absl::StatusOr<std::vector<hadoop::FileStatus>> outputs =
            hdfs->ListStatus(staging + "/outputs");
        EXPECT_TRUE(outputs.ok() && !outputs->empty())
            << "an empty " << staging << "/outputs stayed";
      }
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
      if (!default_local_capacity_) args.insert(args.end(), {"--conf", "tony.local.vcores=16"});
    }
    args.insert(args.end(), {"--conf", "tony.containers.command=" + command});
    if (yarn()) {
      for (const std::string& c : cluster_->SubmitConf()) args.insert(args.end(), {"--conf", c});
    }
    for (const std::string& c : conf) args.insert(args.end(), {"--conf", c});
    return args;
  }
  std::map<std::string, std::string> Env() const {
    if (!yarn()) return {};
    return cluster_->ProcessEnv(runner_.work_dir());
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

  // Every task's stdout (or `name`): the job directory's logs (local) or the NodeManager's (YARN).
  std::string TaskStdout(const TonyResult& r, const std::string& name = "stdout") const {
    const fs::path root = yarn() ? fs::path(conf_dir_) / "data" : fs::path(r.job_dir) / "logs";
    return TonyRunner::ReadFilesBelow(root.string(), name, r.app_id);
  }

  // The final status as the backend recorded it: the AM's final-status.json (local) or the
  // ResourceManager's report (YARN).
  std::string RecordedFinalStatus(const TonyResult& r) const {
    if (!yarn()) {
      nlohmann::json record =
          nlohmann::json::parse(ReadAll(fs::path(r.job_dir) / "final-status.json"), nullptr, false);
      return record.is_object() ? record.value("final_state", "") : "";
    }
    absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> client = cluster_->Yarn();
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

  // This job's processes (TONY_APP_ID for tony's own, JOB_ID for the user's, and this runner's
  // TONY_HOME on the local backend) whose command line starts with `prefix` and whose environment
  // has every pair of `env`.
  std::vector<pid_t> JobProcesses(const std::string& prefix,
                                  const std::map<std::string, std::string>& env) const {
    std::map<std::string, std::string> wanted = env;
    if (!yarn()) wanted["TONY_HOME"] = runner_.home();
    std::vector<pid_t> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::string environ = std::string(1, '\0') + ReadAll(entry.path() / "environ");
      std::string cmdline = ReadAll(entry.path() / "cmdline");
      std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
      bool match =
          cmdline.starts_with(prefix) && !cmdline.empty() &&
          (environ.find(std::string(1, '\0') + "TONY_APP_ID=" + app_id_ + '\0') !=
               std::string::npos ||
           environ.find(std::string(1, '\0') + "JOB_ID=" + app_id_ + '\0') != std::string::npos);
      for (const auto& [key, value] : wanted) {
        match = match &&
                environ.find(std::string(1, '\0') + key + "=" + value + '\0') != std::string::npos;
      }
      if (match) found.push_back(std::stoi(name));
    }
    return found;
  }
  // This job's `tony <role>` processes (the AM, or executors) whose environment has every pair
  // of `env`. A child that one of them forked and that has not run its program yet (a task's
  // process, a GPU probe) still looks like its parent: it is left out.
  std::vector<pid_t> TonyRoleProcesses(const std::string& role,
                                       const std::map<std::string, std::string>& env) const {
    std::vector<pid_t> found;
    for (const pid_t pid : JobProcesses("", env)) {
      const std::string cmdline = ReadAll("/proc/" + std::to_string(pid) + "/cmdline");
      if (cmdline.find(std::string("tony") + '\0' + role + '\0') != std::string::npos) {
        found.push_back(pid);
      }
    }
    std::vector<pid_t> roles;
    for (const pid_t pid : found) {
      // /proc/<pid>/stat: "pid (comm) state ppid ...", comm possibly holding spaces and ')'.
      const std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
      const size_t end = stat.rfind(')');
      pid_t parent = 0;
      if (end != std::string::npos) {
        std::istringstream rest(stat.substr(end + 1));
        std::string state;
        rest >> state >> parent;
      }
      if (std::find(found.begin(), found.end(), parent) == found.end()) roles.push_back(pid);
    }
    return roles;
  }

  // Two workers that sleep (fail-on-worker-failure on); `signal` goes to worker:1's executor once
  // its user process runs. Returns how the job ended.
  TonyResult SignalWorkerOnesExecutor(std::vector<std::string> conf, int signal) {
    conf.insert(conf.end(), {"tony.worker.instances=2", "tony.worker.memory=256m",
                             "tony.application.fail-on-worker-failure-enabled=true"});
    pid_t tony = Start(Submit(conf, "/usr/bin/python3 sleep_forever.py"));
    EXPECT_GT(WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                                {{"JOB_NAME", "worker"}, {"TASK_INDEX", "1"}}),
              0);
    const std::vector<pid_t> executor =
        TonyRoleProcesses("executor", {{"TONY_TASK_TYPE", "worker"}, {"TONY_TASK_INDEX", "1"}});
    EXPECT_EQ(executor.size(), 1u);
    if (executor.size() == 1) kill(executor[0], signal);
    return Wait(tony);
  }

  // Submits a job with one AM retry whose worker, in the first attempt, leaves a marker and hangs
  // (the second attempt's finds it and ends); returns the client's pid once the marker is there,
  // or 0 if it never came.
  pid_t StartAJobWhoseFirstAttemptHangs(std::vector<std::string> conf = {}) {
    const std::string marker = runner_.work_dir() + "/first-attempt-ran";
    conf.insert(conf.end(),
                {"tony.worker.instances=1", "tony.worker.memory=256m", "tony.am.retry-count=1"});
    const pid_t tony = Start(Submit(conf, "/usr/bin/python3 hang_first_time.py " + marker));
    if (WaitForJobProcess("/usr/bin/python3 hang_first_time.py", {{"JOB_NAME", "worker"}}) <= 0) {
      return 0;
    }
    for (int i = 0; i < 600; ++i) {
      if (fs::exists(marker)) return tony;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return 0;
  }

  // A file of the job's history: running (the intermediate directory) or ended; "" if missing.
  std::string HistoryText(const std::string& app_id, bool running, const std::string& name) {
    const std::string dir = running ? "intermediate" : "finished";
    if (!yarn()) return ReadAll(fs::path(runner_.home()) / "history" / dir / app_id / name);
    absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster_->Hdfs();
    if (!hdfs.ok()) return "";
    absl::StatusOr<std::string> data = hdfs->Open("/user/" + cluster_->user() + "/.tony/history/" +
                                                  dir + "/" + app_id + "/" + name);
    return data.ok() ? *data : "";
  }

  // How StartRunOnceWorkersAndKillTheAm ends the first AM attempt.
  enum class AmFault {
    kKill,          // SIGKILL to the AM
    kKillHeld,      // the client, which starts the next attempt locally, is stopped first
    kKillItsShell,  // YARN: SIGKILL to the shell the AM's container was launched with
  };
  // Two workers of run_once.py in `dir` with one AM retry (`conf` added); once both run and the
  // history has them started, the AM is ended as `fault` says. Returns the client's pid, 0 after
  // a failure.
  pid_t StartRunOnceWorkersAndKillTheAm(const std::string& dir, AmFault fault,
                                        std::vector<std::string> conf = {}) {
    // 512 MB: the AddressSanitizer build's executor and guard map its large binary, whose pages
    // they share with the AM; once the AM is gone, the container's proportional share of them
    // (the local backend's measure of its memory) grows past 256 MB.
    conf.insert(conf.end(),
                {"tony.worker.instances=2", "tony.worker.memory=512m", "tony.am.retry-count=1"});
    const pid_t tony = Start(Submit(conf, "/usr/bin/python3 run_once.py " + dir));
    EXPECT_GT(WaitForJobProcess("/usr/bin/python3 run_once.py", {{"JOB_NAME", "worker"}}), 0);
    const auto ran = [&dir] {
      return !ReadAll(dir + "/worker-0.pids").empty() && !ReadAll(dir + "/worker-1.pids").empty();
    };
    // Mid-job: the history, which the next attempt takes the job up from, has both tasks started.
    const auto started = [this] {
      const std::string text = HistoryText(app_id_, /*running=*/true, "events.jsonl");
      return text.find(R"("task":"worker:0","attempt":0,"kind":"TASK_STARTED")") !=
                 std::string::npos &&
             text.find(R"("task":"worker:1","attempt":0,"kind":"TASK_STARTED")") !=
                 std::string::npos;
    };
    for (int i = 0; i < 1200 && !(ran() && started()); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(ran()) << "the workers never ran";
    EXPECT_TRUE(started()) << HistoryText(app_id_, true, "events.jsonl");
    const std::vector<pid_t> am = TonyRoleProcesses("am", {});
    EXPECT_EQ(am.size(), 1u);
    if (!ran() || !started() || am.size() != 1) return 0;
    run_once_first_ = {ReadAll(dir + "/worker-0.pids"), ReadAll(dir + "/worker-1.pids")};
    first_am_ = am[0];
    if (fault == AmFault::kKillHeld) kill(tony, SIGSTOP);
    if (fault != AmFault::kKillItsShell) {
      kill(am[0], SIGKILL);
      return tony;
    }
    // The AM's parent: the shell YARN launched the container with.
    const std::string stat = ReadAll("/proc/" + std::to_string(am[0]) + "/stat");
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string state;
    pid_t shell = 0;
    fields >> state >> shell;
    const std::string shell_cmdline = ReadAll("/proc/" + std::to_string(shell) + "/cmdline");
    EXPECT_NE(shell_cmdline.find("bash"), std::string::npos) << shell_cmdline;
    if (shell <= 1 || shell_cmdline.find("bash") == std::string::npos) return 0;
    kill(shell, SIGKILL);
    return tony;
  }
  // The job of StartRunOnceWorkersAndKillTheAm ended well: both tasks SUCCEEDED, each ran once
  // (the process the first attempt started, and no other), and the history says so.
  void ExpectRunOnceJobSucceededOnce(const TonyResult& r, const std::string& dir) {
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_NE(r.out.find("AM attempt 2 takes over the job"), std::string::npos) << r.out;
    EXPECT_TRUE(TaskRow(r.out, "worker:0", "SUCCEEDED")) << r.out;
    EXPECT_TRUE(TaskRow(r.out, "worker:1", "SUCCEEDED")) << r.out;
    EXPECT_EQ(ReadAll(dir + "/worker-0.pids"), run_once_first_[0]) << "worker:0 ran again";
    EXPECT_EQ(ReadAll(dir + "/worker-1.pids"), run_once_first_[1]) << "worker:1 ran again";
    EXPECT_EQ(RecordedFinalStatus(r), "SUCCEEDED");
    const std::string events = HistoryText(r.app_id, /*running=*/false, "events.jsonl");
    EXPECT_NE(events.find(R"("kind":"AM_STARTED","attempt":2)"), std::string::npos) << events;
    EXPECT_EQ(events.find("TASK_RESTARTED"), std::string::npos) << events;
    EXPECT_EQ(events.find(R"("state":"FAILED")"), std::string::npos) << events;
    // TearDown checks that nothing of either attempt is left.
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

  // A one-worker job whose worker writes the run "run1" into `logs` (tensorboard_writer.py), with
  // TonY's TensorBoard sidecar on `logs`: while the job runs, the TensorBoard at the URL the
  // client prints must list exactly that run; the job must succeed with the sidecar STOPPED.
  TonyResult RunTensorBoardSidecar(const std::string& logs) {
    EXPECT_TRUE(fs::exists(PyDepsDir() + "/tensorboard"))
        << "TensorBoard is not in " << PyDepsDir() << ": run scripts/install-pydeps";
    const std::string flag = runner_.work_dir() + "/seen";
    std::vector<std::string> args = Submit(
        {"tony.worker.instances=1", "tony.worker.memory=512m", "tony.tensorboard.memory=512m"},
        "/usr/bin/python3 tensorboard_writer.py " + flag);
    args.insert(args.end(), {"--sidecar_tensorboard_log_dir", logs, "--python_binary_path",
                             "/usr/bin/python3", "--shell_env", "PYTHONPATH=" + PyDepsDir()});
    pid_t tony = Start(args);
    EXPECT_TRUE(runner_.WaitForOutput("tony: TensorBoard at ", 120000)) << runner_.CurrentOutput();
    std::smatch url;
    const std::string out = runner_.CurrentOutput();
    EXPECT_TRUE(std::regex_search(out, url, std::regex(R"(TensorBoard at (http://\S+))"))) << out;
    // TensorBoard lists a run once it has read its events: poll its own API until it does.
    std::string runs;
    for (int i = 0; !url.empty() && i < 600 && runs.find("run1") == std::string::npos; ++i) {
      runs = HttpGet(url[1].str() + "data/runs");
      if (runs.find("run1") == std::string::npos) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    EXPECT_EQ(runs, "[\"run1\"]");
    std::ofstream(flag) << "done";
    TonyResult r = Wait(tony);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    if (!url.empty()) {
      EXPECT_NE(r.out.find("TensorBoard: " + url[1].str()), std::string::npos) << r.out;
    }
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\ntensorboard:0 +STOPPED "))) << r.out;
    return r;
  }

  // Skips the test when `path` is missing, unless $required is set (scripts/test sets it): then
  // the test fails, since CI installs what `script` installs. Callers check IsSkipped().
  static void RequireInstalled(const std::string& path, const char* required, const char* script) {
    if (fs::exists(path)) return;
    ASSERT_EQ(std::getenv(required), nullptr) << path << " is missing: run " << script;
    GTEST_SKIP() << path << " is missing: run " << script;
  }

  static bool TaskRow(const std::string& out, const std::string& task, const std::string& state) {
    return std::regex_search(out, std::regex("(^|\\n)" + task + " +" + state + " "));
  }
  static std::string Describe(const TonyResult& r) {
    return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "--- stderr\n" +
           r.err;
  }

  std::string conf_dir_;
  // Submit leaves the local backend's capacity at its defaults (vcores time-shared) instead of
  // giving it 16 vcores.
  bool default_local_capacity_ = false;
  std::optional<TestCluster> cluster_;
  std::string app_id_;
  std::vector<std::string> run_once_first_;  // what each run_once.py worker wrote, first attempt
  pid_t first_am_ = 0;                       // the AM StartRunOnceWorkersAndKillTheAm ended
  TonyRunner runner_;
};

}  // namespace tony::testing
