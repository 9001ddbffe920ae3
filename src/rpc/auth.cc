#include "rpc/auth.h"

#include <charconv>
#include <optional>
#include <vector>

#include "common/strings.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/security/auth_metadata_processor.h"

namespace tony::rpc {
namespace {

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

// A task index: decimal digits only, at most a million.
std::optional<int> ParseIndex(std::string_view text) {
  int index = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (error != std::errc() || end != text.data() + text.size() || text.empty() || text[0] == '-' ||
      text[0] == '+' || index > 1'000'000) {
    return std::nullopt;
  }
  return index;
}

// Runs on gRPC's transport thread, on the headers of each call, before its message is read.
class AuthProcessor final : public grpc::AuthMetadataProcessor {
 public:
  explicit AuthProcessor(std::string secret) : secret_(std::move(secret)) {}

  bool IsBlocking() const override { return false; }

  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext*, OutputMetadata*,
                       OutputMetadata*) override {
    auto it = auth_metadata.find(kAuthMetadataKey);
    if (it == auth_metadata.end()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the call carries no credential");
    }
    const std::string_view value(it->second.data(), it->second.size());
    Principal principal = Authenticate(value, secret_);
    if (principal.kind == Principal::Kind::kNone) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "the call's credential is not valid for this job");
    }
    return grpc::Status::OK;
  }

 private:
  const std::string secret_;
};

}  // namespace

bool Principal::IsTask(std::string_view task_type, int task_index,
                       std::string_view container) const {
  return kind == Kind::kTask && type == task_type && index == task_index &&
         (container.empty() || container == container_id);
}

std::string Principal::ToString() const {
  switch (kind) {
    case Kind::kJob:
      return "the job's client";
    case Kind::kTask:
      return StrCat(type, ":", index, " in ", container_id);
    case Kind::kNone:
      break;
  }
  return "an unauthenticated caller";
}

std::string JobAuthValue(std::string_view secret) { return StrCat("job ", secret); }

std::string TaskAuthValue(std::string_view type, int index, std::string_view container_id,
                          std::string_view credential) {
  return StrCat("task ", type, " ", index, " ", container_id, " ", credential);
}

Principal Authenticate(std::string_view value, std::string_view secret) {
  Principal none;
  if (secret.empty()) return none;
  std::vector<std::string_view> words = Split(value, ' ');
  if (words.size() == 2 && words[0] == "job") {
    if (!ConstantTimeEqual(words[1], secret)) return none;
    Principal job;
    job.kind = Principal::Kind::kJob;
    return job;
  }
  if (words.size() != 5 || words[0] != "task" || words[1].empty() || words[3].empty()) {
    return none;
  }
  std::optional<int> index = ParseIndex(words[2]);
  if (!index) return none;
  const std::string expected = TaskCredential(secret, words[1], static_cast<int>(*index), words[3]);
  if (!ConstantTimeEqual(words[4], expected)) return none;
  Principal task;
  task.kind = Principal::Kind::kTask;
  task.type = std::string(words[1]);
  task.index = static_cast<int>(*index);
  task.container_id = std::string(words[3]);
  return task;
}

std::shared_ptr<grpc::ServerCredentials> AmServerCredentials(const JobCredentials& credentials) {
  // tony.am.tls.enabled=false, for debugging only: the AM warns, and the handler still checks
  // every call's credential (CallPrincipal).
  if (!credentials.tls()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({credentials.am_key_pem, credentials.am_cert_pem});
  std::shared_ptr<grpc::ServerCredentials> server = grpc::SslServerCredentials(options);
  server->SetAuthMetadataProcessor(std::make_shared<AuthProcessor>(credentials.secret));
  return server;
}

Principal CallPrincipal(const grpc::ServerContextBase* context, std::string_view secret) {
  // With TLS, the AuthProcessor has refused a call without a valid credential before its message
  // was read. The auth context is shared by every call on a connection, so the principal of this
  // call is taken from its own metadata, checked again (an HMAC: cheap).
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(kAuthMetadataKey);
  if (it == metadata.end()) return Principal{};
  return Authenticate(std::string_view(it->second.data(), it->second.size()), secret);
}

std::shared_ptr<grpc::Channel> AmChannel(const std::string& address,
                                         const std::string& am_cert_pem) {
  grpc::ChannelArguments args;
  // The job's status grows with its tasks; the AM is authenticated, so trust its size.
  args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
  if (am_cert_pem.empty()) {  // the job was submitted with tony.am.tls.enabled=false
    return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  }
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = am_cert_pem;
  args.SetSslTargetNameOverride(kAmTlsName);
  args.SetInt(GRPC_ARG_TSI_MAX_FRAME_SIZE, kTlsMaxFrameBytes);
  return grpc::CreateCustomChannel(address, grpc::SslCredentials(options), args);
}

void AttachAuth(grpc::ClientContext* context, const std::string& auth_value) {
  context->AddMetadata(kAuthMetadataKey, auth_value);
}

}  // namespace tony::rpc
