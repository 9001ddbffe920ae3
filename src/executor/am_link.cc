#include "executor/am_link.h"

#include <chrono>

#include "common/clock.h"
#include "common/files.h"
#include "common/strings.h"
#include "rpc/auth.h"
#include "rpc/cluster_pack.h"
#include "spdlog/spdlog.h"

namespace tony::executor {

std::string GrpcError(const grpc::Status& status) {
  return StrCat(status.error_message(), " (gRPC code ", static_cast<int>(status.error_code()), ")");
}

AmLink::AmLink(AmLinkOptions options) : options_(std::move(options)), address_(options_.address) {
  stub_ = rpc::TonyAm::NewStub(rpc::AmChannel(address_, options_.cert_pem));
}

rpc::TaskRef AmLink::Task() const {
  rpc::TaskRef ref;
  ref.set_type(options_.task.type);
  ref.set_index(options_.task.index);
  return ref;
}

void AmLink::Prepare(grpc::ClientContext* context, int64_t timeout_ms) const {
  rpc::AttachAuth(context, options_.auth);
  if (timeout_ms > 0) {
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  }
}

bool AmLink::FollowNextAm() {
  if (options_.address_file.empty()) return false;
  absl::StatusOr<std::string> text =
      options_.read_address ? options_.read_address() : ReadFile(options_.address_file);
  if (!text.ok()) return false;  // the next attempt has not written it yet
  const std::string address(StripWhitespace(*text));
  if (address.empty() || address == address_) return false;
  spdlog::info("the AM's next attempt is at {}; the task goes on with it", address);
  address_ = address;
  stub_ = rpc::TonyAm::NewStub(rpc::AmChannel(address_, options_.cert_pem));
  return true;
}

absl::Status AmLink::Register(const std::string& host, int port, int64_t timeout_ms) {
  rpc::RegisterTaskRequest request;
  *request.mutable_task() = Task();
  request.set_container_id(options_.container_id);
  request.set_host(host);
  request.set_port(port);
  request.set_executor_pid(getpid());
  rpc::RegisterTaskResponse response;
  grpc::ClientContext context;
  Prepare(&context, timeout_ms);
  context.set_wait_for_ready(true);
  const grpc::Status status = stub_->RegisterTask(&context, request, &response);
  if (status.ok()) return absl::OkStatus();
  std::string why = StrCat("cannot register with the AM at ", address_, ": ", GrpcError(status));
  const bool no_answer = status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
  return no_answer ? absl::UnavailableError(why) : absl::FailedPreconditionError(why);
}

absl::StatusOr<rpc::WaitClusterSpecResponse> AmLink::WaitClusterSpec(int64_t timeout_ms) {
  rpc::WaitClusterSpecRequest request;
  *request.mutable_task() = Task();
  request.set_container_id(options_.container_id);
  rpc::WaitClusterSpecResponse response;
  grpc::ClientContext context;
  Prepare(&context, timeout_ms);
  {
    MutexLock lock(mu_);
    if (cancelled_) return absl::CancelledError("stopped before the cluster spec came");
    blocking_call_ = &context;
  }
  const grpc::Status status = stub_->WaitClusterSpec(&context, request, &response);
  bool cancelled = false;
  {
    MutexLock lock(mu_);
    blocking_call_ = nullptr;
    cancelled = cancelled_;
  }
  if (cancelled) return absl::CancelledError("stopped before the cluster spec came");
  if (status.ok()) {
    if (absl::Status unpacked = rpc::UnpackCluster(&response); !unpacked.ok()) {
      return absl::FailedPreconditionError(
          StrCat("the AM's cluster spec cannot be read: ", unpacked.message()));
    }
    return response;
  }
  std::string why = StrCat("no cluster spec from the AM: ", GrpcError(status));
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ? absl::UnavailableError(why)
                                                              : absl::FailedPreconditionError(why);
}

void AmLink::Cancel() {
  MutexLock lock(mu_);
  cancelled_ = true;
  if (blocking_call_ != nullptr) blocking_call_->TryCancel();
}

bool HeartbeatCall::done() const {
  MutexLock lock(mu_);
  return done_;
}

grpc::Status HeartbeatCall::status() const {
  MutexLock lock(mu_);
  return status_;
}

void HeartbeatCall::Abandon() {
  {
    MutexLock lock(mu_);  // waits for an on_done under way
    on_done_ = nullptr;
  }
  // Not under mu_: the cancellation may end the call, and run its callback, on this thread.
  context_.TryCancel();
}

bool HeartbeatCall::WaitFor(int64_t timeout_ms) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  MutexLock lock(mu_);
  while (!done_) {
    if (!ended_.WaitUntil(mu_, deadline)) return done_;
  }
  return true;
}

std::shared_ptr<HeartbeatCall> AmLink::StartHeartbeat(rpc::HeartbeatRequest request,
                                                      int64_t timeout_ms,
                                                      std::function<void()> on_done) {
  auto call = std::make_shared<HeartbeatCall>();
  call->request_ = std::move(request);
  {
    MutexLock lock(call->mu_);
    call->on_done_ = std::move(on_done);
  }
  Prepare(&call->context_, timeout_ms);
  // The callback holds the call (its context, request and response) until gRPC is done with it.
  stub_->async()->Heartbeat(&call->context_, &call->request_, &call->response_,
                            [call](grpc::Status status) {
                              MutexLock lock(call->mu_);
                              call->status_ = std::move(status);
                              call->done_ = true;
                              call->ended_.NotifyAll();
                              if (call->on_done_) call->on_done_();
                            });
  return call;
}

grpc::Status AmLink::ReportResult(const rpc::ReportResultRequest& request,
                                  rpc::ReportResultResponse* response, int64_t timeout_ms,
                                  const std::function<bool(int64_t)>& pause) {
  const Clock* clock = SystemClock::Get();
  int64_t give_up_ms = 0;  // set once the AM first did not answer
  while (true) {
    grpc::ClientContext context;
    Prepare(&context, timeout_ms);
    grpc::Status status = stub_->ReportResult(&context, request, response);
    // An AM that is gone may have a next attempt, which adopted the task and takes its result.
    const bool no_answer = status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                           status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
    if (status.ok() || !no_answer || !awaits_next_am()) return status;
    if (give_up_ms == 0) {
      give_up_ms = clock->NowMs() + options_.recovery_ms;
      spdlog::warn(
          "could not report the result to the AM ({}); waiting up to {} ms for its next attempt",
          GrpcError(status), options_.recovery_ms);
    }
    if (clock->NowMs() >= give_up_ms) return status;
    if (!FollowNextAm() && pause(1000)) return status;
  }
}

bool AmLink::AppendOutput(rpc::AppendOutputRequest request, int64_t timeout_ms) {
  *request.mutable_task() = Task();
  request.set_container_id(options_.container_id);
  rpc::AppendOutputResponse response;
  grpc::ClientContext context;
  Prepare(&context, timeout_ms);
  return stub_->AppendOutput(&context, request, &response).ok();
}

grpc::Status AmLink::RegisterTensorBoardUrl(const std::string& url, int64_t timeout_ms) {
  rpc::RegisterTensorBoardUrlRequest request;
  *request.mutable_task() = Task();
  request.set_url(url);
  rpc::RegisterTensorBoardUrlResponse response;
  grpc::ClientContext context;
  Prepare(&context, timeout_ms);
  return stub_->RegisterTensorBoardUrl(&context, request, &response);
}

grpc::Status AmLink::PublishRendezvous(int port, int64_t timeout_ms) {
  rpc::PublishRendezvousRequest request;
  *request.mutable_task() = Task();
  request.set_container_id(options_.container_id);
  request.set_port(port);
  rpc::PublishRendezvousResponse response;
  grpc::ClientContext context;
  Prepare(&context, timeout_ms);
  return stub_->PublishRendezvous(&context, request, &response);
}

}  // namespace tony::executor
