// A tiny ApplicationMaster for am_protocols_it_test, run by YARN in the AM container of the mini
// cluster. It speaks the scheduler and NodeManager protocols through AmRmClient and NmClient and
// reports what happened in the diagnostics of its unregistration, which the test reads from the
// application report.
//
//   am_protocols_it_am --conf-dir DIR child      ask for one container (128 MB, 1 vcore), run
//                                                `exit 3` in it, check that a second start is
//                                                refused, wait for its completion; finish
//                                                SUCCEEDED "child exited 3; ..." if it exited 3
//   am_protocols_it_am --conf-dir DIR stop       run `sleep 600` in a container, see it RUNNING
//                                                via getContainerStatuses, stop it through the NM;
//                                                finish SUCCEEDED "... exit -105" if the RM then
//                                                reports it killed by the AM
//   am_protocols_it_am --conf-dir DIR oversized  ask for more memory than the maximum capability;
//                                                finish SUCCEEDED "oversized ask rejected: ..." if
//                                                the RM refused it
//
// Anything unexpected: finish FAILED with the reason and exit 1. Logs go to stderr (the container's
// stderr file under the cluster's log directory).

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/strings.h"
#include "hadoop/common/credentials.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/ipc/rpc_codec.h"
#include "hadoop/yarn/am_rm_client.h"
#include "hadoop/yarn/nm_client.h"

namespace tony::hadoop {
namespace {

using std::chrono::steady_clock;

constexpr std::chrono::milliseconds kHeartbeat{200};
constexpr std::chrono::seconds kDeadline{90};

struct Outcome {
  FinalApplicationStatus status = FinalApplicationStatus::kFailed;
  std::string diagnostics;
};

Outcome Failed(const std::string& why) { return {FinalApplicationStatus::kFailed, why}; }

// Heartbeats until `done` returns true for a result, or the deadline passes.
template <typename Done>
absl::Status HeartbeatUntil(AmRmClient& rm, std::vector<ContainerRequest> first_asks,
                            std::vector<ContainerId>& releases, Done done) {
  std::vector<ContainerRequest> asks = std::move(first_asks);
  for (auto deadline = steady_clock::now() + kDeadline; steady_clock::now() < deadline;
       std::this_thread::sleep_for(kHeartbeat)) {
    absl::StatusOr<AllocateResult> result = rm.Allocate(asks, releases, 0.5f);
    if (!result.ok()) return result.status();
    releases.clear();
    // The scheduler keeps the ask and counts it down as it allocates; send it again only if the
    // RM forgot it.
    if (!result->reregistered) asks.clear();
    if (done(*result)) return absl::OkStatus();
  }
  return absl::DeadlineExceededError(StrCat("nothing after ", kDeadline.count(), " s"));
}

// Asks for one small container and waits for it; returns extra ones. Feeds the NMTokens to nm.
absl::StatusOr<Container> AllocateOne(AmRmClient& rm, NmClient& nm) {
  const ContainerRequest ask{
      .capability = {.memory_mb = 128, .vcores = 1}, .num_containers = 1, .priority = 1};
  std::optional<Container> child;
  std::vector<ContainerId> releases;
  absl::Status s = HeartbeatUntil(rm, {ask}, releases, [&](const AllocateResult& result) {
    nm.UpdateNmTokens(result.nm_tokens);
    for (const Container& container : result.allocated) {
      if (child.has_value()) {
        releases.push_back(container.id);  // more than asked for: give it back
      } else {
        child = container;
      }
    }
    return child.has_value();
  });
  if (!s.ok()) return absl::Status(s.code(), StrCat("no container allocated: ", s.message()));
  std::cerr << "allocated " << child->id.ToString() << " on " << child->node_id() << "\n";
  return *child;
}

// Heartbeats until the RM reports the container complete.
absl::StatusOr<ContainerStatus> AwaitCompletion(AmRmClient& rm, const Container& child) {
  std::optional<ContainerStatus> completion;
  std::vector<ContainerId> releases;
  absl::Status s = HeartbeatUntil(rm, {}, releases, [&](const AllocateResult& result) {
    for (const ContainerStatus& status : result.completed) {
      if (status.id == child.id) completion = status;
    }
    return completion.has_value();
  });
  if (!s.ok()) {
    return absl::Status(s.code(),
                        StrCat("no completion for ", child.id.ToString(), ": ", s.message()));
  }
  std::cerr << "completed " << completion->id.ToString() << " state " << ToString(completion->state)
            << " exit " << completion->exit_status << " diagnostics: " << completion->diagnostics
            << "\n";
  return *completion;
}

ContainerLaunchContext ShellCommand(const std::string& script) {
  ContainerLaunchContext launch;
  // The NodeManager runs the joined words under bash -c "...": no double quotes.
  launch.commands = {"/bin/sh", "-c", StrCat("'", script, "'")};
  return launch;
}

Outcome RunChild(AmRmClient& rm, NmClient& nm) {
  absl::StatusOr<Container> child = AllocateOne(rm, nm);
  if (!child.ok()) return Failed(std::string(ToStd(child.status().message())));
  if (absl::Status s = nm.StartContainer(*child, ShellCommand("exit 3")); !s.ok()) {
    return Failed(StrCat("startContainers failed: ", ToStd(s.message())));
  }
  std::cerr << "started " << child->id.ToString() << "\n";
  // Starting it again is refused by the NodeManager for this container alone.
  absl::Status again = nm.StartContainer(*child, ShellCommand("exit 4"));
  std::optional<RemoteError> refusal = GetRemoteError(again);
  std::cerr << "second start: " << again << "\n";
  if (again.ok() || !refusal.has_value() ||
      !Contains(ToStd(again.message()), child->id.ToString())) {
    return Failed(StrCat("a second start of ", child->id.ToString(),
                         " was not refused per container: ", again.ToString()));
  }
  absl::StatusOr<ContainerStatus> completion = AwaitCompletion(rm, *child);
  if (!completion.ok()) return Failed(std::string(ToStd(completion.status().message())));
  if (completion->exit_status != 3) {
    return Failed(StrCat(child->id.ToString(), " exited ", completion->exit_status,
                         " instead of 3: ", completion->diagnostics));
  }
  return {FinalApplicationStatus::kSucceeded,
          StrCat("child exited 3; a second start was refused with ", refusal->class_name)};
}

// Starts `sleep 600`, sees it RUNNING through the NodeManager, stops it there, and sees the RM
// report it killed by the AM.
Outcome RunStop(AmRmClient& rm, NmClient& nm) {
  absl::StatusOr<Container> child = AllocateOne(rm, nm);
  if (!child.ok()) return Failed(std::string(ToStd(child.status().message())));
  if (absl::Status s = nm.StartContainer(*child, ShellCommand("sleep 600")); !s.ok()) {
    return Failed(StrCat("startContainers failed: ", ToStd(s.message())));
  }
  ContainerState state = ContainerState::kUnknown;
  for (auto deadline = steady_clock::now() + kDeadline;
       state != ContainerState::kRunning && steady_clock::now() < deadline;
       std::this_thread::sleep_for(kHeartbeat)) {
    absl::StatusOr<ContainerStatus> status = nm.GetContainerStatus(*child);
    if (!status.ok()) return Failed(StrCat("getContainerStatuses: ", status.status().message()));
    state = status->state;
  }
  if (state != ContainerState::kRunning) {
    return Failed(StrCat(child->id.ToString(), " never RUNNING: ", ToString(state)));
  }
  if (absl::Status s = nm.StopContainer(*child); !s.ok()) {
    return Failed(StrCat("stopContainers failed: ", ToStd(s.message())));
  }
  absl::StatusOr<ContainerStatus> completion = AwaitCompletion(rm, *child);
  if (!completion.ok()) return Failed(std::string(ToStd(completion.status().message())));
  if (completion->exit_status != kExitStatusKilledByAppMaster) {
    return Failed(StrCat(child->id.ToString(), " ended with ", completion->exit_status,
                         " instead of ", kExitStatusKilledByAppMaster, ": ",
                         completion->diagnostics));
  }
  return {FinalApplicationStatus::kSucceeded,
          StrCat("child was RUNNING, stopped, exit ", completion->exit_status)};
}

Outcome RunOversized(AmRmClient& rm, const Resource& maximum) {
  const ContainerRequest ask{.capability = {.memory_mb = maximum.memory_mb + 1024, .vcores = 1},
                             .num_containers = 1,
                             .priority = 1};
  absl::StatusOr<AllocateResult> result = rm.Allocate({ask}, {}, 0.1f);
  if (result.ok()) {
    return Failed(StrCat("an ask for ", ask.capability.memory_mb, " MB (maximum ",
                         maximum.memory_mb, " MB) was accepted"));
  }
  std::optional<RemoteError> error = GetRemoteError(result.status());
  if (result.status().code() != absl::StatusCode::kInvalidArgument || !error.has_value()) {
    return Failed(StrCat("unexpected error for the oversized ask: ", result.status().ToString()));
  }
  return {FinalApplicationStatus::kSucceeded,
          StrCat("oversized ask rejected: ", ToStd(result.status().message()))};
}

int Main(int argc, char** argv) {
  if (argc != 4 || std::string(argv[1]) != "--conf-dir") {
    std::cerr << "usage: " << argv[0] << " --conf-dir DIR child|stop|oversized\n";
    return 2;
  }
  const std::string mode = argv[3];
  std::cerr << "AM " << (std::getenv("CONTAINER_ID") ? std::getenv("CONTAINER_ID") : "?")
            << " on NM " << (std::getenv("NM_HOST") ? std::getenv("NM_HOST") : "?") << ":"
            << (std::getenv("NM_PORT") ? std::getenv("NM_PORT") : "?") << ", mode " << mode << "\n";

  const char* token_file = std::getenv("HADOOP_TOKEN_FILE_LOCATION");
  if (token_file == nullptr) {
    std::cerr << "HADOOP_TOKEN_FILE_LOCATION is not set: not in a YARN AM container\n";
    return 1;
  }
  absl::StatusOr<Credentials> credentials = Credentials::ReadFile(token_file);
  absl::StatusOr<HadoopConf> conf = HadoopConf::Load({argv[2]});
  if (!credentials.ok() || !conf.ok()) {
    std::cerr << "setup: " << credentials.status() << "; " << conf.status() << "\n";
    return 1;
  }
  absl::StatusOr<std::unique_ptr<AmRmClient>> rm = AmRmClient::Connect(*conf, *credentials);
  if (!rm.ok()) {
    std::cerr << rm.status() << "\n";
    return 1;
  }
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  absl::StatusOr<RegisterResult> registered = (*rm)->Register(host, 0, "");
  if (!registered.ok()) {
    std::cerr << registered.status() << "\n";
    return 1;
  }
  std::cerr << "registered with " << (*rm)->peer() << "; maximum capability "
            << registered->maximum_capability.memory_mb << " MB, queue " << registered->queue
            << "\n";

  NmClient nm;
  Outcome outcome;
  if (mode == "child") {
    outcome = RunChild(**rm, nm);
  } else if (mode == "stop") {
    outcome = RunStop(**rm, nm);
  } else if (mode == "oversized") {
    outcome = RunOversized(**rm, registered->maximum_capability);
  } else {
    outcome = Failed(StrCat("unknown mode '", mode, "'"));
  }
  std::cerr << "finishing " << ToString(outcome.status) << ": " << outcome.diagnostics << "\n";

  for (auto deadline = steady_clock::now() + kDeadline;; std::this_thread::sleep_for(kHeartbeat)) {
    absl::StatusOr<bool> unregistered = (*rm)->Finish(outcome.status, outcome.diagnostics, "");
    if (!unregistered.ok()) {
      std::cerr << unregistered.status() << "\n";
      return 1;
    }
    if (*unregistered) break;
    if (steady_clock::now() >= deadline) {
      std::cerr << "the RM did not confirm the unregistration\n";
      return 1;
    }
  }
  return outcome.status == FinalApplicationStatus::kSucceeded ? 0 : 1;
}

}  // namespace
}  // namespace tony::hadoop

int main(int argc, char** argv) { return tony::hadoop::Main(argc, argv); }
