#pragma once
// For unit tests only: a scripted Hadoop RPC server behind the RpcConnection seam, so that the
// AM's protocol clients (AmRmClient, NmClient, the YARN allocator) run against answers a test
// chooses. Records every call with its serialized request.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "gtest/gtest.h"
#include "hadoop/ipc/rpc_codec.h"
#include "hadoop/yarn/am_rm_client.h"

namespace tony::hadoop {

// A server answering each method from a script: every call takes the next handler, and the last
// one stays for later calls. Records the calls and the tokens each connection was opened with.
// Calls may come from another thread (the allocator's heartbeat): read `calls` and `connects` only
// once that thread has stopped, or through CountCalls / WaitForCalls.
class FakeServer {
 public:
  using Handler = std::function<absl::StatusOr<std::string>(const std::string& request)>;

  struct Call {
    std::string method;
    std::string request;  // serialized
    int connection = 0;   // index into connects
  };

  void On(const std::string& method, Handler handler) {
    handlers_[method].push_back(std::move(handler));
  }
  template <typename Response>
  void Answer(const std::string& method, const Response& response) {
    On(method, [bytes = response.SerializeAsString()](const std::string&) { return bytes; });
  }
  void Fail(const std::string& method, const std::string& java_class, const std::string& message) {
    On(method, [=](const std::string&) -> absl::StatusOr<std::string> {
      return RemoteErrorStatus(RemoteError{java_class, message}, StrCat("fake.", method));
    });
  }

  RpcConnector Connector() {
    return [this](const HostPort& server,
                  const Token& token) -> absl::StatusOr<std::unique_ptr<RpcConnection>> {
      std::lock_guard lock(mu_);
      connects.emplace_back(server, token);
      return std::make_unique<Connection>(this, static_cast<int>(connects.size()) - 1);
    };
  }

  // The request of the i-th call of `method`, parsed.
  template <typename Request>
  Request RequestOf(const std::string& method, size_t i = 0) const {
    for (const Call& call : calls) {
      if (call.method != method) continue;
      if (i-- == 0) {
        Request request;
        EXPECT_TRUE(request.ParseFromString(call.request));
        return request;
      }
    }
    ADD_FAILURE() << "no such call of " << method;
    return {};
  }

  // How many calls of `method` came so far.
  size_t CountCalls(const std::string& method) {
    std::lock_guard lock(mu_);
    return CountLocked(method);
  }
  // Waits until at least `n` calls of `method` came, or `timeout_ms` passed; returns whether.
  bool WaitForCalls(const std::string& method, size_t n, int timeout_ms) {
    std::unique_lock lock(mu_);
    return called_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                            [&] { return CountLocked(method) >= n; });
  }

  std::vector<std::pair<HostPort, Token>> connects;
  std::vector<Call> calls;

 private:
  class Connection final : public RpcConnection {
   public:
    Connection(FakeServer* server, int index) : server_(server), index_(index) {}
    absl::Status Call(std::string_view method, const google::protobuf::MessageLite& request,
                      google::protobuf::MessageLite* response) override {
      return server_->Handle(std::string(method), request, response, index_);
    }

   private:
    FakeServer* server_;
    int index_;
  };

  absl::Status Handle(const std::string& method, const google::protobuf::MessageLite& request,
                      google::protobuf::MessageLite* response, int connection) {
    std::lock_guard lock(mu_);
    calls.push_back({method, request.SerializeAsString(), connection});
    called_.notify_all();
    std::deque<Handler>& queue = handlers_[method];
    if (queue.empty()) return absl::UnimplementedError(StrCat("fake: no handler for ", method));
    Handler handler = queue.front();
    if (queue.size() > 1) queue.pop_front();
    absl::StatusOr<std::string> bytes = handler(calls.back().request);
    if (!bytes.ok()) return bytes.status();
    if (!response->ParseFromString(*bytes)) return absl::DataLossError("fake: bad response");
    return absl::OkStatus();
  }

  size_t CountLocked(const std::string& method) const {
    size_t n = 0;
    for (const Call& call : calls) n += call.method == method;
    return n;
  }

  std::mutex mu_;
  std::condition_variable called_;
  std::map<std::string, std::deque<Handler>> handlers_;
};

}  // namespace tony::hadoop
