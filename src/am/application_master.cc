#include "am/application_master.h"

#include <algorithm>

#include "am/am_process.h"
#include "am/c10d_store.h"
#include "common/net.h"
#include "common/resident_pages.h"
#include "common/strings.h"
#include "grpcpp/grpcpp.h"
#include "spdlog/spdlog.h"

namespace tony::am {
namespace {

// A decided job's state as the resource manager records it.
cluster::FinalStatus ToFinalStatus(JobState state) {
  switch (state) {
    case JobState::kSucceeded:
      return cluster::FinalStatus::kSucceeded;
    case JobState::kKilled:
      return cluster::FinalStatus::kKilled;
    case JobState::kRunning:
    case JobState::kFailed:
      break;
  }
  return cluster::FinalStatus::kFailed;
}

// How long the AM waits for the job's history to be written at the end (a stuck file system
// must not hold the job's final status).
constexpr int64_t kHistoryCloseTimeoutMs = 15000;

// Tick often enough for timely timeouts, never slower than a heartbeat interval.
int64_t TickIntervalMs(const config::JobSpec& spec) {
  return std::clamp<int64_t>(spec.heartbeat_interval_ms, 20, 200);
}

TaskLauncherOptions LauncherOptions(const AmOptions& am) {
  TaskLauncherOptions options;
  options.app_id = am.app_id;
  options.executable = am.executable;
  options.conf_file = am.conf_file;
  options.credentials = am.credentials;
  options.on_yarn = am.backend == "yarn";
  options.staging_dir = am.staging_dir;
  options.has_src = am.has_src;
  options.venv_source = am.venv_source;
  options.task_resources = am.task_resources;
  options.task_env = am.task_env;
  options.checkpoint_dir = am.checkpoint_dir;
  options.am_address_file = am.am_address_file;
  options.am_address_webhdfs = am.am_address_webhdfs;
  options.am_address_webhdfs_token = am.am_address_webhdfs_token;
  options.webhdfs_ca = am.webhdfs_ca;
  return options;
}

HistoryRecorderOptions HistoryOptions(const AmOptions& am) {
  HistoryRecorderOptions options;
  options.app_id = am.app_id;
  options.user = am.user;
  options.backend = am.backend;
  options.host = am.host;
  options.conf_file = am.conf_file;
  options.am_attempt = am.am_attempt;
  options.submitted_ms = am.submitted_ms;
  options.fs = am.history_fs;
  options.dirs = am.history_dirs;
  options.prompt_events = !am.am_address_file.empty();
  return options;
}

}  // namespace

ApplicationMaster::ApplicationMaster(AmOptions options, config::JobSpec spec,
                                     cluster::ContainerAllocator* allocator, const Clock* clock)
    : options_(std::move(options)),
      allocator_(allocator),
      clock_(clock),
      job_(std::move(spec), clock),
      history_(HistoryOptions(options_), &job_.spec(), clock),
      status_(options_.app_id, &job_, &history_.live(), clock),
      rendezvous_(&job_.spec(),
                  [this](RendezvousHost::Kind kind) -> std::unique_ptr<RendezvousStore> {
                    if (kind == RendezvousHost::Kind::kC10d) {
                      // Each agent holds two connections; a replacement's may overlap its
                      // predecessor's; and some for tools.
                      return std::make_unique<C10dStore>(
                          4 * static_cast<size_t>(job_.spec().TotalTasks()) + 64);
                    }
                    return std::make_unique<GlooRendezvous>();
                  }),
      launcher_(LauncherOptions(options_), &job_.spec()),
      barrier_(&job_, &rendezvous_),
      results_(&job_),
      watchers_(clock) {}

ApplicationMaster::~ApplicationMaster() = default;

void ApplicationMaster::StopServer() {
  // Every stored call must be answered before the server can shut down; the watchers hear the
  // final status once the finisher recorded it.
  barrier_.CancelAll();
  results_.AnswerAll();
  if (finisher_.joinable()) finisher_.join();
  AnswerWatchers(/*all=*/true);
  service_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

int ApplicationMaster::Run() {
  RaiseOpenFileLimitForTasks(options_.app_id, job_.spec().TotalTasks());
  const std::string bind = HostForAddress(options_.bind_host);
  if (!StartServer(bind)) {
    spdlog::error("[{}] cannot start the control-plane server on {}", options_.app_id, bind);
    return 1;
  }
  if (!options_.credentials.tls()) {
    spdlog::warn("[{}] TLS is off (tony.am.tls.enabled=false): the control plane is plaintext",
                 options_.app_id);
  }
  spdlog::info("[{}] AM listening on {}:{} ({}), executors reach it at {}:{}", options_.app_id,
               bind, port_, options_.credentials.tls() ? "TLS" : "plaintext", options_.host, port_);
  launcher_.SetAmAddress(StrCat(options_.host, ":", port_));
  rendezvous_.Start(options_.bind_host, options_.host);
  if (!rendezvous_.error().empty()) {
    spdlog::error("[{}] {}", options_.app_id, rendezvous_.error());
  } else if (!rendezvous_.address().empty()) {
    spdlog::info("[{}] {} listening at {}", options_.app_id, rendezvous_.name(),
                 rendezvous_.address());
  }
  std::string tracking_url;
  StatusPageOptions page;
  page.bind_host = options_.bind_host;
  page.proxy_addresses = options_.proxy_addresses;
  page.proxy_base_url = options_.proxy_base_url;
  absl::StatusOr<int> http =
      options_.status_page
          ? status_page_.Start(page)
          : absl::StatusOr<int>(absl::UnavailableError("the web proxy is unknown"));
  if (http.ok()) {
    tracking_url = StrCat("http://", options_.host, ":", *http, "/");
    renderer_ = std::make_unique<PageRenderer>(
        [this](const rpc::JobStatus& status, const LiveHistory& live) {
          status_page_.Update(status, live);
        });
    // The snapshot is copied on the loop (the live history's samples too); only that.
    status_.SetRender([this](const rpc::JobStatus& status, const LiveHistory& live) {
      renderer_->Submit(status, live);
    });
    status_.MaybePublish();
    spdlog::info("[{}] status page {}", options_.app_id, tracking_url);
  } else {
    spdlog::warn("[{}] no status page: {}", options_.app_id, ToStd(http.status().message()));
  }
  if (!options_.am_address_file.empty() && options_.am_attempt > 1) {
    // Read before this attempt writes to the history.
    absl::StatusOr<std::vector<history::HistoryEvent>> events = history_.ReadEarlierEvents();
    if (events.ok()) {
      recovery_ = RecoverFromHistory(*events);
    } else {
      spdlog::warn(
          "[{}] cannot take up the tasks of the earlier attempt ({}): they are stopped "
          "and the job starts again",
          options_.app_id, ToStd(events.status().message()));
    }
  }
  {
    rpc::JobStatus status;
    status_.Fill(&status);
    history_.Open(tracking_url, status);
  }

  cluster::ContainerAllocator::Callbacks callbacks;
  callbacks.on_allocated = [this](cluster::Container container) {
    loop_.Post("container allocated",
               [this, c = std::move(container)] { OnContainerAllocated(c); });
  };
  callbacks.on_completed = [this](cluster::ContainerExit exit) {
    loop_.Post("container completed", [this, e = std::move(exit)] { OnContainerCompleted(e); });
  };
  callbacks.on_ended_by_cluster = [this](std::string reason) {
    loop_.Post("ended by the cluster",
               [this, r = std::move(reason)] { StopWithoutFinalStatus(r); });
  };
  callbacks.on_refused = [this](std::string reason) {
    loop_.Post("refused by the cluster", [this, r = std::move(reason)] {
      if (!job_started_) {
        refused_before_start_ = r;
      } else if (!job_.decided()) {
        Execute(job_.Fail(r));
      }
    });
  };
  callbacks.on_preemption = [this](std::string container_id) {
    loop_.Post("preemption notice", [this, id = std::move(container_id)] {
      spdlog::warn("[{}] the cluster will preempt {}: its task is stopped first", options_.app_id,
                   id);
      Execute(job_.OnPreemptionNotice(id));
    });
  };
  callbacks.on_task_tokens = [this](std::string credentials) {
    loop_.Post("fresh task tokens", [this, c = std::move(credentials)] {
      task_tokens_ = c;
      ++task_tokens_version_;
    });
  };
  if (absl::Status started =
          allocator_->Start(options_.host, port_, tracking_url, std::move(callbacks));
      !started.ok()) {
    spdlog::error("[{}] cannot start the container allocator: {}", options_.app_id,
                  ToStd(started.message()));
    // Calls that came meanwhile are answered (the AM is starting) before the server stops.
    loop_.Stop();
    loop_.RunPending();
    StopServer();
    return 1;
  }

  std::map<std::string, std::string> previous_containers;
  for (const cluster::Container& container : allocator_->PreviousContainers()) {
    launcher_.Add(container);
    rendezvous_.AllowHost(container.host);
    previous_containers[container.id] = container.log_dir;
  }
  loop_.Post("start", [this, previous_containers] {
    job_started_ = true;
    // Starting (loading tony, the configuration, the servers, the allocator) is done: its pages of
    // code need not stay resident, and count against the AM container's memory on YARN.
    const long released_kb = ReleaseCleanFilePages();
    spdlog::debug("[{}] let go of up to {} kB of code that starting touched", options_.app_id,
                  released_kb);
    if (!rendezvous_.error().empty() || !refused_before_start_.empty()) {
      job_.Start();
      Execute(
          job_.Fail(!refused_before_start_.empty() ? refused_before_start_ : rendezvous_.error()));
      return;
    }
    for (const auto& [name, type] : job_.spec().job_types) {
      cluster::ContainerRequest request{name, type.resources, type.node_label, type.placement};
      if (absl::Status fits = allocator_->CheckFits(request); !fits.ok()) {
        job_.Start();
        Execute(
            job_.Fail(StrCat("job type ", name, " can never be granted: ", ToStd(fits.message()))));
        return;
      }
    }
    StartJob(previous_containers);
  });
  loop_.Run(TickIntervalMs(job_.spec()), [this] { OnTick(); });
  loop_.RunPending();
  StopServer();
  if (renderer_) renderer_->Stop();
  status_page_.Stop();
  rendezvous_.Stop();
  allocator_->Shutdown();
  const EventLoop::Stall stall = loop_.LongestStall();
  spdlog::info("[{}] the loop's longest task took {} ms ({})", options_.app_id, stall.ms,
               stall.name.empty() ? "none" : stall.name);
  if (abandoned_) return 1;
  spdlog::info("[{}] AM exiting, job {}", options_.app_id, ToString(job_.state()));
  return job_.state() == JobState::kSucceeded ? 0 : 1;
}

bool ApplicationMaster::Finished() const { return !abandoned_ && status_.complete(); }

void ApplicationMaster::StartJob(const std::map<std::string, std::string>& previous_containers) {
  TONY_DCHECK_ON_LOOP(loop_);
  if (!recovery_) {
    // Nothing of an earlier attempt can be taken up: what of it still runs goes, and the job
    // starts once it has (no task may run twice at once).
    for (const auto& [id, log_dir] : previous_containers) {
      previous_to_end_.insert(id);
      allocator_->Stop(id, 0);
    }
    if (previous_to_end_.empty()) {
      Execute(job_.Start());
    } else {
      spdlog::info("[{}] the job starts again once the {} containers of earlier attempts ended",
                   options_.app_id, previous_to_end_.size());
    }
    return;
  }
  const Actions actions = job_.Recover(*recovery_, previous_containers);
  int adopted = 0;
  for (const TaskRecord& task : job_.tasks()) {
    if (IsTerminal(task.state) || !previous_containers.contains(task.container_id)) continue;
    ++adopted;
    history_.ResumeOutput(task.ref, task.attempt, task.container_id);
    spdlog::info("[{}] {} goes on in {} (attempt {}, {})", options_.app_id, task.ref.ToString(),
                 task.container_id, task.attempt, ToString(task.state));
  }
  spdlog::info(
      "[{}] took up the job from the history of {} earlier AM attempt{}: {} running "
      "task{} adopted, {} container{} of earlier attempts found",
      options_.app_id, recovery_->am_attempts, recovery_->am_attempts == 1 ? "" : "s", adopted,
      adopted == 1 ? "" : "s", previous_containers.size(),
      previous_containers.size() == 1 ? "" : "s");
  Execute(actions);
}

void ApplicationMaster::RequestKill(const std::string& reason) {
  loop_.Post("kill", [this, reason] { Execute(job_.Kill(reason)); });
}

void ApplicationMaster::Abandon(const std::string& reason) {
  loop_.Post("abandon", [this, reason] { StopWithoutFinalStatus(reason); });
}

void ApplicationMaster::Execute(const Actions& actions) {
  TONY_DCHECK_ON_LOOP(loop_);
  for (const Action& action : actions) {
    if (const auto* request = std::get_if<RequestContainer>(&action)) {
      const config::JobTypeSpec* type = job_.spec().Find(request->job_type);
      cluster::ContainerRequest ask{request->job_type, type->resources, type->node_label,
                                    type->placement};
      if (request->memory_mb > 0 && request->memory_mb != type->resources.memory_mb) {
        ask.resources.memory_mb = request->memory_mb;
        // A grown task (tony.<type>.memory-growth) asks for no more than the cluster grants:
        // an ask that can never be granted would wait forever (YARN refuses every heartbeat).
        if (absl::Status fits = allocator_->CheckFits(ask); !fits.ok()) {
          spdlog::warn("[{}] a {} container of {} MB can never be granted ({}); asking for {} MB",
                       options_.app_id, request->job_type, request->memory_mb,
                       ToStd(fits.message()), type->resources.memory_mb);
          ask.resources.memory_mb = type->resources.memory_mb;
        }
      }
      allocator_->Request(ask);
    } else if (const auto* launch = std::get_if<LaunchTask>(&action)) {
      Launch(launch->task);
    } else if (const auto* stop = std::get_if<StopContainer>(&action)) {
      allocator_->Stop(stop->container_id, job_.spec().stop_grace_ms);
    } else if (const auto* release = std::get_if<ReleaseContainer>(&action)) {
      allocator_->Release(release->container_id);
      launcher_.Forget(release->container_id);
    } else if (std::holds_alternative<SendClusterSpec>(action)) {
      // Answered below, once the whole batch is applied.
    } else if (std::holds_alternative<JobDecided>(action)) {
      decided_at_ms_ = clock_->NowMs();
      // At once: an AM attempt that takes the job up after this one must not run it on. After
      // what led to it, in the order it happened.
      RecordTaskChanges();
      history_.RecordDecision(job_.state(), job_.diagnostics());
      spdlog::info("[{}] job {}{}{}", options_.app_id, ToString(job_.state()),
                   job_.diagnostics().empty() ? "" : ": ", job_.diagnostics());
    }
  }
  RecordTaskChanges();
  barrier_.Answer();
  results_.Poll();
  AnswerWatchers(/*all=*/false);
}

void ApplicationMaster::StopWithoutFinalStatus(const std::string& reason) {
  TONY_DCHECK_ON_LOOP(loop_);
  // The cluster runs the job with another attempt, or ended it: what this AM would decide is not
  // the job's. It records no final status and no end of the history (the next attempt goes on
  // with it), and its clients find the current attempt through the cluster.
  spdlog::error("[{}] {}: this AM (attempt {}) stops without a final status", options_.app_id,
                reason, options_.am_attempt);
  abandoned_ = true;
  loop_.Stop();
}

void ApplicationMaster::RecordTaskChanges() {
  const std::vector<TaskEvent> notices = job_.TakeNotices();
  for (const TaskEvent& notice : notices) {
    if (notice.kind == "GANG_RESTART") {
      spdlog::warn("[{}] gang restart {}: {}", options_.app_id, job_.gang_restarts(),
                   notice.detail);
    }
  }
  history_.RecordChanges(job_.TakeTransitions(), notices);
}

void ApplicationMaster::Launch(const TaskRef& task) {
  const TaskRecord* record = job_.Find(task);
  const cluster::Container* container = launcher_.Find(record->container_id);
  if (container == nullptr) return;
  const cluster::LaunchSpec launch = launcher_.Build(task, record->attempt, *container);
  spdlog::info("[{}] launching {} in {} on {}", options_.app_id, task.ToString(), container->id,
               container->host);
  if (absl::Status launched = allocator_->Launch(*container, launch); !launched.ok()) {
    Execute(job_.OnContainerCompleted(container->id, cluster::kExitLaunchFailed,
                                      std::string(ToStd(launched.message())), true));
  }
}

void ApplicationMaster::OnContainerAllocated(const cluster::Container& container) {
  TONY_DCHECK_ON_LOOP(loop_);
  launcher_.Add(container);
  rendezvous_.AllowHost(container.host);
  Execute(job_.OnContainerAllocated(container.id, container.job_type, container.host,
                                    container.log_dir, container.resources.memory_mb));
}

void ApplicationMaster::OnContainerCompleted(const cluster::ContainerExit& exit) {
  TONY_DCHECK_ON_LOOP(loop_);
  if (!job_started_) {
    // An adopted container that ended before the job was taken up: after that.
    loop_.Post("container completed", [this, exit] { OnContainerCompleted(exit); });
    return;
  }
  if (previous_to_end_.erase(exit.container_id) > 0) {
    spdlog::info("[{}] container {} of an earlier attempt ended", options_.app_id,
                 exit.container_id);
    if (previous_to_end_.empty()) Execute(job_.Start());
    return;
  }
  spdlog::info("[{}] container {} completed: exit {}{}{}", options_.app_id, exit.container_id,
               exit.exit_code, exit.diagnostics.empty() ? "" : ": ", exit.diagnostics);
  Execute(job_.OnContainerCompleted(exit.container_id, exit.exit_code, exit.diagnostics,
                                    exit.cause == cluster::ContainerExit::Cause::kLaunchFailed));
  // The last container of a decided job has ended: nothing is left to wait for.
  if (job_.decided() && !finishing_ && allocator_->RunningContainers() == 0) Complete();
  // A waiter of a task whose container is gone will never be answered.
  barrier_.ContainerEnded(exit.container_id);
  results_.ContainerEnded(exit.container_id);
}

void ApplicationMaster::OnTick() {
  TONY_DCHECK_ON_LOOP(loop_);
  if (!previous_to_end_.empty()) return;  // the job has not started (StartJob)
  const int64_t stalls_before = job_.last_stall_ms();
  Execute(job_.OnTick());
  allocator_->SetProgress(job_.Progress());
  if (job_.last_stall_ms() != stalls_before && job_.last_stall_ms() > 0) {
    spdlog::warn(
        "the AM did not run for {} ms (stopped, starved or its clock jumped); the tasks' "
        "heartbeat deadlines start again",
        job_.last_stall_ms());
  }
  const int64_t now = clock_->NowMs();
  if (job_.decided() && !finishing_) {
    const int64_t give_up = job_.spec().stop_grace_ms + 5000;
    if (allocator_->RunningContainers() == 0 || now - *decided_at_ms_ > give_up) Complete();
  }
  if (abandoned_) return;
  if (status_.complete() && (acknowledged_ || now - *completed_at_ms_ > options_.wait_client_ms)) {
    loop_.Stop();
    return;
  }
  AnswerWatchers(/*all=*/false);
  status_.MaybePublish();
}

void ApplicationMaster::Complete() {
  if (finishing_) return;
  finishing_ = true;
  job_.FinishRemaining();
  RecordTaskChanges();
  history_.RecordJobEnd(job_.state(), job_.diagnostics());
  finisher_ = std::thread([this, state = ToFinalStatus(job_.state()),
                           diagnostics = job_.diagnostics(), json = status_.FinalJson(),
                           history_json = history_.writing() ? HistoryJobJson() : std::string()] {
    // The history first: once the final status is recorded, the AM's container may go.
    if (history_.writing()) {
      if (absl::StatusOr<std::string> closed = history_.Close(history_json, kHistoryCloseTimeoutMs);
          !closed.ok()) {
        spdlog::warn("[{}] {}", options_.app_id, ToStd(closed.status().message()));
      } else {
        spdlog::info("[{}] history written to {}", options_.app_id, *closed);
      }
    }
    absl::Status recorded = allocator_->Finish(state, diagnostics, json);
    loop_.Post("final status recorded", [this, recorded] { OnFinalStatusRecorded(recorded); });
  });
}

void ApplicationMaster::OnFinalStatusRecorded(const absl::Status& recorded) {
  TONY_DCHECK_ON_LOOP(loop_);
  if (abandoned_) return;  // not recorded: the status is not this attempt's to give
  completed_at_ms_ = clock_->NowMs();
  std::string unsaved;
  if (!recorded.ok()) {
    unsaved = std::string(ToStd(recorded.message()));
    spdlog::error("[{}] the final status {} could not be recorded: {}", options_.app_id,
                  ToString(job_.state()), unsaved);
  }
  status_.MarkComplete(std::move(unsaved));
  AnswerWatchers(/*all=*/false);
  status_.MaybePublish();
}

std::string ApplicationMaster::HistoryJobJson() const {
  rpc::JobStatus status;
  status_.Fill(&status);
  status.set_complete(finishing_);
  return history_.JobJson(status);
}

}  // namespace tony::am
