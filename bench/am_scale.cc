// am_scale --tasks N [--heartbeat-seconds S] [--heartbeat-ms I] [--connections C]: one real
// ApplicationMaster (its control plane over TLS on loopback, in a child process of its own) with an
// allocator that grants every container at once and starts nothing, and N simulated executors in
// this process that do what tony executors do over the real control plane: register (each on a
// port of its own, drawn as ephemeral ports are), wait for the cluster spec (and unpack it),
// heartbeat for S seconds at the job's pace (config/heartbeat_pace.h; --heartbeat-ms sets another),
// report their exit. Prints what it measured, and as its last line a JSON object: tasks,
// register_ms (the first launch to the last registration), spec_release_ms (the last registration
// to the last executor holding the spec), spec_bytes (the packed spec one executor receives),
// unpack_us (what one executor then takes to unpack it, on its own host), heartbeat_ms (the
// interval), heartbeats_per_s and am_cpu_pct (of one core, while every executor heartbeats),
// am_peak_rss_mb (over the AM's whole life), report_ms (the results to the AM's exit).
// bench/am_scale.py runs it for several N.

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "am/am_process.h"
#include "am/application_master.h"
#include "cluster/container_allocator.h"
#include "common/clock.h"
#include "common/process.h"
#include "config/configuration.h"
#include "config/heartbeat_pace.h"
#include "config/job_spec.h"
#include "config/key_catalog.h"
#include "grpcpp/grpcpp.h"
#include "rpc/auth.h"
#include "rpc/cluster_pack.h"
#include "rpc/job_credentials.h"
#include "rpc/launch_contract.h"
#include "rpc/tony.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace tony::bench {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The AM's side: grants every request at once and tells the parent of every launch (one line
// "type index container" on `out`); a container completes when its executor reported.
class GrantingAllocator final : public cluster::ContainerAllocator {
 public:
  explicit GrantingAllocator(FILE* out) : out_(out) {}
  absl::Status Start(const std::string& host, int port, const std::string&,
                     Callbacks callbacks) override {
    callbacks_ = std::move(callbacks);
    std::fprintf(out_, "address %s:%d\n", host.c_str(), port);
    std::fflush(out_);
    return absl::OkStatus();
  }
  absl::Status CheckFits(const cluster::ContainerRequest&) const override {
    return absl::OkStatus();
  }
  void Request(const cluster::ContainerRequest& request) override {
    cluster::Container container;
    container.id = "container_" + std::to_string(next_id_++);
    container.job_type = request.job_type;
    container.host = "127.0.0.1";
    container.resources = request.resources;
    callbacks_.on_allocated(container);
  }
  absl::Status Launch(const cluster::Container& container,
                      const cluster::LaunchSpec& spec) override {
    running_++;
    std::fprintf(out_, "launch %s %s %s\n", spec.env.at(rpc::kEnvTaskType).c_str(),
                 spec.env.at(rpc::kEnvTaskIndex).c_str(), container.id.c_str());
    std::fflush(out_);
    return absl::OkStatus();
  }
  void Stop(const std::string& id, int64_t) override { Complete(id, 143); }
  void Release(const std::string&) override {}
  void ExpectCompletion(const std::string& id) override { Complete(id, 0); }
  absl::Status Finish(cluster::FinalStatus, const std::string&, const std::string&) override {
    return absl::OkStatus();
  }
  int RunningContainers() const override { return running_; }
  void Shutdown() override {}

 private:
  void Complete(const std::string& id, int code) {
    running_--;
    callbacks_.on_completed({id, code, "", cluster::ContainerExit::Cause::kExited});
  }
  FILE* out_;
  Callbacks callbacks_;
  std::atomic<int> next_id_{2};
  std::atomic<int> running_{0};
};

config::JobSpec Workers(int tasks) {
  config::Configuration conf = config::KeyCatalog::BuiltIn().Defaults();
  for (auto [key, value] : {std::pair<std::string, std::string>{"tony.containers.command", "true"},
                            {"tony.worker.instances", std::to_string(tasks)},
                            {"tony.am.wait-client-signal-stop-timeout-sec", "0"}}) {
    conf.Set(key, value, config::ValueSource::ConfFlag());
  }
  absl::StatusOr<config::JobSpec> spec = config::BuildJobSpec(conf);
  if (!spec.ok()) {
    std::cerr << spec.status() << "\n";
    std::exit(2);
  }
  return *std::move(spec);
}

// One simulated executor: its task, credential and the calls it has in flight.
struct Executor {
  rpc::TaskRef task;
  std::string container_id;
  std::string auth;
  rpc::TonyAm::Stub* stub = nullptr;
};

// Counts finished calls and wakes the waiter when `target` is reached.
class Countdown {
 public:
  void Reset(int target) {
    std::lock_guard lock(mu_);
    done_ = 0;
    failed_ = 0;
    target_ = target;
  }
  void Done(bool ok) {
    std::lock_guard lock(mu_);
    ++done_;
    if (!ok) ++failed_;
    if (done_ >= target_) changed_.notify_all();
  }
  bool Wait(int seconds) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(seconds), [&] { return done_ >= target_; });
  }
  int failed() {
    std::lock_guard lock(mu_);
    return failed_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int done_ = 0, failed_ = 0, target_ = 0;
};

// Starts one call with the callback API; `done(ok)` runs when it finishes. The call's state lives
// until then.
template <typename Request, typename Response, typename Invoke>
void Call(const Executor& executor, Request request, std::function<void(bool, Response*)> done,
          Invoke invoke) {
  struct State {
    grpc::ClientContext context;
    Request request;
    Response response;
  };
  auto state = std::make_shared<State>();
  state->request = std::move(request);
  rpc::AttachAuth(&state->context, executor.auth);
  state->context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  invoke(executor.stub->async(), &state->context, &state->request, &state->response,
         [state, done = std::move(done)](grpc::Status status) {
           done(status.ok(), &state->response);
         });
}

std::pair<int64_t, int64_t> CpuTicksAndPeakRss(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  int64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  int64_t peak_kb = 0;
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmHWM:")) peak_kb = std::stoll(line.substr(6));
  }
  return {utime + stime, peak_kb};
}

int Main(int tasks, int heartbeat_seconds, int64_t heartbeat_ms, int connections) {
  // A connection each, at --connections N: the AM raises its own limit, the simulated executors
  // share this process's.
  if (absl::StatusOr<int64_t> files = RaiseOpenFileLimit(65536);
      !files.ok() || *files < 2 * static_cast<int64_t>(connections) + 64) {
    std::cerr << "am_scale: too few open files for " << connections << " connections\n";
    return 1;
  }
  absl::StatusOr<rpc::JobCredentials> credentials = rpc::GenerateJobCredentials(/*tls=*/true);
  if (!credentials.ok()) return 1;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return 1;
  const pid_t am_pid = fork();
  if (am_pid == 0) {
    close(pipe_fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    am::LimitMallocArenas();  // as `tony am` does
    spdlog::set_level(spdlog::level::warn);
    FILE* out = fdopen(pipe_fds[1], "w");
    GrantingAllocator allocator(out);
    am::AmOptions options;
    options.app_id = "application_1_0001";
    options.credentials = *credentials;
    options.bind_host = "127.0.0.1";
    options.host = "127.0.0.1";
    options.executable = "/bin/false";
    options.status_page = false;
    am::ApplicationMaster am(options, Workers(tasks), &allocator, SystemClock::Get());
    _exit(am.Run());
  }
  close(pipe_fds[1]);
  FILE* in = fdopen(pipe_fds[0], "r");
  char line[512];
  std::string address;
  if (std::fgets(line, sizeof line, in) == nullptr) return 1;
  char word[256];
  if (std::sscanf(line, "address %255s", word) != 1) return 1;
  address = word;

  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<rpc::TonyAm::Stub>> stubs;
  for (int i = 0; i < std::min(tasks, connections); ++i) {
    // As rpc::AmChannel, with a connection of its own for each channel, as executors have.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetSslTargetNameOverride(rpc::kAmTlsName);
    args.SetInt(GRPC_ARG_TSI_MAX_FRAME_SIZE, rpc::kTlsMaxFrameBytes);
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = credentials->am_cert_pem;
    channels.push_back(grpc::CreateCustomChannel(address, grpc::SslCredentials(tls), args));
    stubs.push_back(rpc::TonyAm::NewStub(channels.back()));
  }

  std::vector<Executor> executors;
  Countdown registered, specs, beats, reports;
  registered.Reset(tasks);
  specs.Reset(tasks);
  Clock::time_point first_launch;
  Clock::time_point last_registered, last_spec;
  std::mutex times_mu;
  // Each launch line starts an executor: register, then wait for the spec.
  for (int i = 0; i < tasks; ++i) {
    if (std::fgets(line, sizeof line, in) == nullptr) return 1;
    char type[64], container[128];
    int index = 0;
    if (std::sscanf(line, "launch %63s %d %127s", type, &index, container) != 3) return 1;
    if (i == 0) first_launch = Clock::now();
    Executor executor;
    executor.task.set_type(type);
    executor.task.set_index(index);
    executor.container_id = container;
    executor.auth = rpc::TaskAuthValue(
        type, index, container, rpc::TaskCredential(credentials->secret, type, index, container));
    executor.stub = stubs[i % stubs.size()].get();
    executors.push_back(executor);
  }
  // Ephemeral ports, as the executors' sockets get them: a run of numbers would flatter the
  // packed spec.
  std::vector<int> ports(tasks);
  std::mt19937 random(tasks);
  std::uniform_int_distribution<int> port(32768, 60999);
  for (int& p : ports) p = port(random);
  std::vector<rpc::WaitClusterSpecResponse> received(tasks);
  for (const Executor& executor : executors) {
    rpc::RegisterTaskRequest request;
    *request.mutable_task() = executor.task;
    request.set_container_id(executor.container_id);
    request.set_host("127.0.0.1");
    request.set_port(ports[executor.task.index()]);
    Call<rpc::RegisterTaskRequest, rpc::RegisterTaskResponse>(
        executor, request,
        [&, executor](bool ok, rpc::RegisterTaskResponse*) {
          {
            std::lock_guard lock(times_mu);
            last_registered = Clock::now();
          }
          registered.Done(ok);
          rpc::WaitClusterSpecRequest wait;
          *wait.mutable_task() = executor.task;
          wait.set_container_id(executor.container_id);
          Call<rpc::WaitClusterSpecRequest, rpc::WaitClusterSpecResponse>(
              executor, wait,
              [&, index = executor.task.index()](bool spec_ok,
                                                 rpc::WaitClusterSpecResponse* response) {
                {
                  std::lock_guard lock(times_mu);
                  last_spec = Clock::now();
                }
                // Unpacked below, after the clock: each executor unpacks its own on a host of its
                // own, where here they would all share these 2 cores.
                received[index].Swap(response);
                specs.Done(spec_ok);
              },
              [](auto* async, auto... args) { async->WaitClusterSpec(args...); });
        },
        [](auto* async, auto... args) { async->RegisterTask(args...); });
  }
  if (!registered.Wait(600) || !specs.Wait(600)) {
    std::cerr << "the executors did not all get the spec\n";
    kill(am_pid, SIGKILL);
    return 1;
  }
  const double register_ms =
      std::chrono::duration<double, std::milli>(last_registered - first_launch).count();
  const double spec_release_ms =
      std::chrono::duration<double, std::milli>(last_spec - last_registered).count();
  // Every executor's spec holds every task's address once unpacked, as the executor's link does.
  const int64_t spec_bytes = static_cast<int64_t>(received[0].packed_cluster().size());
  int bad_specs = 0;
  const Clock::time_point unpack_start = Clock::now();
  for (rpc::WaitClusterSpecResponse& response : received) {
    if (!rpc::UnpackCluster(&response).ok() || !response.cluster().contains("worker") ||
        response.cluster().at("worker").addresses_size() != tasks) {
      ++bad_specs;
    }
  }
  const double unpack_us = MsSince(unpack_start) * 1000 / tasks;
  received.clear();

  // Heartbeats: every executor at the job's pace, spread evenly over the interval, for at least
  // heartbeat_seconds.
  if (heartbeat_ms <= 0) heartbeat_ms = config::ExecutorHeartbeat(Workers(tasks)).interval_ms;
  const int64_t rounds = (int64_t{heartbeat_seconds} * 1000 + heartbeat_ms - 1) / heartbeat_ms;
  beats.Reset(static_cast<int>(tasks * rounds));
  const auto [cpu_before, peak_before] = CpuTicksAndPeakRss(am_pid);
  const Clock::time_point beat_start = Clock::now();
  for (int64_t round = 0; round < rounds; ++round) {
    for (int i = 0; i < tasks; ++i) {
      const auto due =
          beat_start + std::chrono::milliseconds(round * heartbeat_ms + i * heartbeat_ms / tasks);
      std::this_thread::sleep_until(due);  // pacing the load, not synchronizing
      rpc::HeartbeatRequest request;
      *request.mutable_task() = executors[i].task;
      request.set_container_id(executors[i].container_id);
      request.set_rss_bytes(10 << 20);
      Call<rpc::HeartbeatRequest, rpc::HeartbeatResponse>(
          executors[i], request, [&](bool ok, rpc::HeartbeatResponse*) { beats.Done(ok); },
          [](auto* async, auto... args) { async->Heartbeat(args...); });
    }
  }
  // The window is whole rounds: the last beats are due just before its end.
  std::this_thread::sleep_until(beat_start + std::chrono::milliseconds(rounds * heartbeat_ms));
  beats.Wait(120);
  const double beat_seconds = MsSince(beat_start) / 1000;
  const double beats_per_s = static_cast<double>(tasks * rounds) / beat_seconds;
  const auto [cpu_after, peak_through_beats_kb] = CpuTicksAndPeakRss(am_pid);
  const double am_cpu_pct =
      100.0 * static_cast<double>(cpu_after - cpu_before) / sysconf(_SC_CLK_TCK) / beat_seconds;

  reports.Reset(tasks);
  const Clock::time_point report_start = Clock::now();
  for (const Executor& executor : executors) {
    rpc::ReportResultRequest request;
    *request.mutable_task() = executor.task;
    request.set_container_id(executor.container_id);
    request.set_exit_code(0);
    Call<rpc::ReportResultRequest, rpc::ReportResultResponse>(
        executor, request, [&](bool ok, rpc::ReportResultResponse*) { reports.Done(ok); },
        [](auto* async, auto... args) { async->ReportResult(args...); });
  }
  reports.Wait(600);
  int status = 0;
  // The AM's peak over its whole life, its end included (the reports and the job's end): the
  // largest resident set the kernel saw, as wait4 reports it.
  rusage usage{};
  wait4(am_pid, &status, 0, &usage);
  const int64_t peak_rss_kb = std::max<int64_t>(peak_through_beats_kb, usage.ru_maxrss);
  const double report_ms = MsSince(report_start);
  const int failures =
      registered.failed() + specs.failed() + beats.failed() + reports.failed() + bad_specs;

  std::printf(
      "tasks %d: register %.0f ms, spec release %.0f ms after the last registration (%lld bytes "
      "packed, %.0f us to unpack), heartbeats every %lld ms: %.0f/s at %.1f%% of one core, AM "
      "peak RSS %.1f MB, reports to exit %.0f ms, AM exit %d, failed calls %d\n",
      tasks, register_ms, spec_release_ms, static_cast<long long>(spec_bytes), unpack_us,
      static_cast<long long>(heartbeat_ms), beats_per_s, am_cpu_pct, peak_rss_kb / 1024.0,
      report_ms, WEXITSTATUS(status), failures);
  std::printf(
      "{\"tasks\": %d, \"register_ms\": %.0f, \"spec_release_ms\": %.0f, \"spec_bytes\": %lld, "
      "\"unpack_us\": %.0f, \"heartbeat_ms\": %lld, \"heartbeats_per_s\": %.0f, \"am_cpu_pct\": "
      "%.1f, \"am_peak_rss_mb\": %.1f, \"report_ms\": %.0f, \"failed_calls\": %d, \"am_exit\": "
      "%d}\n",
      tasks, register_ms, spec_release_ms, static_cast<long long>(spec_bytes), unpack_us,
      static_cast<long long>(heartbeat_ms), beats_per_s, am_cpu_pct, peak_rss_kb / 1024.0,
      report_ms, failures, WEXITSTATUS(status));
  (void)peak_before;
  return failures == 0 && WEXITSTATUS(status) == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tony::bench

int main(int argc, char** argv) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);  // as tony's main does
  int tasks = 64, heartbeat_seconds = 10, connections = 256, heartbeat_ms = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--tasks") tasks = value;
    if (flag == "--heartbeat-seconds") heartbeat_seconds = value;
    if (flag == "--heartbeat-ms") heartbeat_ms = value;
    if (flag == "--connections") connections = value;
  }
  if (tasks <= 0 || heartbeat_seconds <= 0 || connections <= 0 || heartbeat_ms < 0) {
    std::cerr << "usage: am_scale --tasks N [--heartbeat-seconds S] [--heartbeat-ms I] "
                 "[--connections C]\n";
    return 2;
  }
  return tony::bench::Main(tasks, heartbeat_seconds, heartbeat_ms, connections);
}
