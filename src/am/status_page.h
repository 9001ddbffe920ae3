#pragma once
// The AM's status page: the job's tasks as an HTML table at "/" and as JSON at "/status.json",
// served over plain HTTP on a port of its own (port 0 picks one). It is the application's tracking
// URL on YARN, so the ResourceManager's "ApplicationMaster" link (through its web proxy) shows it;
// the local backend's client prints it too. Read-only: it shows what `tony submit` prints and no
// secret.
//
// Threads: Update from any thread (the AM's loop); requests are answered on libmicrohttpd's own
// thread from the last snapshot, so a slow browser never holds the AM.

#include <cstdint>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "rpc/tony.pb.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace tony::am {

// The HTML page for `status` (pure; every text from the job is escaped).
std::string RenderStatusHtml(const rpc::JobStatus& status);

class StatusPage {
 public:
  StatusPage() = default;
  ~StatusPage();
  StatusPage(const StatusPage&) = delete;
  StatusPage& operator=(const StatusPage&) = delete;

  // Listens on `host` (an IPv4 or IPv6 address, or a name that resolves to one; "0.0.0.0" for
  // every interface); returns the port.
  absl::StatusOr<int> Start(const std::string& host, int port = 0);
  void Update(const rpc::JobStatus& status);
  void Stop();

 private:
  struct Response {
    int code;
    std::string content_type;
    std::string body;
  };
  Response Answer(const std::string& method, const std::string& url);
  static int Handle(void* self, ::MHD_Connection* connection, const char* url, const char* method);

  MHD_Daemon* daemon_ = nullptr;
  std::mutex mu_;
  std::string html_;  // guarded by mu_
  std::string json_;  // guarded by mu_
};

}  // namespace tony::am
