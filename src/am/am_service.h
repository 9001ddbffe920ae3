#pragma once
// The AM's gRPC service. Handlers check the job's secret and post the request into the AM's
// event loop, where an AmRequestHandler answers it; a call that must wait (the cluster spec, a
// job watch) keeps only its reactor, no thread.
//
// Threads: gRPC's callback threads call the service; the handler runs on the AM's loop.

#include <string>

#include "common/event_loop.h"
#include "rpc/secret.h"
#include "rpc/tony.grpc.pb.h"

namespace tony::am {

// Implemented by the ApplicationMaster. Every method runs on the AM's event loop and must
// eventually call reactor->Finish exactly once, after its last use of the request and the
// response (Finish may free them).
class AmRequestHandler {
 public:
  virtual ~AmRequestHandler() = default;
  virtual void RegisterTask(const rpc::RegisterTaskRequest& request,
                            rpc::RegisterTaskResponse* response,
                            grpc::ServerUnaryReactor* reactor) = 0;
  virtual void WaitClusterSpec(const rpc::WaitClusterSpecRequest& request,
                               rpc::WaitClusterSpecResponse* response,
                               grpc::ServerUnaryReactor* reactor) = 0;
  virtual void Heartbeat(const rpc::HeartbeatRequest& request, rpc::HeartbeatResponse* response,
                         grpc::ServerUnaryReactor* reactor) = 0;
  virtual void ReportResult(const rpc::ReportResultRequest& request,
                            rpc::ReportResultResponse* response,
                            grpc::ServerUnaryReactor* reactor) = 0;
  virtual void RegisterTensorBoardUrl(const rpc::RegisterTensorBoardUrlRequest& request,
                                      rpc::RegisterTensorBoardUrlResponse* response,
                                      grpc::ServerUnaryReactor* reactor) = 0;
  virtual void GetJobStatus(const rpc::GetJobStatusRequest& request, rpc::JobStatus* response,
                            grpc::ServerUnaryReactor* reactor) = 0;
  virtual void WatchJob(const rpc::WatchJobRequest& request, rpc::JobStatus* response,
                        grpc::ServerUnaryReactor* reactor) = 0;
  virtual void KillJob(const rpc::KillJobRequest& request, rpc::KillJobResponse* response,
                       grpc::ServerUnaryReactor* reactor) = 0;
  virtual void AcknowledgeFinal(const rpc::AcknowledgeFinalRequest& request,
                                rpc::AcknowledgeFinalResponse* response,
                                grpc::ServerUnaryReactor* reactor) = 0;
};

class AmService final : public rpc::TonyAm::CallbackService {
 public:
  AmService(std::string secret, EventLoop* loop, AmRequestHandler* handler)
      : secret_(std::move(secret)), loop_(loop), handler_(handler) {}

  grpc::ServerUnaryReactor* RegisterTask(grpc::CallbackServerContext* context,
                                         const rpc::RegisterTaskRequest* request,
                                         rpc::RegisterTaskResponse* response) override {
    return Dispatch(context, "RegisterTask", request, response, &AmRequestHandler::RegisterTask);
  }
  grpc::ServerUnaryReactor* WaitClusterSpec(grpc::CallbackServerContext* context,
                                            const rpc::WaitClusterSpecRequest* request,
                                            rpc::WaitClusterSpecResponse* response) override {
    return Dispatch(context, "WaitClusterSpec", request, response,
                    &AmRequestHandler::WaitClusterSpec);
  }
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* context,
                                      const rpc::HeartbeatRequest* request,
                                      rpc::HeartbeatResponse* response) override {
    return Dispatch(context, "Heartbeat", request, response, &AmRequestHandler::Heartbeat);
  }
  grpc::ServerUnaryReactor* ReportResult(grpc::CallbackServerContext* context,
                                         const rpc::ReportResultRequest* request,
                                         rpc::ReportResultResponse* response) override {
    return Dispatch(context, "ReportResult", request, response, &AmRequestHandler::ReportResult);
  }
  grpc::ServerUnaryReactor* RegisterTensorBoardUrl(
      grpc::CallbackServerContext* context, const rpc::RegisterTensorBoardUrlRequest* request,
      rpc::RegisterTensorBoardUrlResponse* response) override {
    return Dispatch(context, "RegisterTensorBoardUrl", request, response,
                    &AmRequestHandler::RegisterTensorBoardUrl);
  }
  grpc::ServerUnaryReactor* GetJobStatus(grpc::CallbackServerContext* context,
                                         const rpc::GetJobStatusRequest* request,
                                         rpc::JobStatus* response) override {
    return Dispatch(context, "GetJobStatus", request, response, &AmRequestHandler::GetJobStatus);
  }
  grpc::ServerUnaryReactor* WatchJob(grpc::CallbackServerContext* context,
                                     const rpc::WatchJobRequest* request,
                                     rpc::JobStatus* response) override {
    return Dispatch(context, "WatchJob", request, response, &AmRequestHandler::WatchJob);
  }
  grpc::ServerUnaryReactor* KillJob(grpc::CallbackServerContext* context,
                                    const rpc::KillJobRequest* request,
                                    rpc::KillJobResponse* response) override {
    return Dispatch(context, "KillJob", request, response, &AmRequestHandler::KillJob);
  }
  grpc::ServerUnaryReactor* AcknowledgeFinal(grpc::CallbackServerContext* context,
                                             const rpc::AcknowledgeFinalRequest* request,
                                             rpc::AcknowledgeFinalResponse* response) override {
    return Dispatch(context, "AcknowledgeFinal", request, response,
                    &AmRequestHandler::AcknowledgeFinal);
  }

 private:
  template <typename Request, typename Response>
  using Method = void (AmRequestHandler::*)(const Request&, Response*, grpc::ServerUnaryReactor*);

  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* Dispatch(grpc::CallbackServerContext* context, const char* name,
                                     const Request* request, Response* response,
                                     Method<Request, Response> method);

  bool CallHasSecretOf(const grpc::CallbackServerContext* context) const;

  const std::string secret_;
  EventLoop* const loop_;
  AmRequestHandler* const handler_;
};

template <typename Request, typename Response>
grpc::ServerUnaryReactor* AmService::Dispatch(grpc::CallbackServerContext* context,
                                              const char* name, const Request* request,
                                              Response* response,
                                              Method<Request, Response> method) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!CallHasSecretOf(context)) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                                 "the call does not carry this job's secret"));
    return reactor;
  }
  const bool posted = loop_->Post(name, [this, request, response, reactor, method] {
    (handler_->*method)(*request, response, reactor);
  });
  if (!posted) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the AM is shutting down"));
  }
  return reactor;
}

inline bool AmService::CallHasSecretOf(const grpc::CallbackServerContext* context) const {
  return rpc::CallHasSecret(context, secret_);
}

}  // namespace tony::am
