// The control plane and the job's files tried as an attacker on the same machine or network
// would, on the local backend and on the real YARN mini cluster (backend_fixture.h): where the AM
// listens, TLS, credentials, what the user's process can find, floods, file modes.

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/files.h"
#include "common/proc_table.h"
#include "common/process.h"
#include "common/strings.h"
#include "e2e/backend_fixture.h"
#include "grpcpp/grpcpp.h"
#include "rpc/auth.h"
#include "rpc/job_credentials.h"
#include "rpc/launch_contract.h"
#include "rpc/tony.grpc.pb.h"

namespace tony::testing {
namespace {

// The addresses ("ip:port") that `pid`'s listening TCP sockets are bound to.
std::vector<std::string> ListeningAddresses(pid_t pid) {
  std::set<std::string> inodes;
  std::error_code ec;
  const fs::path fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto& entry : fs::directory_iterator(fd_dir, ec)) {
    const std::string target = fs::read_symlink(entry.path(), ec).string();
    if (!ec && target.starts_with("socket:[")) {
      inodes.insert(target.substr(8, target.size() - 9));
    }
  }
  std::vector<std::string> found;
  for (const char* table : {"tcp", "tcp6"}) {
    std::istringstream lines(ReadAll("/proc/" + std::to_string(pid) + "/net/" + table));
    std::string line;
    std::getline(lines, line);  // header
    while (std::getline(lines, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      if (state != "0A" || !inodes.count(inode)) continue;  // 0A: LISTEN
      const std::string hex = local.substr(0, local.find(':'));
      const int port = std::stoi(local.substr(local.find(':') + 1), nullptr, 16);
      char text[INET6_ADDRSTRLEN] = {};
      if (hex.size() == 8) {
        in_addr addr{};
        addr.s_addr = static_cast<uint32_t>(std::stoul(hex, nullptr, 16));
        inet_ntop(AF_INET, &addr, text, sizeof(text));
      } else {
        in6_addr addr{};
        for (int word = 0; word < 4; ++word) {
          const uint32_t value =
              static_cast<uint32_t>(std::stoul(hex.substr(word * 8, 8), nullptr, 16));
          std::memcpy(&addr.s6_addr[word * 4], &value, 4);
        }
        inet_ntop(AF_INET6, &addr, text, sizeof(text));
      }
      std::string ip = text;
      if (ip.starts_with("::ffff:")) ip = ip.substr(7);  // an IPv4 address on a dual-stack socket
      found.push_back(ip + ":" + std::to_string(port));
    }
  }
  return found;
}

// The peak resident memory of a process in MB (VmHWM), 0 if unknown.
int64_t PeakRssMb(pid_t pid) {
  std::istringstream lines(ReadAll("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with("VmHWM:")) return std::stoll(line.substr(6)) / 1024;
  }
  return 0;
}

struct HttpAnswer {
  long code = 0;
  std::string location;
  std::string body;
};

// GET `url` without following redirects, from `source` (a local address to bind; "" = any).
HttpAnswer HttpGetFrom(const std::string& url, const std::string& source) {
  HttpAnswer answer;
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return answer;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
  if (!source.empty()) curl_easy_setopt(curl, CURLOPT_INTERFACE, source.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer.body);
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char* data, size_t size, size_t n, void* out) -> size_t {
        static_cast<std::string*>(out)->append(data, size * n);
        return size * n;
      });
  if (curl_easy_perform(curl) == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.code);
    char* location = nullptr;
    curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &location);
    if (location != nullptr) answer.location = location;
  }
  curl_easy_cleanup(curl);
  return answer;
}

// Opens `count` connections to host:port and sends each the start of a request, never its end.
std::vector<int> HalfSentRequests(const std::string& host, int port, int count) {
  std::vector<int> sockets;
  for (int i = 0; i < count; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(fd);
      continue;
    }
    const std::string partial = "GET /status.json HTTP/1.1\r\nHost: x\r\n";
    (void)!write(fd, partial.data(), partial.size());
    sockets.push_back(fd);
  }
  return sockets;
}

class SecurityE2eTest : public BackendE2eTest {
 protected:
  std::string JobDir() const { return runner_.home() + "/jobs/" + app_id_; }

  // The AM's control-plane address: the local job directory's record, or the RM's report.
  std::string AmAddress() const {
    if (!yarn()) return std::string(StripWhitespace(ReadAll(JobDir() + "/am.address")));
    absl::StatusOr<hadoop::HadoopConf> conf = hadoop::HadoopConf::Load({conf_dir_});
    absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> client =
        conf.ok() ? hadoop::YarnClient::Connect(*conf, "")
                  : absl::StatusOr<std::unique_ptr<hadoop::YarnClient>>(conf.status());
    absl::StatusOr<hadoop::ApplicationId> id = hadoop::ApplicationId::Parse(app_id_);
    if (!client.ok() || !id.ok()) return "";
    absl::StatusOr<hadoop::ApplicationReport> report = (*client)->GetApplicationReport(*id);
    if (!report.ok() || report->rpc_port <= 0) return "";
    return report->host + ":" + std::to_string(report->rpc_port);
  }

  static grpc::StatusCode CallStatus(rpc::TonyAm::Stub* stub, const std::string& auth) {
    rpc::GetJobStatusRequest request;
    rpc::JobStatus status;
    grpc::ClientContext context;
    if (!auth.empty()) rpc::AttachAuth(&context, auth);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return stub->GetJobStatus(&context, request, &status).error_code();
  }
};

TEST_P(SecurityE2eTest, ControlPlaneIsBoundNarrowlyEncryptedAndAuthenticated) {
  const mode_t old_umask = umask(0);  // the caller's umask must not widen anything tony writes
  pid_t tony = Start(Submit({"tony.worker.instances=2", "tony.worker.memory=256m"},
                            "/usr/bin/python3 sleep_forever.py"));
  umask(old_umask);
  for (const char* index : {"0", "1"}) {
    ASSERT_GT(WaitForJobProcess("/usr/bin/python3 sleep_forever.py",
                                {{"JOB_NAME", "worker"}, {"TASK_INDEX", index}}),
              0);
  }

  // Binds: the AM's port and status page on loopback locally, on the NodeManager's host on YARN;
  // never every interface. The executor listens on nothing.
  const std::vector<pid_t> am = TonyRoleProcesses("am", {});
  ASSERT_EQ(am.size(), 1u);
  const std::vector<std::string> listening = ListeningAddresses(am[0]);
  EXPECT_EQ(listening.size(), 2u) << "the control plane and the status page";
  for (const std::string& address : listening) {
    EXPECT_FALSE(address.starts_with("0.0.0.0:") || address.starts_with("::")) << address;
    if (!yarn()) {
      EXPECT_TRUE(address.starts_with("127.0.0.1:")) << address;
    }
  }
  for (const pid_t executor : TonyRoleProcesses("executor", {})) {
    EXPECT_TRUE(ListeningAddresses(executor).empty()) << "executor " << executor;
  }

  // TLS: plaintext gets nowhere; TLS pinned to the job's certificate needs the job's credential.
  absl::StatusOr<rpc::JobCredentials> credentials = rpc::ReadJobCredentials(JobDir());
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  ASSERT_TRUE(credentials->tls());
  const std::string address = AmAddress();
  ASSERT_FALSE(address.empty());
  auto plain =
      rpc::TonyAm::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  EXPECT_EQ(CallStatus(plain.get(), rpc::JobAuthValue(credentials->secret)),
            grpc::StatusCode::UNAVAILABLE);
  auto stub = rpc::TonyAm::NewStub(rpc::AmChannel(address, credentials->am_cert_pem));
  EXPECT_EQ(CallStatus(stub.get(), ""), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(CallStatus(stub.get(), rpc::JobAuthValue(std::string(64, '0'))),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(CallStatus(stub.get(), rpc::JobAuthValue(credentials->secret)), grpc::StatusCode::OK);

  // A task's credential covers its own task: worker:0's executor (or code that stole its
  // credential) reporting worker:1 done is refused, and worker:1 runs on.
  rpc::JobStatus status;
  {
    grpc::ClientContext context;
    rpc::AttachAuth(&context, rpc::JobAuthValue(credentials->secret));
    ASSERT_TRUE(stub->GetJobStatus(&context, rpc::GetJobStatusRequest(), &status).ok());
  }
  ASSERT_EQ(status.tasks_size(), 2);
  std::string worker0, worker1;
  for (const rpc::TaskStatus& task : status.tasks()) {
    (task.index() == 0 ? worker0 : worker1) = task.container_id();
  }
  rpc::ReportResultRequest forged;
  forged.mutable_task()->set_type("worker");
  forged.mutable_task()->set_index(1);
  forged.set_container_id(worker1);
  forged.set_exit_code(0);
  {
    grpc::ClientContext context;
    rpc::AttachAuth(&context, rpc::TaskAuthValue(
                                  "worker", 0, worker0,
                                  rpc::TaskCredential(credentials->secret, "worker", 0, worker0)));
    rpc::ReportResultResponse reported;
    EXPECT_EQ(stub->ReportResult(&context, forged, &reported).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    grpc::ClientContext context;
    rpc::AttachAuth(&context, rpc::JobAuthValue(credentials->secret));
    ASSERT_TRUE(stub->GetJobStatus(&context, rpc::GetJobStatusRequest(), &status).ok());
    for (const rpc::TaskStatus& task : status.tasks()) {
      EXPECT_EQ(task.state(), rpc::TASK_RUNNING) << "worker:" << task.index();
      EXPECT_FALSE(task.has_exit_code()) << "worker:" << task.index();
    }
  }

  // Authenticate before reading: 16 senders of 4 MB messages without a credential, for 8 s.
  const int64_t before_mb = PeakRssMb(am[0]);
  std::atomic<int> refused{0};
  std::atomic<int> other{0};
  std::vector<std::thread> senders;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  for (int i = 0; i < 16; ++i) {
    senders.emplace_back([&, i] {
      grpc::ChannelArguments args;
      args.SetInt("tony.sender", i);  // a connection of its own each
      args.SetSslTargetNameOverride(rpc::kAmTlsName);
      grpc::SslCredentialsOptions tls;
      tls.pem_root_certs = credentials->am_cert_pem;
      auto flooder =
          rpc::TonyAm::NewStub(grpc::CreateCustomChannel(address, grpc::SslCredentials(tls), args));
      rpc::KillJobRequest kill;
      kill.set_reason(std::string(4 << 20, 'x'));
      while (std::chrono::steady_clock::now() < until) {
        rpc::KillJobResponse killed;
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
        const grpc::StatusCode code = flooder->KillJob(&context, kill, &killed).error_code();
        (code == grpc::StatusCode::UNAUTHENTICATED ? refused : other)++;
      }
    });
  }
  for (std::thread& sender : senders) sender.join();
  const int64_t after_mb = PeakRssMb(am[0]);
  EXPECT_GT(refused.load(), 16) << "refused " << refused << ", other outcomes " << other;
  EXPECT_EQ(other.load(), 0) << "every unauthenticated call must be refused as such";
  EXPECT_LT(after_mb, 60) << "AM peak RSS " << before_mb << " MB before the flood";
  EXPECT_EQ(CallStatus(stub.get(), rpc::JobAuthValue(credentials->secret)), grpc::StatusCode::OK)
      << "the AM must still answer its client";

  // A credential does not buy memory either: eight senders of 64 MB messages with worker:0's
  // credential, each on its own connection, are refused before the AM holds their messages.
  {
    const std::string task_auth = rpc::TaskAuthValue(
        "worker", 0, worker0, rpc::TaskCredential(credentials->secret, "worker", 0, worker0));
    std::atomic<int> exhausted{0};
    std::atomic<int> accepted{0};
    std::vector<std::thread> big;
    for (int i = 0; i < 8; ++i) {
      big.emplace_back([&, i] {
        grpc::ChannelArguments args;
        args.SetInt("tony.big-sender", i);
        args.SetSslTargetNameOverride(rpc::kAmTlsName);
        args.SetMaxSendMessageSize(-1);
        grpc::SslCredentialsOptions tls;
        tls.pem_root_certs = credentials->am_cert_pem;
        auto sender = rpc::TonyAm::NewStub(
            grpc::CreateCustomChannel(address, grpc::SslCredentials(tls), args));
        rpc::ReportResultRequest report;
        report.mutable_task()->set_type("worker");
        report.mutable_task()->set_index(0);
        report.set_container_id(worker0);
        report.set_exit_code(0);
        report.set_diagnostics(std::string(64 << 20, 'x'));
        rpc::ReportResultResponse reported;
        grpc::ClientContext context;
        rpc::AttachAuth(&context, task_auth);
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
        const grpc::Status status = sender->ReportResult(&context, report, &reported);
        (status.ok() ? accepted : exhausted)++;
      });
    }
    for (std::thread& sender : big) sender.join();
    const int64_t big_after_mb = PeakRssMb(am[0]);
    EXPECT_EQ(accepted.load(), 0) << "an oversized report was taken";
    EXPECT_LT(big_after_mb, after_mb + 40) << "AM peak RSS " << after_mb << " MB before";
    std::cerr << "AM peak RSS " << after_mb << " MB before, " << big_after_mb << " MB after\n";
    EXPECT_EQ(CallStatus(stub.get(), rpc::JobAuthValue(credentials->secret)), grpc::StatusCode::OK)
        << "the AM must still answer its client";
  }

  // Files: the local job directory (the secret and the TLS key are there on both backends) is
  // the user's alone; on YARN so is the HDFS staging directory.
  struct stat st;
  ASSERT_EQ(stat(JobDir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  for (const char* name : {rpc::kSecretFile, rpc::kAmKeyFile, rpc::kAmCertFile}) {
    ASSERT_EQ(stat((JobDir() + "/" + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0077, 0u) << name;
  }
  if (yarn()) {
    absl::StatusOr<hadoop::HadoopConf> conf = hadoop::HadoopConf::Load({conf_dir_});
    ASSERT_TRUE(conf.ok());
    absl::StatusOr<hadoop::NameService> namenodes = hadoop::DefaultNameService(*conf);
    ASSERT_TRUE(namenodes.ok()) << namenodes.status();
    absl::StatusOr<hadoop::FileStatus> staging =
        hadoop::WebHdfsClient(namenodes->WebHdfsServers(), hadoop::HadoopUser())
            .GetFileStatus("/user/" + hadoop::HadoopUser() + "/.tony/" + app_id_);
    ASSERT_TRUE(staging.ok()) << staging.status();
    EXPECT_EQ(staging->permission & 0777, 0700) << "HDFS staging directory";
  }

  // The status page: locally on loopback for whoever reaches it; on YARN only through the RM's
  // web proxy, anyone else redirected there and shown nothing of the job.
  std::string page_url, proxy_url;
  if (yarn()) {
    absl::StatusOr<hadoop::HadoopConf> conf = hadoop::HadoopConf::Load({conf_dir_});
    absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> client =
        conf.ok() ? hadoop::YarnClient::Connect(*conf, "")
                  : absl::StatusOr<std::unique_ptr<hadoop::YarnClient>>(conf.status());
    ASSERT_TRUE(client.ok()) << client.status();
    absl::StatusOr<hadoop::ApplicationReport> report =
        (*client)->GetApplicationReport(*hadoop::ApplicationId::Parse(app_id_));
    ASSERT_TRUE(report.ok()) << report.status();
    page_url = report->original_tracking_url;
    proxy_url = report->tracking_url;
  } else {
    page_url = std::string(StripWhitespace(ReadAll(JobDir() + "/am.tracking-url")));
  }
  ASSERT_TRUE(page_url.starts_with("http://")) << page_url;
  const std::string page_host = page_url.substr(7, page_url.find(':', 7) - 7);
  const int page_port = std::stoi(page_url.substr(page_url.find(':', 7) + 1));
  // 100 half-sent requests held open while the page is asked for.
  std::vector<int> half_open =
      HalfSentRequests(page_host == "localhost" ? "127.0.0.1" : page_host, page_port, 100);
  EXPECT_EQ(half_open.size(), 100u);
  if (yarn()) {
    // From an address that is not the proxy's (any 127/8 address reaches loopback).
    HttpAnswer direct = HttpGetFrom(page_url + "status.json", "127.0.0.7");
    EXPECT_EQ(direct.code, 302) << direct.body;
    EXPECT_NE(direct.location.find("/proxy/"), std::string::npos) << direct.location;
    EXPECT_EQ(direct.body.find("sleep_forever"), std::string::npos);
    EXPECT_EQ(direct.body.find("worker"), std::string::npos) << direct.body;
    const std::string proxied = HttpGet(proxy_url + "status.json");
    EXPECT_NE(proxied.find(app_id_), std::string::npos) << "through the proxy: " << proxied;
  } else {
    HttpAnswer direct = HttpGetFrom(page_url + "status.json", "");
    EXPECT_EQ(direct.code, 200);
    EXPECT_NE(direct.body.find(app_id_), std::string::npos) << direct.body;
  }
  for (const int fd : half_open) close(fd);

  // The job's client may end it over the control plane.
  rpc::KillJobRequest kill;
  kill.set_reason("security test over");
  rpc::KillJobResponse killed;
  grpc::ClientContext context;
  rpc::AttachAuth(&context, rpc::JobAuthValue(credentials->secret));
  ASSERT_TRUE(stub->KillJob(&context, kill, &killed).ok());
  TonyResult r = Wait(tony);
  EXPECT_NE(r.out.find("KILLED"), std::string::npos) << Describe(r);

  {
    // Another local user can read nothing of the job's directory (on YARN the submitting
    // machine's, with the secret and the TLS key), whatever the umask was: every file below it,
    // with the directories above it opened up for the test.
    const std::string root = fs::path(runner_.home()).parent_path().string();  // the test's own
    for (fs::path dir = fs::path(JobDir()).parent_path(); dir.string().size() >= root.size();
         dir = dir.parent_path()) {
      fs::permissions(dir, fs::perms::others_exec, fs::perm_options::add);
    }
    std::string files;
    for (const auto& entry : fs::recursive_directory_iterator(JobDir())) {
      if (entry.is_regular_file()) files += " '" + entry.path().string() + "'";
    }
    ASSERT_FALSE(files.empty());
    const std::string as_nobody =
        "setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c 'for f in" + files +
        "; do cat \"$f\" >/dev/null 2>&1 && echo \"readable: $f\"; done; "
        "ls '\\''" +
        JobDir() + "'\\'' >/dev/null 2>&1 && echo listable; true'";
    FILE* out = popen(as_nobody.c_str(), "r");
    ASSERT_NE(out, nullptr);
    std::string readable;
    char buffer[4096];
    while (fgets(buffer, sizeof(buffer), out) != nullptr) readable += buffer;
    ASSERT_EQ(pclose(out), 0) << "setpriv failed";
    EXPECT_EQ(readable, "") << "another user reads the job's files";

    if (!yarn()) {
      // Nor do their `tony status` and `tony list` guess at what they cannot read: each says so.
      fs::permissions(runner_.home() + "/jobs", fs::perms::others_read, fs::perm_options::add);
      const std::string tony_as_nobody =
          "setpriv --reuid=nobody --regid=nogroup --clear-groups env "
          "HOME=/tmp TONY_HOME='" +
          runner_.home() + "' '" + runner_.binary() + "' ";
      for (const std::string& command : {"status " + app_id_, std::string("list --all")}) {
        FILE* tony_out = popen((tony_as_nobody + command + " 2>&1").c_str(), "r");
        ASSERT_NE(tony_out, nullptr);
        std::string said;
        while (fgets(buffer, sizeof(buffer), tony_out) != nullptr) said += buffer;
        pclose(tony_out);
        EXPECT_NE(said.find("cannot read the job director"), std::string::npos)
            << command << ": " << said;
        EXPECT_NE(said.find(app_id_), std::string::npos) << command << ": " << said;
        EXPECT_EQ(said.find("FAILED"), std::string::npos) << command << ": " << said;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SecurityE2eTest, ::testing::Values("local", "yarn"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tony::testing
