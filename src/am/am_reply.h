#pragma once
// The answer to one call the AM serves, free of the transport: the handler fills response() and
// calls Send once, after its last use of the request and the response (sending may free them).
// A handler that must wait (the cluster spec, a job watch) keeps the Reply and sends later.
// A Reply dropped unsent answers INTERNAL rather than leave its caller waiting forever.
//
// Threads: the AM's loop; Send runs the transport's completion (gRPC's Finish: any thread).

#include <functional>
#include <utility>

#include "absl/status/status.h"

namespace tony::am {

template <typename Response>
class Reply {
 public:
  using Sender = std::function<void(const absl::Status&)>;

  Reply(Response* response, Sender send) : response_(response), send_(std::move(send)) {}
  Reply(Reply&& other) noexcept
      : response_(std::exchange(other.response_, nullptr)),
        send_(std::exchange(other.send_, nullptr)) {}
  Reply& operator=(Reply&& other) noexcept {
    if (this != &other) {
      Drop();
      response_ = std::exchange(other.response_, nullptr);
      send_ = std::exchange(other.send_, nullptr);
    }
    return *this;
  }
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  ~Reply() { Drop(); }

  Response* response() const { return response_; }

  // Answers the call: OK with response(), or `status` (its response is not sent).
  void Send(const absl::Status& status = absl::OkStatus()) && {
    Sender send = std::exchange(send_, nullptr);
    response_ = nullptr;
    if (send) send(status);
  }

 private:
  void Drop() {
    if (send_) std::move(*this).Send(absl::InternalError("the AM dropped the call unanswered"));
  }

  Response* response_;
  Sender send_;
};

}  // namespace tony::am
