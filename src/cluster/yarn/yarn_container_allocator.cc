#include "cluster/yarn/yarn_container_allocator.h"

#include <chrono>

#include "cluster/staging.h"
#include "common/clock.h"
#include "common/strings.h"
#include "config/placement_constraint.h"
#include "spdlog/spdlog.h"

namespace tony::cluster {
namespace {

int64_t SteadyNowMs() { return SystemClock::Get()->NowMs(); }

// The RM's answer to SchedulingRequests its placement handler cannot take (disabled, the default,
// or a scheduler without placement): a YarnException that names the setting.
bool RefusesPlacement(const absl::Status& status) {
  const std::optional<hadoop::RemoteError> error = hadoop::GetRemoteError(status);
  return error.has_value() &&
         (error->message.find("placement-constraints.handler") != std::string::npos ||
          error->message.find("cannot handle placement constraints") != std::string::npos);
}

hadoop::Resource ToYarn(const ResourceAsk& ask) {
  hadoop::Resource resource;
  resource.memory_mb = ask.memory_mb;
  resource.vcores = ask.vcores;
  resource.gpus = ask.gpus;
  return resource;
}

}  // namespace

ContainerExit ToContainerExit(const hadoop::ContainerStatus& status) {
  ContainerExit exit;
  exit.container_id = status.id.ToString();
  exit.exit_code = status.exit_status;
  exit.diagnostics = std::string(StripWhitespace(status.diagnostics));
  switch (status.exit_status) {
    case hadoop::kExitStatusKilledExceededPmem:
    case hadoop::kExitStatusKilledExceededVmem:
      exit.cause = ContainerExit::Cause::kOverMemory;
      break;
    case hadoop::kExitStatusKilledByAppMaster:
    case hadoop::kExitStatusKilledAfterAppCompletion:
      exit.cause = ContainerExit::Cause::kStoppedByAm;
      break;
    case hadoop::kExitStatusAborted:
    case hadoop::kExitStatusPreempted:
    case hadoop::kExitStatusDisksFailed:
    case hadoop::kExitStatusKilledByResourceManager:
      exit.cause = ContainerExit::Cause::kLost;
      break;
    default:
      exit.cause = ContainerExit::Cause::kExited;
  }
  if (status.exit_status == hadoop::kExitStatusPreempted && exit.diagnostics.empty()) {
    exit.diagnostics = "preempted by the scheduler";
  }
  return exit;
}

YarnContainerAllocator::YarnContainerAllocator(YarnAllocatorOptions options)
    : options_(std::move(options)),
      hdfs_(options_.webhdfs,
            hadoop::WebHdfsAuth{options_.user, nullptr,
                                options_.hdfs_tokens.empty()
                                    ? std::nullopt
                                    : std::optional<hadoop::Token>(options_.hdfs_tokens.front())}),
      namenodes_(HdfsNameNodesOptions{options_.hadoop_conf, options_.default_fs,
                                      hadoop::WebHdfsAuth{options_.user, nullptr, {}},
                                      options_.webhdfs_tls},
                 &hdfs_),
      hdfs_tokens_(options_.hdfs_tokens),
      kms_tokens_(options_.kms_tokens) {
  hdfs_.SetTls(options_.webhdfs_tls);
  namenodes_.SetTokens(options_.hdfs_tokens);
}

YarnContainerAllocator::~YarnContainerAllocator() { Shutdown(); }

absl::Status YarnContainerAllocator::Start(const std::string& am_host, int am_port,
                                           const std::string& tracking_url, Callbacks callbacks) {
  callbacks_ = std::move(callbacks);
  hadoop::RpcConnector connector =
      options_.scheduler_connector
          ? options_.scheduler_connector
          : hadoop::TokenIpcConnector(std::string(hadoop::kApplicationMasterProtocol));
  if (options_.ha_schedulers.size() > 1) {
    connector = hadoop::FailoverConnector("ResourceManager", options_.ha_schedulers,
                                          std::move(connector), options_.failover);
  }
  absl::StatusOr<std::unique_ptr<hadoop::AmRmClient>> client =
      hadoop::AmRmClient::Connect(options_.scheduler, options_.am_rm_token, std::move(connector));
  if (!client.ok()) return client.status();
  am_rm_ = *std::move(client);
  absl::StatusOr<hadoop::RegisterResult> registered =
      am_rm_->Register(am_host, am_port, tracking_url);
  if (!registered.ok()) return registered.status();
  maximum_ = registered->maximum_capability;
  if (!registered->containers_from_previous_attempts.empty()) {
    // With keep_containers_across_application_attempts the RM hands over what earlier attempts
    // still run, and the NMTokens to stop them with; their ends come with the heartbeats.
    nm_.UpdateNmTokens(registered->nm_tokens_from_previous_attempts);
    MutexLock lock(mu_);
    for (const hadoop::Container& yarn : registered->containers_from_previous_attempts) {
      Container container;
      container.id = yarn.id.ToString();
      container.host = yarn.node_host;
      container.resources = {yarn.resource.memory_mb, yarn.resource.vcores,
                             static_cast<int>(yarn.resource.gpus)};
      container.log_dir =
          StrCat(options_.web_https ? "https://" : "http://", yarn.node_http_address,
                 "/node/containerlogs/", container.id, "/", options_.user);
      granted_[container.id] = yarn;
      launched_.insert(container.id);
      previous_.push_back(container);
    }
    spdlog::info("the ResourceManager handed over {} running containers of earlier attempts",
                 previous_.size());
  }
  if (!options_.am_address_file.empty()) {
    // Executors of an earlier attempt look here for this one (a failure costs only them).
    if (absl::Status written =
            hdfs_.Create(options_.am_address_file, StrCat(am_host, ":", am_port, "\n"));
        !written.ok()) {
      spdlog::warn("the executors of earlier attempts cannot find this AM: {}",
                   ToStd(written.message()));
    }
  }
  heartbeat_ = std::thread([this] { HeartbeatLoop(); });
  for (int i = 0; i < kLauncherThreads; ++i) launchers_.emplace_back([this] { LauncherLoop(); });
  if (options_.token_refresh.has_value()) {
    std::vector<hadoop::Token> initial = options_.hdfs_tokens;
    initial.insert(initial.end(), options_.kms_tokens.begin(), options_.kms_tokens.end());
    refresher_ = std::make_unique<HdfsTokenRefresher>(
        [options = *options_.token_refresh] { return FetchFreshTokens(options); },
        [this](const std::vector<hadoop::Token>& tokens) { OnFreshTokens(tokens); }, initial,
        SystemClock::Get());
    refresher_->Start();
  }
  return absl::OkStatus();
}

absl::Status YarnContainerAllocator::CheckFits(const ContainerRequest& request) const {
  const hadoop::Resource& max = maximum_;
  const ResourceAsk& ask = request.resources;
  if (ask.memory_mb > max.memory_mb || ask.vcores > max.vcores || ask.gpus > max.gpus) {
    return absl::ResourceExhaustedError(
        StrCat("a ", request.job_type, " container asks for ", ask.memory_mb, " MB, ", ask.vcores,
               " vcores, ", ask.gpus, " GPUs; the cluster's largest is ", max.memory_mb, " MB, ",
               max.vcores, " vcores, ", max.gpus, " GPUs"));
  }
  return absl::OkStatus();
}

void YarnContainerAllocator::Request(const ContainerRequest& request) {
  {
    MutexLock lock(mu_);
    // One priority per job type and size: a grant's priority says which ask it answers.
    std::string key = request.job_type;
    if (auto first = asks_.find(key);
        first != asks_.end() && first->second.resources != request.resources) {
      key = StrCat(request.job_type, "@", request.resources.memory_mb, "m/",
                   request.resources.vcores, "c/", request.resources.gpus, "g");
    }
    auto [it, inserted] = asks_.try_emplace(key);
    TypeAsk& ask = it->second;
    if (inserted) {
      ask.job_type = request.job_type;
      ask.priority = static_cast<int32_t>(asks_.size());
      ask.resources = request.resources;
      ask.node_label = request.node_label;
      if (!request.placement.empty()) {
        absl::StatusOr<config::PlacementConstraint> constraint =
            config::ParsePlacementConstraint(request.placement);
        if (constraint.ok()) {
          ask.placement = PlacementToProto(*constraint);
        } else {  // the client checked it: not expected
          spdlog::error("job type {}: {}; it asks without its placement constraint",
                        request.job_type, ToStd(constraint.status().message()));
        }
      }
    }
    ask.outstanding += 1;
    ask.changed = true;
  }
  wake_.NotifyAll();
}

std::vector<hadoop::ContainerRequest> YarnContainerAllocator::TakeChangedAsksLocked() {
  std::vector<hadoop::ContainerRequest> changed;
  for (auto& [type, ask] : asks_) {
    if (!ask.changed || ask.placement.has_value()) continue;
    ask.changed = false;
    // Absolute counts: the scheduler replaces its own.
    for (hadoop::ContainerRequest& row :
         AsksForType(ToYarn(ask.resources), ask.priority, ask.outstanding, ask.node_label,
                     options_.node_hints)) {
      changed.push_back(std::move(row));
    }
  }
  return changed;
}

std::vector<hadoop::proto::SchedulingRequest>
YarnContainerAllocator::TakeChangedSchedulingLocked() {
  std::vector<hadoop::proto::SchedulingRequest> changed;
  for (auto& [type, ask] : asks_) {
    if (!ask.changed || !ask.placement.has_value()) continue;
    ask.changed = false;
    changed.push_back(SchedulingRequestFor(ask.job_type, ask.priority, ToYarn(ask.resources),
                                           ask.outstanding, *ask.placement));
  }
  return changed;
}

void YarnContainerAllocator::HeartbeatLoop() {
  std::string scheduler_peer = am_rm_->peer();  // with RM HA, the RM it last reached
  while (true) {
    std::vector<hadoop::ContainerRequest> asks;
    std::vector<hadoop::proto::SchedulingRequest> scheduling;
    std::vector<hadoop::ContainerId> releases;
    const int64_t interval = TakeHeartbeatWork(&asks, &scheduling, &releases);
    if (interval < 0) return;
    StopOverdueContainers();
    absl::StatusOr<hadoop::AllocateResult> result =
        am_rm_->Allocate(asks, releases, progress_.load(), scheduling);
    if (!result.ok() && hadoop::IsAttemptUnknown(result.status())) {
      EndedByRm(StrCat("the ResourceManager no longer knows this attempt (",
                       ToStd(result.status().message()), ")"));
      OnAllocateFailed(asks, scheduling, releases);
    } else if (!result.ok() && !scheduling.empty() && RefusesPlacement(result.status())) {
      // Every later heartbeat would be refused alike: the job cannot get its containers.
      spdlog::error("allocate on {} failed: {}", am_rm_->peer(), ToStd(result.status().message()));
      OnAllocateFailed({}, {}, releases);  // the releases still go
      Refused();
    } else if (!result.ok()) {
      spdlog::warn("allocate on {} failed: {}", am_rm_->peer(), ToStd(result.status().message()));
      OnAllocateFailed(asks, scheduling, releases);
    } else {
      if (result->reregistered) {
        spdlog::info(
            "the ResourceManager {} had lost this AM's registration (it restarted or "
            "took over): registered again, outstanding asks sent again",
            am_rm_->peer());
      }
      OnAllocated(*result);
    }
    if (const std::string now = am_rm_->peer(); now != scheduler_peer) {
      spdlog::info("the scheduler is now {} (it was {})", now, scheduler_peer);
      scheduler_peer = now;
    }
    WaitForHeartbeat(interval);
  }
}

int64_t YarnContainerAllocator::TakeHeartbeatWork(
    std::vector<hadoop::ContainerRequest>* asks,
    std::vector<hadoop::proto::SchedulingRequest>* scheduling,
    std::vector<hadoop::ContainerId>* releases) {
  MutexLock lock(mu_);
  if (stopping_ || finished_) return -1;
  *asks = TakeChangedAsksLocked();
  // Never both in one call: the CapacityScheduler skips the SchedulingRequests of an allocate
  // whose asks changed anything. Those left wait for the next heartbeat, which comes soon.
  if (asks->empty()) *scheduling = TakeChangedSchedulingLocked();
  releases->swap(releases_);
  int64_t interval = options_.slow_heartbeat_ms;
  for (const auto& [type, ask] : asks_) {
    if (ask.outstanding > 0 || ask.changed) interval = options_.fast_heartbeat_ms;
  }
  hurry_ = false;
  for (auto it = expected_.begin(); it != expected_.end();) {
    it = granted_.count(*it) ? std::next(it) : expected_.erase(it);
  }
  if (!stop_at_.empty() || !expected_.empty()) interval = options_.fast_heartbeat_ms;
  return interval;
}

void YarnContainerAllocator::OnAllocateFailed(
    const std::vector<hadoop::ContainerRequest>& asks,
    const std::vector<hadoop::proto::SchedulingRequest>& scheduling,
    const std::vector<hadoop::ContainerId>& releases) {
  MutexLock lock(mu_);
  std::set<int32_t> priorities;
  for (const auto& ask : asks) priorities.insert(ask.priority);
  for (const auto& request : scheduling) priorities.insert(request.priority().priority());
  for (auto& [type, entry] : asks_) {
    if (priorities.contains(entry.priority)) entry.changed = true;  // send again
  }
  releases_.insert(releases_.end(), releases.begin(), releases.end());
}

void YarnContainerAllocator::OnAllocated(const hadoop::AllocateResult& result) {
  nm_.UpdateNmTokens(result.nm_tokens);
  std::vector<Container> granted;
  {
    MutexLock lock(mu_);
    if (result.reregistered) {
      for (auto& [type, ask] : asks_) ask.changed = true;
    }
    for (const hadoop::Container& yarn : result.allocated) {
      std::string type;
      for (auto& [name, ask] : asks_) {
        if (ask.priority == yarn.priority && ask.outstanding > 0) type = name;
      }
      if (type.empty()) {
        releases_.push_back(yarn.id);  // surplus
        continue;
      }
      TypeAsk& ask = asks_.at(type);
      ask.outstanding -= 1;
      Container container;
      container.id = yarn.id.ToString();
      container.job_type = ask.job_type;
      container.host = yarn.node_host;
      container.resources = ask.resources;
      // Where people find the logs: the NodeManager's page for the container. The container
      // itself learns its log directory from YARN (LOG_DIRS).
      container.log_dir =
          StrCat(options_.web_https ? "https://" : "http://", yarn.node_http_address,
                 "/node/containerlogs/", container.id, "/", options_.user);
      granted_[container.id] = yarn;
      granted.push_back(container);
    }
  }
  for (Container& container : granted) callbacks_.on_allocated(std::move(container));
  std::vector<std::string> warned;
  {
    MutexLock lock(mu_);
    for (const hadoop::ContainerId& id : result.to_be_preempted) {
      const std::string name = id.ToString();
      // The RM repeats its message with every heartbeat until it takes the container.
      if (granted_.count(name) && preemption_warned_.insert(name).second) warned.push_back(name);
    }
  }
  {
    MutexLock lock(mu_);
    // The scheduler forgets a request it gave up on (its placement processor, after its
    // retries): it goes again with the next heartbeat, the wait bounded by the allocation timeout.
    for (const auto& [priority, reason] : result.rejected) {
      for (auto& [name, ask] : asks_) {
        if (ask.priority != priority || !ask.placement.has_value()) continue;
        ask.changed = ask.outstanding > 0;
        if (rejection_warned_.insert(priority).second) {
          spdlog::warn(
              "the scheduler could not place the {} containers under their placement "
              "constraint ({}); asking again",
              ask.job_type, reason);
        }
      }
    }
  }
  for (std::string& id : warned) {
    spdlog::warn("the ResourceManager will preempt {}", id);
    if (callbacks_.on_preemption) callbacks_.on_preemption(std::move(id));
  }
  for (const hadoop::ContainerStatus& status : result.completed) {
    {
      MutexLock lock(mu_);
      const std::string id = status.id.ToString();
      launched_.erase(id);
      granted_.erase(id);
      for (auto it = launches_.begin(); it != launches_.end();) {
        it = it->container_id == id ? launches_.erase(it) : std::next(it);
      }
      if (failed_starts_.erase(id) > 0) continue;  // its end was reported with the failure
    }
    callbacks_.on_completed(ToContainerExit(status));
  }
  if (result.command == hadoop::AmCommand::kResync) {
    // AmRmClient registered again and repeated the heartbeat, which got AM_RESYNC again.
    spdlog::warn("the ResourceManager still asks the AM to register again; next heartbeat");
  } else if (result.command == hadoop::AmCommand::kShutdown) {
    EndedByRm("the ResourceManager ended this application attempt (AM_SHUTDOWN)");
  }
}

void YarnContainerAllocator::Refused() {
  if (!callbacks_.on_refused || refused_.exchange(true)) return;
  callbacks_.on_refused(
      "the ResourceManager takes no placement constraints: its "
      "yarn.resourcemanager.placement-constraints.handler must be scheduler (with the "
      "CapacityScheduler) or placement-processor");
}

void YarnContainerAllocator::EndedByRm(const std::string& reason) {
  {
    MutexLock lock(mu_);
    if (ended_by_rm_) return;
    ended_by_rm_ = true;
  }
  spdlog::error("{}", reason);
  if (callbacks_.on_ended_by_cluster) callbacks_.on_ended_by_cluster(reason);
}

void YarnContainerAllocator::WaitForHeartbeat(int64_t interval_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(interval_ms);
  MutexLock lock(mu_);
  while (true) {
    if (stopping_ || finished_ || !releases_.empty() || hurry_) return;
    for (const auto& [type, ask] : asks_) {
      if (ask.changed) return;
    }
    if (!wake_.WaitUntil(mu_, deadline)) return;
  }
}

void YarnContainerAllocator::Stop(const std::string& container_id, int64_t grace_ms) {
  MutexLock lock(mu_);
  auto it = granted_.find(container_id);
  if (it == granted_.end()) return;
  // A start still queued is not made: the container goes back unlaunched.
  if (std::erase_if(launches_,
                    [&](const PendingLaunch& p) { return p.container_id == container_id; }) > 0) {
    launched_.erase(container_id);
  }
  if (!launched_.count(container_id)) {
    releases_.push_back(it->second.id);
    granted_.erase(it);
    wake_.NotifyAll();
    return;
  }
  // The NodeManager's own stop is SIGTERM, then SIGKILL after only
  // yarn.nodemanager.sleep-delay-before-sigkill.ms. The AM tells the executor to stop in its
  // heartbeat reply, and the executor gives the user process its grace; the NodeManager is asked
  // only a few seconds past that, for an executor that did not stop.
  stop_at_.emplace(container_id, SteadyNowMs() + grace_ms + 3000);
  wake_.NotifyAll();
}

void YarnContainerAllocator::StopOverdueContainers() {
  std::vector<hadoop::Container> overdue;
  {
    MutexLock lock(mu_);
    const int64_t now = SteadyNowMs();
    for (auto it = stop_at_.begin(); it != stop_at_.end();) {
      auto granted = granted_.find(it->first);
      if (granted == granted_.end()) {
        it = stop_at_.erase(it);  // it ended by itself
      } else if (now >= it->second) {
        overdue.push_back(granted->second);
        it = stop_at_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const hadoop::Container& container : overdue) {
    if (absl::Status stopped = nm_.StopContainer(container); !stopped.ok()) {
      spdlog::warn("stopping {}: {}", container.id.ToString(), ToStd(stopped.message()));
    }
  }
}

void YarnContainerAllocator::ExpectCompletion(const std::string& container_id) {
  {
    MutexLock lock(mu_);
    if (granted_.count(container_id)) {
      expected_.insert(container_id);
      hurry_ = true;  // end the current (possibly slow) wait now
    }
  }
  wake_.NotifyAll();
}

void YarnContainerAllocator::Release(const std::string& container_id) {
  MutexLock lock(mu_);
  auto it = granted_.find(container_id);
  if (it == granted_.end() || launched_.count(container_id)) return;
  releases_.push_back(it->second.id);
  granted_.erase(it);
  wake_.NotifyAll();
}

absl::Status YarnContainerAllocator::Finish(FinalStatus final_status,
                                            const std::string& diagnostics,
                                            const std::string& status_json) {
  {
    MutexLock lock(mu_);
    finished_ = true;
  }
  wake_.NotifyAll();
  if (heartbeat_.joinable()) heartbeat_.join();
  {
    MutexLock lock(mu_);
    // The RM no longer knows the attempt: nothing to unregister, and nothing lost by that.
    if (ended_by_rm_) return absl::OkStatus();
  }
  const hadoop::FinalApplicationStatus status =
      final_status == FinalStatus::kSucceeded ? hadoop::FinalApplicationStatus::kSucceeded
      : final_status == FinalStatus::kKilled  ? hadoop::FinalApplicationStatus::kKilled
                                              : hadoop::FinalApplicationStatus::kFailed;
  for (int attempt = 0; attempt < 50; ++attempt) {
    absl::StatusOr<bool> done = am_rm_->Finish(status, diagnostics, options_.final_tracking_url);
    if (!done.ok()) {
      spdlog::error("unregistering from {}: {}", am_rm_->peer(), ToStd(done.status().message()));
      return absl::UnavailableError(
          StrCat("unregistering from ", am_rm_->peer(), ": ", ToStd(done.status().message())));
    }
    if (*done) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the RM is saving the state
  }
  return absl::DeadlineExceededError(
      StrCat("the ResourceManager ", am_rm_->peer(), " did not confirm the unregistration"));
}

std::vector<Container> YarnContainerAllocator::PreviousContainers() const {
  MutexLock lock(mu_);
  return previous_;
}

int YarnContainerAllocator::RunningContainers() const {
  MutexLock lock(mu_);
  return static_cast<int>(launched_.size());
}

void YarnContainerAllocator::OnFreshTokens(const std::vector<hadoop::Token>& tokens) {
  hadoop::Credentials credentials;
  std::vector<hadoop::Token> hdfs;
  std::vector<hadoop::Token> kms;
  for (const hadoop::Token& token : tokens) {
    (token.kind == hadoop::kKmsDelegationTokenKind ? kms : hdfs).push_back(token);
  }
  {
    MutexLock lock(mu_);
    hdfs_tokens_ = hdfs;
    kms_tokens_ = kms;
  }
  // fs.defaultFS's comes first (TokenRefreshOptions::namenodes).
  hdfs_.SetDelegationToken(tokens.front());
  namenodes_.SetTokens(hdfs);
  for (const hadoop::Token& token : tokens) credentials.AddToken(token.service, token);
  if (callbacks_.on_task_tokens) {
    callbacks_.on_task_tokens(credentials.Serialize(hadoop::Credentials::Format::kWritable));
  }
}

void YarnContainerAllocator::Shutdown() {
  if (refresher_ != nullptr) refresher_->Stop();
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  launch_wake_.NotifyAll();
  if (heartbeat_.joinable()) heartbeat_.join();
  for (std::thread& launcher : launchers_) {
    if (launcher.joinable()) launcher.join();
  }
}

}  // namespace tony::cluster
