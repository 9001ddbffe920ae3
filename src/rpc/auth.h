#pragma once
// Who may call the AM, and how callers reach it.
//
// Every call carries one credential in the "x-tony-auth" metadata entry: the job's ("job
// <secret>"), held by the client, or a task's ("task <type> <index> <container> <credential>"),
// held by that task's executor. With TLS (the default) the AM checks it in an
// AuthMetadataProcessor, on the call's headers, before any of its message is read; a call without
// a valid credential is refused UNAUTHENTICATED and costs the AM nothing more. The handler then
// takes the caller's Principal from the call's metadata (CallPrincipal) and checks that the call
// is about what the principal covers (AmService: PERMISSION_DENIED otherwise).
//
// Threads: any.

#include <memory>
#include <string>
#include <string_view>

#include "rpc/job_credentials.h"

namespace grpc {
class Channel;
class ClientContext;
class ServerContextBase;
class ServerCredentials;
}  // namespace grpc

namespace tony::rpc {

inline constexpr char kAuthMetadataKey[] = "x-tony-auth";

// The largest message the AM accepts: its requests are small (a task's diagnostics are capped
// at kMaxDiagnosticsBytes); anything larger is refused before it is buffered whole.
inline constexpr int kAmMaxReceiveBytes = 256 * 1024;
inline constexpr size_t kMaxDiagnosticsBytes = size_t{64} * 1024;
inline constexpr size_t kMaxOutputTailBytes = size_t{16} * 1024;

struct Principal {
  enum class Kind { kNone, kJob, kTask };
  Kind kind = Kind::kNone;
  // For a task: the one its credential covers.
  std::string type;
  int index = 0;
  std::string container_id;

  bool IsJob() const { return kind == Kind::kJob; }
  // A task principal for exactly this task (and, unless empty, this container).
  bool IsTask(std::string_view task_type, int task_index, std::string_view container) const;
  std::string ToString() const;  // "the job", "worker:1 in container_...", "nobody"
};

// The metadata values callers send.
std::string JobAuthValue(std::string_view secret);
std::string TaskAuthValue(std::string_view type, int index, std::string_view container_id,
                          std::string_view credential);

// Checks a metadata value against the job's secret (constant time); kNone if it proves nothing.
Principal Authenticate(std::string_view value, std::string_view secret);

// The largest TLS record either end of the control plane writes (GRPC_ARG_TSI_MAX_FRAME_SIZE, a
// channel argument of the server and of AmChannel). gRPC's default, 16 KB, keeps buffers of that
// size for every connection; tony's calls are mostly a few hundred bytes. At 4,096 tasks this
// takes the AM's peak from 125-133 MB to 116-119 MB with 256 connections, and by 70 MB with one
// connection per task (bench/am_scale.py), with no measurable cost to its calls; a larger message
// (the cluster spec) is written as several records. It is each writer's own: it needs no peer's
// agreement.
inline constexpr int kTlsMaxFrameBytes = 4096;

// The AM's server credentials: TLS with the job's certificate and the authenticating processor,
// or, with TLS off, plaintext (calls are then authenticated in the handler, after their message
// was read).
std::shared_ptr<grpc::ServerCredentials> AmServerCredentials(const JobCredentials& credentials);

// The caller of a call that reached a handler.
Principal CallPrincipal(const grpc::ServerContextBase* context, std::string_view secret);

// A channel to the AM at `address` ("host:port"): TLS trusting only `am_cert_pem`, for the name
// kAmTlsName; plaintext if it is empty.
std::shared_ptr<grpc::Channel> AmChannel(const std::string& address,
                                         const std::string& am_cert_pem);

// Attaches a credential (JobAuthValue or TaskAuthValue) to a call.
void AttachAuth(grpc::ClientContext* context, const std::string& auth_value);

}  // namespace tony::rpc
