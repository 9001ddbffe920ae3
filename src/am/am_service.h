#pragma once
// The AM's gRPC service. Handlers check that the caller may make the call (rpc/auth.h: the
// executor of a task only about that task, the job's client only the client's calls) and post
// the request into the AM's event loop, where an AmRequestHandler answers it; a call that must
// wait (the cluster spec, a job watch) keeps only its Reply, no thread.
//
// Threads: gRPC's callback threads call the service; the handler runs on the AM's loop.

#include <functional>
#include <string>

#include "am/am_reply.h"
#include "common/event_loop.h"
#include "common/strings.h"
#include "rpc/auth.h"
#include "rpc/tony.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace tony::am {

// absl's and gRPC's codes are the same canonical codes, with the same numbers.
inline grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// Implemented by the ApplicationMaster. Every method runs on the AM's event loop and answers
// through its Reply (am_reply.h), at once or later; none sees the transport.
class AmRequestHandler {
 public:
  virtual ~AmRequestHandler() = default;
  virtual void RegisterTask(const rpc::RegisterTaskRequest& request,
                            Reply<rpc::RegisterTaskResponse> reply) = 0;
  virtual void WaitClusterSpec(const rpc::WaitClusterSpecRequest& request,
                               Reply<rpc::WaitClusterSpecResponse> reply) = 0;
  virtual void Heartbeat(const rpc::HeartbeatRequest& request,
                         Reply<rpc::HeartbeatResponse> reply) = 0;
  virtual void ReportResult(const rpc::ReportResultRequest& request,
                            Reply<rpc::ReportResultResponse> reply) = 0;
  virtual void AppendOutput(const rpc::AppendOutputRequest& request,
                            Reply<rpc::AppendOutputResponse> reply) = 0;
  virtual void RegisterTensorBoardUrl(const rpc::RegisterTensorBoardUrlRequest& request,
                                      Reply<rpc::RegisterTensorBoardUrlResponse> reply) = 0;
  virtual void PublishRendezvous(const rpc::PublishRendezvousRequest& request,
                                 Reply<rpc::PublishRendezvousResponse> reply) = 0;
  virtual void GetJobStatus(const rpc::GetJobStatusRequest& request,
                            Reply<rpc::JobStatus> reply) = 0;
  virtual void WatchJob(const rpc::WatchJobRequest& request, Reply<rpc::JobStatus> reply) = 0;
  virtual void KillJob(const rpc::KillJobRequest& request, Reply<rpc::KillJobResponse> reply) = 0;
  virtual void AcknowledgeFinal(const rpc::AcknowledgeFinalRequest& request,
                                Reply<rpc::AcknowledgeFinalResponse> reply) = 0;
};

class AmService final : public rpc::TonyAm::CallbackService {
 public:
  AmService(std::string app_id, std::string secret, EventLoop* loop, AmRequestHandler* handler)
      : app_id_(std::move(app_id)), secret_(std::move(secret)), loop_(loop), handler_(handler) {}

  grpc::ServerUnaryReactor* RegisterTask(grpc::CallbackServerContext* context,
                                         const rpc::RegisterTaskRequest* request,
                                         rpc::RegisterTaskResponse* response) override {
    return DispatchTaskCall(context, "RegisterTask", request, response,
                            &AmRequestHandler::RegisterTask);
  }
  grpc::ServerUnaryReactor* WaitClusterSpec(grpc::CallbackServerContext* context,
                                            const rpc::WaitClusterSpecRequest* request,
                                            rpc::WaitClusterSpecResponse* response) override {
    return DispatchTaskCall(context, "WaitClusterSpec", request, response,
                            &AmRequestHandler::WaitClusterSpec);
  }
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* context,
                                      const rpc::HeartbeatRequest* request,
                                      rpc::HeartbeatResponse* response) override {
    return DispatchTaskCall(context, "Heartbeat", request, response, &AmRequestHandler::Heartbeat,
                            Wake::kAtNextTick);
  }
  grpc::ServerUnaryReactor* ReportResult(grpc::CallbackServerContext* context,
                                         const rpc::ReportResultRequest* request,
                                         rpc::ReportResultResponse* response) override {
    return DispatchTaskCall(context, "ReportResult", request, response,
                            &AmRequestHandler::ReportResult);
  }
  grpc::ServerUnaryReactor* AppendOutput(grpc::CallbackServerContext* context,
                                         const rpc::AppendOutputRequest* request,
                                         rpc::AppendOutputResponse* response) override {
    return DispatchTaskCall(context, "AppendOutput", request, response,
                            &AmRequestHandler::AppendOutput);
  }
  grpc::ServerUnaryReactor* RegisterTensorBoardUrl(
      grpc::CallbackServerContext* context, const rpc::RegisterTensorBoardUrlRequest* request,
      rpc::RegisterTensorBoardUrlResponse* response) override {
    return DispatchTaskCall(context, "RegisterTensorBoardUrl", request, response,
                            &AmRequestHandler::RegisterTensorBoardUrl);
  }
  grpc::ServerUnaryReactor* PublishRendezvous(grpc::CallbackServerContext* context,
                                              const rpc::PublishRendezvousRequest* request,
                                              rpc::PublishRendezvousResponse* response) override {
    return DispatchTaskCall(context, "PublishRendezvous", request, response,
                            &AmRequestHandler::PublishRendezvous);
  }
  grpc::ServerUnaryReactor* GetJobStatus(grpc::CallbackServerContext* context,
                                         const rpc::GetJobStatusRequest* request,
                                         rpc::JobStatus* response) override {
    return DispatchJobCall(context, "GetJobStatus", request, response,
                           &AmRequestHandler::GetJobStatus);
  }
  grpc::ServerUnaryReactor* WatchJob(grpc::CallbackServerContext* context,
                                     const rpc::WatchJobRequest* request,
                                     rpc::JobStatus* response) override {
    return DispatchJobCall(context, "WatchJob", request, response, &AmRequestHandler::WatchJob);
  }
  grpc::ServerUnaryReactor* KillJob(grpc::CallbackServerContext* context,
                                    const rpc::KillJobRequest* request,
                                    rpc::KillJobResponse* response) override {
    return DispatchJobCall(context, "KillJob", request, response, &AmRequestHandler::KillJob);
  }
  grpc::ServerUnaryReactor* AcknowledgeFinal(grpc::CallbackServerContext* context,
                                             const rpc::AcknowledgeFinalRequest* request,
                                             rpc::AcknowledgeFinalResponse* response) override {
    return DispatchJobCall(context, "AcknowledgeFinal", request, response,
                           &AmRequestHandler::AcknowledgeFinal);
  }

 private:
  template <typename Request, typename Response>
  using Method = void (AmRequestHandler::*)(const Request&, Reply<Response>);

  // When the loop takes a call up: at once, or at its next wake, at the latest its next tick
  // (which is at most the heartbeat interval). Heartbeats come from every executor at a steady
  // pace and none needs its answer sooner; queued so, thousands a second wake the loop a few
  // times a second instead of once each (a quarter of the AM's CPU at 4,096 tasks,
  // bench/README.md).
  enum class Wake { kNow, kAtNextTick };

  // An executor's call: only about the task (and container) its credential covers.
  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* DispatchTaskCall(grpc::CallbackServerContext* context, const char* name,
                                             const Request* request, Response* response,
                                             Method<Request, Response> method,
                                             Wake wake = Wake::kNow) {
    const rpc::Principal caller = rpc::CallPrincipal(context, secret_);
    const bool allowed =
        caller.IsTask(request->task().type(), request->task().index(), ContainerOf(*request));
    return Dispatch(context, caller, allowed, name, request, response, method, wake);
  }
  // A client's call: only with the job's credential.
  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* DispatchJobCall(grpc::CallbackServerContext* context, const char* name,
                                            const Request* request, Response* response,
                                            Method<Request, Response> method) {
    const rpc::Principal caller = rpc::CallPrincipal(context, secret_);
    return Dispatch(context, caller, caller.IsJob(), name, request, response, method, Wake::kNow);
  }

  template <typename Request>
  static std::string_view ContainerOf(const Request& request) {
    return request.container_id();
  }
  static std::string_view ContainerOf(const rpc::RegisterTensorBoardUrlRequest&) { return {}; }

  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* Dispatch(grpc::CallbackServerContext* context,
                                     const rpc::Principal& caller, bool allowed, const char* name,
                                     const Request* request, Response* response,
                                     Method<Request, Response> method, Wake wake);

  const std::string app_id_;
  const std::string secret_;
  EventLoop* const loop_;
  AmRequestHandler* const handler_;
};

template <typename Request, typename Response>
grpc::ServerUnaryReactor* AmService::Dispatch(grpc::CallbackServerContext* context,
                                              const rpc::Principal& caller, bool allowed,
                                              const char* name, const Request* request,
                                              Response* response, Method<Request, Response> method,
                                              Wake wake) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (caller.kind == rpc::Principal::Kind::kNone) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                                 "the call carries no valid credential of this job"));
    return reactor;
  }
  if (!allowed) {
    spdlog::warn("[{}] refused {} from {}: its credential does not cover it", app_id_, name,
                 caller.ToString());
    reactor->Finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                                 StrCat(caller.ToString(), " may not call ", name, " for this")));
    return reactor;
  }
  auto task = [this, request, response, reactor, method] {
    std::invoke(method, handler_, *request,
                Reply<Response>(response, [reactor](const absl::Status& status) {
                  reactor->Finish(ToGrpc(status));
                }));
  };
  const bool posted = wake == Wake::kAtNextTick ? loop_->PostUnhurried(name, std::move(task))
                                                : loop_->Post(name, std::move(task));
  if (!posted) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the AM is shutting down"));
  }
  return reactor;
}

}  // namespace tony::am
