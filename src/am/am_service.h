#pragma once
// The AM's gRPC service. It checks that the caller may make each call (rpc/auth.h: the executor
// of a task only about that task, the job's client only the client's calls) and posts the
// request into the AM's event loop, where an AmRequestHandler answers it; a call that must wait
// (the cluster spec, a job watch) keeps only its Reply, no thread.
//
// It serves on gRPC's asynchronous API, with one thread of its own that reads every connection
// and takes every call. gRPC's callback API would take them on two threads of gRPC's, which
// hand the connections' polling to each other for nearly every call: a futex wake and a context
// switch each time, a tenth of the AM's CPU when 4,096 executors heartbeat (bench/README.md).
//
// Threads: the service's thread takes the calls; handlers run on the AM's loop, and a Reply's
// Send there starts the answer's write; Start and Shutdown, the AM's main thread.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "am/am_reply.h"
#include "common/event_loop.h"
#include "common/mutex.h"
#include "common/strings.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
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

class AmService {
 public:
  AmService(std::string app_id, std::string secret, EventLoop* loop, AmRequestHandler* handler);
  ~AmService();  // Shutdown, at once, if the server still runs
  AmService(const AmService&) = delete;
  AmService& operator=(const AmService&) = delete;

  // Registers the service with `builder` (which has the listening port and limits), builds and
  // starts the server, and takes calls. False if the server did not start.
  bool Start(grpc::ServerBuilder& builder);
  // Refuses new calls, cancels those still open at `deadline`, and returns once the calls
  // answered by then are done and the thread has ended. A call whose Reply is still held is
  // freed, unanswered, when the Reply is sent or dropped. Once; later calls do nothing.
  void Shutdown(std::chrono::system_clock::time_point deadline);

 private:
  template <typename Request, typename Response>
  using Method = void (AmRequestHandler::*)(const Request&, Reply<Response>);

  // Who may make a call: the executor of the task it is about, or the job's client.
  enum class Caller { kTask, kJob };
  // When the loop takes a call up: at once, or at its next wake, at the latest just before its
  // next tick (the heartbeat interval, kept between 20 and 200 ms). Heartbeats come from every
  // executor at a steady pace and none needs its answer sooner; queued so, thousands a second wake
  // the loop a few times a second instead of once each (a quarter of the AM's CPU at 4,096 tasks,
  // bench/README.md).
  enum class Wake { kNow, kAtNextTick };

  // One of the service's methods, and how its calls are taken.
  template <typename Request, typename Response>
  struct Kind {
    using RequestFn = void (rpc::TonyAm::AsyncService::*)(
        grpc::ServerContext*, Request*, grpc::ServerAsyncResponseWriter<Response>*,
        grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*);
    const char* name;
    RequestFn request;
    Method<Request, Response> method;
    Caller caller;
    Wake wake;
  };

  // What the completion queue hands back: a call waiting to arrive, or one being answered.
  class Tag {
   public:
    virtual ~Tag() = default;
    virtual void Proceed(bool ok) = 0;
  };
  template <typename Request, typename Response>
  class Call;

  // Calls of each kind the server can take before the thread asks for more: a burst of
  // registrations waits in gRPC for the thread, not for a call to be asked for.
  static constexpr int kWaitingCalls = 32;

  template <typename Request, typename Response>
  void Arm(const Kind<Request, Response>& kind);
  void Poll();

  const std::string app_id_;
  const std::string secret_;
  EventLoop* const loop_;
  AmRequestHandler* const handler_;
  rpc::TonyAm::AsyncService async_;
  std::unique_ptr<grpc::ServerCompletionQueue> queue_;
  std::unique_ptr<grpc::Server> server_;
  Mutex mu_;  // orders the asking for calls and the starting of answers against Shutdown
  bool stopping_ TONY_GUARDED_BY(mu_) = false;  // no call is asked for any more
  bool closed_ TONY_GUARDED_BY(mu_) = false;    // the queue is shut down: nothing starts on it
  bool shut_down_ = false;
  std::thread thread_;
};

template <typename Request, typename Response>
class AmService::Call final : public Tag {
 public:
  Call(AmService* service, const Kind<Request, Response>* kind)
      : service_(service), kind_(kind), writer_(&context_) {}

  // Asks the server for the next call of this kind.
  void Arm() {
    (service_->async_.*(kind_->request))(&context_, &request_, &writer_, service_->queue_.get(),
                                         service_->queue_.get(), this);
  }

  // The call arrived (or, !ok, the server is shutting down), or its answer is done.
  void Proceed(bool ok) override {
    if (arrived_ || !ok) {
      delete this;
      return;
    }
    arrived_ = true;  // the next completion is the answer's
    {
      MutexLock lock(service_->mu_);
      if (!service_->stopping_) (new Call(service_, kind_))->Arm();
    }
    Take();
  }

 private:
  void Take();
  void Finish(const grpc::Status& status) {
    MutexLock lock(service_->mu_);
    if (service_->closed_) {  // the server is gone: there is no one to answer
      delete this;
      return;
    }
    if (status.ok()) {
      // Finish serializes the answer at once, and `this` may be freed as soon as it returns:
      // the message is moved out, so that its memory goes now, not when the answer is written
      // (4,096 copies of the cluster at a spec release).
      Response answer;
      answer.Swap(&response_);
      writer_.Finish(answer, status, this);
    } else {
      writer_.FinishWithError(status, this);
    }
  }

  AmService* const service_;
  const Kind<Request, Response>* const kind_;
  grpc::ServerContext context_;
  Request request_;
  Response response_;
  grpc::ServerAsyncResponseWriter<Response> writer_;
  bool arrived_ = false;
};

template <typename Request>
std::string_view ContainerOf(const Request& request) {
  return request.container_id();
}
inline std::string_view ContainerOf(const rpc::RegisterTensorBoardUrlRequest&) { return {}; }

template <typename Request, typename Response>
void AmService::Call<Request, Response>::Take() {
  const rpc::Principal caller = rpc::CallPrincipal(&context_, service_->secret_);
  if (caller.kind == rpc::Principal::Kind::kNone) {
    Finish(grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "the call carries no valid credential of this job"));
    return;
  }
  bool allowed = false;
  if (kind_->caller == Caller::kJob) {
    allowed = caller.IsJob();
  } else if constexpr (requires { request_.task(); }) {
    allowed = caller.IsTask(request_.task().type(), request_.task().index(), ContainerOf(request_));
  }
  if (!allowed) {
    spdlog::warn("[{}] refused {} from {}: its credential does not cover it", service_->app_id_,
                 kind_->name, caller.ToString());
    Finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        StrCat(caller.ToString(), " may not call ", kind_->name, " for this")));
    return;
  }
  // The call is not touched after its answer is started: the thread may free it at once.
  auto task = [this] {
    std::invoke(kind_->method, service_->handler_, request_,
                Reply<Response>(&response_,
                                [this](const absl::Status& status) { Finish(ToGrpc(status)); }));
  };
  EventLoop* loop = service_->loop_;
  const bool posted = kind_->wake == Wake::kAtNextTick
                          ? loop->PostUnhurried(kind_->name, std::move(task))
                          : loop->Post(kind_->name, std::move(task));
  if (!posted) Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the AM is shutting down"));
}

template <typename Request, typename Response>
void AmService::Arm(const Kind<Request, Response>& kind) {
  for (int i = 0; i < kWaitingCalls; ++i) (new Call<Request, Response>(this, &kind))->Arm();
}

}  // namespace tony::am
