// The AM's gRPC server, and its answers to the calls of executors, clients and watchers
// (AmRequestHandler): each runs on the AM's loop and turns the call into the state machine's
// events and the parts' replies. Split from application_master.cc; the class is
// ApplicationMaster's (application_master.h).

#include "am/application_master.h"
#include "common/strings.h"
#include "grpcpp/grpcpp.h"
#include "rpc/auth.h"
#include "spdlog/spdlog.h"

namespace tony::am {
namespace {

TaskRef FromProto(const rpc::TaskRef& ref) { return TaskRef{ref.type(), ref.index()}; }

// The control plane's transport memory besides the tasks' share (see StartServer).
constexpr size_t kAmTransportBaseBytes = size_t{16} << 20;

}  // namespace

bool ApplicationMaster::StartServer(const std::string& bind) {
  service_ =
      std::make_unique<AmService>(options_.app_id, options_.credentials.secret, &loop_, this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(StrCat(bind, ":0"), rpc::AmServerCredentials(options_.credentials),
                           &port_);
  builder.SetMaxReceiveMessageSize(rpc::kAmMaxReceiveBytes);
  // What a connection may send before the AM reads it: the default window grows with the
  // measured bandwidth (to megabytes per stream), which lets unauthenticated senders park data
  // in the AM's memory while their calls are being refused. tony's calls are small.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 64 * 1024);
  builder.AddChannelArgument(GRPC_ARG_TSI_MAX_FRAME_SIZE, rpc::kTlsMaxFrameBytes);
  // What the transport may hold of messages not yet delivered, all connections together: without
  // it a caller with a credential makes the AM buffer a whole oversized message (64 MB, eight at
  // once) before the size limit refuses it. Over the quota gRPC resets streams (ENHANCE_YOUR_CALM)
  // instead of reading on. Every task may have one largest message in flight.
  grpc::ResourceQuota quota("tony-am");
  quota.Resize(kAmTransportBaseBytes +
               static_cast<size_t>(job_.spec().TotalTasks()) * rpc::kAmMaxReceiveBytes);
  builder.SetResourceQuota(quota);
  return service_->Start(builder) && port_ != 0;
}

void ApplicationMaster::RegisterTask(const rpc::RegisterTaskRequest& request,
                                     Reply<rpc::RegisterTaskResponse> reply) {
  TONY_DCHECK_ON_LOOP(loop_);
  if (!job_started_) {
    // A task of an earlier attempt found this one before it took the job up: it tries again.
    std::move(reply).Send(absl::UnavailableError("the AM is starting"));
    return;
  }
  const TaskRef task = FromProto(request.task());
  absl::StatusOr<Actions> actions =
      job_.OnTaskRegistered(task, request.container_id(), request.host(), request.port());
  if (!actions.ok()) {
    spdlog::warn("[{}] refused registration of {}: {}", options_.app_id, task.ToString(),
                 ToStd(actions.status().message()));
    std::move(reply).Send(actions.status());
    return;
  }
  spdlog::info("[{}] {} registered at {}:{}", options_.app_id, task.ToString(), request.host(),
               request.port());
  rendezvous_.AllowHost(request.host());
  Execute(*actions);
  std::move(reply).Send();  // last: it may free request and response
}

void ApplicationMaster::WaitClusterSpec(const rpc::WaitClusterSpecRequest& request,
                                        Reply<rpc::WaitClusterSpecResponse> reply) {
  TONY_DCHECK_ON_LOOP(loop_);
  if (!job_started_) {
    // A task of an earlier attempt found this one before it took the job up: it tries again.
    std::move(reply).Send(absl::UnavailableError("the AM is starting"));
    return;
  }
  barrier_.Wait(FromProto(request.task()), request.container_id(), std::move(reply));
}

void ApplicationMaster::Heartbeat(const rpc::HeartbeatRequest& request,
                                  Reply<rpc::HeartbeatResponse> reply) {
  TONY_DCHECK_ON_LOOP(loop_);
  if (!job_started_) {
    // A task of an earlier attempt found this one before it took the job up: it tries again.
    std::move(reply).Send(absl::UnavailableError("the AM is starting"));
    return;
  }
  rpc::HeartbeatResponse* response = reply.response();
  HeartbeatReport report;
  report.rss_bytes = request.rss_bytes();
  report.quiet_ms = request.quiet_ms();
  if (request.has_attempt()) report.attempt = request.attempt();
  if (request.progress().has_step()) {
    report.progress = {true,
                       request.progress().step(),
                       request.progress().total(),
                       {request.progress().metrics().begin(), request.progress().metrics().end()}};
  }
  const HeartbeatAnswer answer =
      job_.OnHeartbeat(FromProto(request.task()), request.container_id(), report);
  if (answer.dump_stacks && !answer.reason.empty()) {
    spdlog::warn("[{}] {}: asking {} for its stacks", options_.app_id, answer.reason,
                 FromProto(request.task()).ToString());
  }
  response->set_stop(answer.stop);
  response->set_dump_stacks(answer.dump_stacks);
  response->set_reason(answer.reason);
  RecordTaskChanges();
  if (const TaskRecord* record = job_.Find(FromProto(request.task()));
      record != nullptr && record->container_id == request.container_id()) {
    history_.RecordMetrics(request, request.has_attempt() ? request.attempt() : record->attempt);
  }
  // Fresh credentials go out with the reply to each executor that has older ones.
  if (request.tokens_version() < task_tokens_version_) {
    response->set_tokens(task_tokens_);
    response->set_tokens_version(task_tokens_version_);
  }
  std::move(reply).Send();
}

void ApplicationMaster::ReportResult(const rpc::ReportResultRequest& request,
                                     Reply<rpc::ReportResultResponse> reply) {
  TONY_DCHECK_ON_LOOP(loop_);
  if (!job_started_) {
    // A task of an earlier attempt found this one before it took the job up: it tries again.
    std::move(reply).Send(absl::UnavailableError("the AM is starting"));
    return;
  }
  const TaskRef task = FromProto(request.task());
  spdlog::info("[{}] {} exited with {}", options_.app_id, task.ToString(), request.exit_code());
  job_.OnMemorySample(task, request.container_id(), request.peak_rss_bytes());
  if (!request.output_tail().empty()) status_.SetOutputTail(task, request.output_tail());
  if (request.exit_code() == 0 && !request.model_params().empty()) {
    job_.SetModelParams(task, request.container_id(), request.attempt(), request.model_params());
  }
  Execute(job_.OnExecutorResult(task, request.container_id(), request.exit_code(),
                                request.diagnostics(), request.provisional(),
                                request.executor_stopping(), request.attempt()));
  // A copy: answering the call may free the request.
  const std::string container_id =  // NOLINT(performance-unnecessary-copy-initialization)
      request.container_id();
  // The container ends next, unless the task runs again in it (or may: its result waits).
  if (const TaskRecord* record = job_.Find(task);
      record == nullptr || record->container_id != container_id ||
      (record->state != TaskState::kAllocated && !record->pending_result.has_value())) {
    allocator_->ExpectCompletion(container_id);
  }
  results_.Answer(task, container_id, std::move(reply));  // last: it may free request and response
}

void ApplicationMaster::RegisterTensorBoardUrl(const rpc::RegisterTensorBoardUrlRequest& request,
                                               Reply<rpc::RegisterTensorBoardUrlResponse> reply) {
  TONY_DCHECK_ON_LOOP(loop_);
  if (status_.SetTensorBoardUrl(request.url())) {
    spdlog::info("[{}] TensorBoard of {}:{} at {}", options_.app_id, request.task().type(),
                 request.task().index(), request.url());
    AnswerWatchers(/*all=*/false);
    status_.MaybePublish();
  }
  std::move(reply).Send();
}

void ApplicationMaster::PublishRendezvous(const rpc::PublishRendezvousRequest& request,
                                          Reply<rpc::PublishRendezvousResponse> reply) {
  TONY_DCHECK_ON_LOOP(loop_);
  const TaskRef task = FromProto(request.task());
  if (absl::Status published =
          rendezvous_.Publish(task, job_.Find(task), request.container_id(), request.port());
      !published.ok()) {
    std::move(reply).Send(published);
    return;
  }
  spdlog::info("[{}] Horovod's rendezvous published by {} at {}", options_.app_id, task.ToString(),
               rendezvous_.address());
  barrier_.Answer();
  std::move(reply).Send();
}

void ApplicationMaster::KillJob(const rpc::KillJobRequest& request,
                                Reply<rpc::KillJobResponse> reply) {
  TONY_DCHECK_ON_LOOP(loop_);
  Execute(job_.Kill(request.reason().empty() ? "killed by the client" : request.reason()));
  std::move(reply).Send();  // last: it may free request and response
}

void ApplicationMaster::AcknowledgeFinal(const rpc::AcknowledgeFinalRequest&,
                                         Reply<rpc::AcknowledgeFinalResponse> reply) {
  TONY_DCHECK_ON_LOOP(loop_);
  // The client has the final status (it may have read the record before this AM's loop learnt
  // that it was written); once it is recorded, nothing keeps the AM any longer.
  acknowledged_ = true;
  std::move(reply).Send();
  if (status_.complete()) loop_.Stop();
}

void ApplicationMaster::GetJobStatus(const rpc::GetJobStatusRequest&, Reply<rpc::JobStatus> reply) {
  TONY_DCHECK_ON_LOOP(loop_);
  status_.Fill(reply.response());
  std::move(reply).Send();
}

void ApplicationMaster::WatchJob(const rpc::WatchJobRequest& request, Reply<rpc::JobStatus> reply) {
  TONY_DCHECK_ON_LOOP(loop_);
  watchers_.Add(request.after_version(), request.max_wait_ms(), std::move(reply));
  AnswerWatchers(/*all=*/false);
}

void ApplicationMaster::AnswerWatchers(bool all) {
  const auto fill = [this](rpc::JobStatus* status) { status_.Fill(status); };
  if (all) {
    watchers_.AnswerAll(fill);
  } else {
    watchers_.Poll(status_.Version(), status_.complete(), fill);
  }
}

void ApplicationMaster::AppendOutput(const rpc::AppendOutputRequest& request,
                                     Reply<rpc::AppendOutputResponse> reply) {
  TONY_DCHECK_ON_LOOP(loop_);
  if (!job_started_) {
    // A task of an earlier attempt found this one before it took the job up: it tries again.
    std::move(reply).Send(absl::UnavailableError("the AM is starting"));
    return;
  }
  const TaskRef task = FromProto(request.task());
  // Output of the current attempt, or of an earlier one still draining.
  // An attempt that ran again in its container shipped all it printed before it ended, so
  // output from a container that still runs the task is the current attempt's.
  std::optional<int> attempt;
  if (const TaskRecord* record = job_.Find(task); record != nullptr) {
    for (const AttemptRecord& earlier : record->previous_attempts) {
      if (earlier.container_id == request.container_id()) attempt = earlier.attempt;
    }
    if (record->container_id == request.container_id()) attempt = record->attempt;
  }
  if (attempt) {
    history_.AppendOutput(task, *attempt, request.container_id(), "stdout", request.stdout_offset(),
                          request.stdout_data());
    history_.AppendOutput(task, *attempt, request.container_id(), "stderr", request.stderr_offset(),
                          request.stderr_data());
  }
  std::move(reply).Send();
}

}  // namespace tony::am
