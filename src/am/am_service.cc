#include "am/am_service.h"

namespace tony::am {

AmService::AmService(std::string app_id, std::string secret, EventLoop* loop,
                     AmRequestHandler* handler)
    : app_id_(std::move(app_id)), secret_(std::move(secret)), loop_(loop), handler_(handler) {}

AmService::~AmService() { Shutdown(std::chrono::system_clock::now()); }

bool AmService::Start(grpc::ServerBuilder& builder) {
  using Async = rpc::TonyAm::AsyncService;
  using H = AmRequestHandler;
  // The calls, and who may make them. Static: a waiting call keeps a pointer to its kind.
  static const Kind<rpc::RegisterTaskRequest, rpc::RegisterTaskResponse> kRegisterTask{
      "RegisterTask", &Async::RequestRegisterTask, &H::RegisterTask, Caller::kTask, Wake::kNow};
  static const Kind<rpc::WaitClusterSpecRequest, rpc::WaitClusterSpecResponse> kWaitClusterSpec{
      "WaitClusterSpec", &Async::RequestWaitClusterSpec, &H::WaitClusterSpec, Caller::kTask,
      Wake::kNow};
  static const Kind<rpc::HeartbeatRequest, rpc::HeartbeatResponse> kHeartbeat{
      "Heartbeat", &Async::RequestHeartbeat, &H::Heartbeat, Caller::kTask, Wake::kAtNextTick};
  static const Kind<rpc::ReportResultRequest, rpc::ReportResultResponse> kReportResult{
      "ReportResult", &Async::RequestReportResult, &H::ReportResult, Caller::kTask, Wake::kNow};
  static const Kind<rpc::AppendOutputRequest, rpc::AppendOutputResponse> kAppendOutput{
      "AppendOutput", &Async::RequestAppendOutput, &H::AppendOutput, Caller::kTask, Wake::kNow};
  static const Kind<rpc::RegisterTensorBoardUrlRequest, rpc::RegisterTensorBoardUrlResponse>
      kRegisterTensorBoardUrl{"RegisterTensorBoardUrl", &Async::RequestRegisterTensorBoardUrl,
                              &H::RegisterTensorBoardUrl, Caller::kTask, Wake::kNow};
  static const Kind<rpc::PublishRendezvousRequest, rpc::PublishRendezvousResponse>
      kPublishRendezvous{"PublishRendezvous", &Async::RequestPublishRendezvous,
                         &H::PublishRendezvous, Caller::kTask, Wake::kNow};
  static const Kind<rpc::GetJobStatusRequest, rpc::JobStatus> kGetJobStatus{
      "GetJobStatus", &Async::RequestGetJobStatus, &H::GetJobStatus, Caller::kJob, Wake::kNow};
  static const Kind<rpc::WatchJobRequest, rpc::JobStatus> kWatchJob{
      "WatchJob", &Async::RequestWatchJob, &H::WatchJob, Caller::kJob, Wake::kNow};
  static const Kind<rpc::KillJobRequest, rpc::KillJobResponse> kKillJob{
      "KillJob", &Async::RequestKillJob, &H::KillJob, Caller::kJob, Wake::kNow};
  static const Kind<rpc::AcknowledgeFinalRequest, rpc::AcknowledgeFinalResponse> kAcknowledgeFinal{
      "AcknowledgeFinal", &Async::RequestAcknowledgeFinal, &H::AcknowledgeFinal, Caller::kJob,
      Wake::kNow};

  builder.RegisterService(&async_);
  queue_ = builder.AddCompletionQueue();
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) {
    queue_->Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (queue_->Next(&tag, &ok)) {
    }
    return false;
  }
  Arm(kRegisterTask);
  Arm(kWaitClusterSpec);
  Arm(kHeartbeat);
  Arm(kReportResult);
  Arm(kAppendOutput);
  Arm(kRegisterTensorBoardUrl);
  Arm(kPublishRendezvous);
  Arm(kGetJobStatus);
  Arm(kWatchJob);
  Arm(kKillJob);
  Arm(kAcknowledgeFinal);
  thread_ = std::thread([this] { Poll(); });
  return true;
}

void AmService::Poll() {
  void* tag = nullptr;
  bool ok = false;
  while (queue_->Next(&tag, &ok)) static_cast<Tag*>(tag)->Proceed(ok);
}

void AmService::Shutdown(std::chrono::system_clock::time_point deadline) {
  if (server_ == nullptr || shut_down_) return;
  shut_down_ = true;
  // Asked for no more, the waiting calls end with the server's shutdown; the queue's own shutdown
  // must come after it (gRPC's rule), and ends the thread once every call is freed. An answer
  // started after that would start on a shut-down queue: Call::Finish frees the call instead.
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  server_->Shutdown(deadline);
  {
    MutexLock lock(mu_);
    closed_ = true;
  }
  queue_->Shutdown();
  thread_.join();
}

}  // namespace tony::am
