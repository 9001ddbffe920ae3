#pragma once
// The executor's connection to its AM: every call it makes, authenticated as its task. When a
// later AM attempt adopts the running tasks (tony.am.retry-count on a backend that keeps
// containers across attempts), the link follows it: each attempt writes its address to a file
// the link reads (FollowNextAm), and a result that finds no AM waits for the next one, for up to
// the recovery time.
//
// Threads: the executor's main thread, except Cancel (any thread: the signal thread's) and
// HeartbeatCall's methods (any thread).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "config/job_spec.h"
#include "grpcpp/grpcpp.h"
#include "rpc/tony.grpc.pb.h"

namespace tony::executor {

struct AmLinkOptions {
  std::string address;       // host:port of the AM that started the executor
  std::string address_file;  // where later attempts write theirs; "": none will
  // Reads address_file where it is not a local file (YARN: through WebHDFS); empty: it is.
  std::function<absl::StatusOr<std::string>()> read_address;
  std::string cert_pem;  // the AM's certificate to pin; "" when TLS is off
  std::string auth;      // the task's credential as calls carry it (rpc::TaskAuthValue)
  config::TaskRef task;
  std::string container_id;
  // How long a call that finds no AM waits for the next attempt (with address_file); 0: none.
  int64_t recovery_ms = 0;
};

// A heartbeat sent and not answered yet (AmLink::StartHeartbeat). The AM takes heartbeats up at
// its next tick (up to 200 ms later), and the executor watches its task meanwhile.
class HeartbeatCall {
 public:
  // Whether it has ended: answered, failed or cancelled.
  bool done() const;
  // Once done(): how it ended; and, when that is OK, the AM's answer.
  grpc::Status status() const;
  const rpc::HeartbeatResponse& response() const { return response_; }
  // Its answer no longer matters (the task has ended): cancels it, without waiting for it to end
  // (gRPC took 80 to 100 ms to end a cancelled call), and its `on_done` does not run from the
  // return on. What the call holds lives until gRPC is done with it.
  void Abandon();
  // Waits up to `timeout_ms` for it to end; whether it has.
  bool WaitFor(int64_t timeout_ms) const;

 private:
  friend class AmLink;
  grpc::ClientContext context_;
  rpc::HeartbeatRequest request_;
  rpc::HeartbeatResponse response_;
  mutable Mutex mu_;
  mutable CondVar ended_;
  bool done_ TONY_GUARDED_BY(mu_) = false;
  grpc::Status status_ TONY_GUARDED_BY(mu_);
  std::function<void()> on_done_ TONY_GUARDED_BY(mu_);
};

class AmLink {
 public:
  explicit AmLink(AmLinkOptions options);

  const std::string& address() const { return address_; }
  // Whether a later AM attempt may adopt the task.
  bool awaits_next_am() const { return !options_.address_file.empty() && options_.recovery_ms > 0; }
  // Connects to the AM the address file names, if it names another than the current one; returns
  // whether it did.
  bool FollowNextAm();

  // kUnavailable when no AM answered (it may be gone); another error when it refused.
  absl::Status Register(const std::string& host, int port, int64_t timeout_ms);
  // Waits for the cluster spec, at most `timeout_ms` when above 0. kUnavailable when no AM
  // answered, kCancelled once Cancel was called.
  absl::StatusOr<rpc::WaitClusterSpecResponse> WaitClusterSpec(int64_t timeout_ms);
  // The executor is stopping: ends a WaitClusterSpec in progress, and every later one at once.
  void Cancel();

  // Sends a heartbeat and returns without waiting for its answer; `on_done` runs on one of
  // gRPC's threads once the call has ended, unless it was abandoned first (it must not block).
  std::shared_ptr<HeartbeatCall> StartHeartbeat(rpc::HeartbeatRequest request, int64_t timeout_ms,
                                                std::function<void()> on_done);
  // Reports the task's end. When no AM answers and a next attempt may come, follows it and tries
  // again, for up to the recovery time; `pause(ms)` waits between tries and returns true when the
  // executor was stopped meanwhile, which ends the tries.
  grpc::Status ReportResult(const rpc::ReportResultRequest& request,
                            rpc::ReportResultResponse* response, int64_t timeout_ms,
                            const std::function<bool(int64_t)>& pause);
  bool AppendOutput(rpc::AppendOutputRequest request, int64_t timeout_ms);
  grpc::Status RegisterTensorBoardUrl(const std::string& url, int64_t timeout_ms);
  grpc::Status PublishRendezvous(int port, int64_t timeout_ms);

 private:
  void Prepare(grpc::ClientContext* context, int64_t timeout_ms) const;
  rpc::TaskRef Task() const;

  const AmLinkOptions options_;
  std::string address_;  // the AM the link talks to: the launch's, or a later attempt's
  std::unique_ptr<rpc::TonyAm::Stub> stub_;
  Mutex mu_;
  bool cancelled_ TONY_GUARDED_BY(mu_) = false;
  grpc::ClientContext* blocking_call_ TONY_GUARDED_BY(mu_) = nullptr;
};

// "<message> (gRPC code <n>)".
std::string GrpcError(const grpc::Status& status);

}  // namespace tony::executor
