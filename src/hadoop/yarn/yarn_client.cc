#include "hadoop/yarn/yarn_client.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/cord.h"
#include "common/strings.h"
#include "hadoop/sasl/gssapi_mechanism.h"

namespace tony::hadoop {
namespace {

std::optional<proto::NodeState> NodeStateToProto(NodeState state) {
  switch (state) {
    case NodeState::kNew:
      return proto::NODE_NEW;
    case NodeState::kRunning:
      return proto::NODE_RUNNING;
    case NodeState::kUnhealthy:
      return proto::NODE_UNHEALTHY;
    case NodeState::kDecommissioned:
      return proto::NODE_DECOMMISSIONED;
    case NodeState::kLost:
      return proto::NODE_LOST;
    case NodeState::kRebooted:
      return proto::NODE_REBOOTED;
    case NodeState::kDecommissioning:
      return proto::NODE_DECOMMISSIONING;
    case NodeState::kShutdown:
      return proto::NODE_SHUTDOWN;
    case NodeState::kUnknown:
      break;
  }
  return std::nullopt;
}

}  // namespace

// --- YarnClient ---

absl::StatusOr<std::unique_ptr<YarnClient>> YarnClient::Connect(
    const HadoopConf& conf, std::string user, std::shared_ptr<const KerberosCredentials> kerberos) {
  absl::StatusOr<std::vector<ServerAddress>> rms = conf.RmAddresses("yarn.resourcemanager.address");
  if (!rms.ok()) return rms.status();
  IpcClientOptions options;
  options.protocol = std::string(kApplicationClientProtocol);
  options.protocol_version = kApplicationClientProtocolVersion;
  options.user = user.empty() ? HadoopUser() : std::move(user);
  std::string principal;
  if (kerberos != nullptr) {
    principal = conf.Get("yarn.resourcemanager.principal");
    if (principal.empty()) {
      return absl::InvalidArgumentError(
          "yarn.resourcemanager.principal is not set in the cluster's configuration "
          "(yarn-site.xml): tony cannot tell which principal the ResourceManager has");
    }
  }
  auto open = [options, kerberos = std::move(kerberos), principal](
                  const FailoverTarget& rm) -> absl::StatusOr<std::unique_ptr<RpcConnection>> {
    IpcClientOptions each = options;
    each.host = rm.address.host;
    each.port = rm.address.port;
    if (kerberos != nullptr) each.sasl_mechanisms = KerberosSasl(kerberos, principal, each.host);
    absl::StatusOr<std::unique_ptr<IpcClient>> ipc = IpcClient::Connect(std::move(each));
    if (!ipc.ok()) return ipc.status();
    return AsRpcConnection(*std::move(ipc));
  };
  const bool ha = rms->size() > 1;
  const std::string where =
      ha ? StrCat("connecting to the ResourceManagers (yarn.resourcemanager.ha.rm-ids ",
                  conf.Get("yarn.resourcemanager.ha.rm-ids"), ")")
         : StrCat("connecting to the ResourceManager (yarn.resourcemanager.address ",
                  rms->front().address.ToString(), ")");
  auto rm = std::make_unique<FailoverConnection>(
      "ResourceManager", *rms, std::move(open),
      ha ? FailoverPolicyFromConf(conf, rms->size()) : FailoverPolicy{.rounds = 1});
  if (absl::Status connected = rm->Connect(); !connected.ok()) {
    return WithContext(connected, where);
  }
  return std::make_unique<YarnClient>(std::move(rm));
}

YarnClient::YarnClient(std::unique_ptr<IpcClient> ipc)
    : peer_(ipc->peer()), connection_(AsRpcConnection(std::move(ipc))) {}

YarnClient::YarnClient(std::unique_ptr<FailoverConnection> rm) {
  failover_ = rm.get();
  connection_ = std::move(rm);
}

std::string YarnClient::peer() const {
  MutexLock lock(mu_);
  if (failover_ == nullptr) return peer_;
  const FailoverTarget& rm = failover_->current();
  return rm.id.empty() ? rm.address.ToString() : rm.Name();
}

absl::Status YarnClient::Call(std::string_view method, const google::protobuf::MessageLite& request,
                              google::protobuf::MessageLite* response) {
  MutexLock lock(mu_);
  return connection_->Call(method, request, response);
}

absl::StatusOr<NewApplication> YarnClient::GetNewApplication() {
  proto::GetNewApplicationResponse response;
  if (absl::Status s = Call("getNewApplication", proto::GetNewApplicationRequest(), &response);
      !s.ok()) {
    return s;
  }
  if (!response.has_application_id()) {
    return absl::InternalError(
        StrCat("getNewApplication from ", peer(), ": the response carries no application id"));
  }
  return NewApplication{.id = ApplicationIdFromProto(response.application_id()),
                        .maximum_capability = ResourceFromProto(response.maximum_capability())};
}

absl::Status YarnClient::SubmitApplication(const AppSubmission& submission) {
  proto::SubmitApplicationResponse response;
  absl::Status s = Call("submitApplication", MakeSubmitApplicationRequest(submission), &response);
  if (!s.ok()) return WithContext(s, StrCat("submitting ", submission.id.ToString()));
  return absl::OkStatus();
}

absl::StatusOr<ApplicationReport> YarnClient::GetApplicationReport(const ApplicationId& id) {
  proto::GetApplicationReportRequest request;
  *request.mutable_application_id() = ApplicationIdToProto(id);
  proto::GetApplicationReportResponse response;
  if (absl::Status s = Call("getApplicationReport", request, &response); !s.ok()) {
    return s;
  }
  if (!response.has_report()) {
    return absl::InternalError(StrCat("getApplicationReport from ", peer(),
                                      ": the response carries no report for ", id.ToString()));
  }
  return ApplicationReportFromProto(response.report());
}

absl::StatusOr<std::vector<ApplicationReport>> YarnClient::GetApplications(
    const std::vector<std::string>& types, bool include_final) {
  proto::GetApplicationsRequest request;
  for (const std::string& type : types) request.add_application_types(type);
  if (!include_final) {
    for (proto::ApplicationState state :
         {proto::APP_STATE_NEW, proto::APP_STATE_NEW_SAVING, proto::APP_STATE_SUBMITTED,
          proto::APP_STATE_ACCEPTED, proto::APP_STATE_RUNNING}) {
      request.add_application_states(state);
    }
  }
  proto::GetApplicationsResponse response;
  if (absl::Status s = Call("getApplications", request, &response); !s.ok()) return s;
  std::vector<ApplicationReport> reports;
  reports.reserve(response.applications_size());
  for (const proto::ApplicationReport& report : response.applications()) {
    reports.push_back(ApplicationReportFromProto(report));
  }
  std::sort(reports.begin(), reports.end(), [](const auto& a, const auto& b) {
    return std::tie(a.id.cluster_timestamp, a.id.id) < std::tie(b.id.cluster_timestamp, b.id.id);
  });
  return reports;
}

absl::StatusOr<bool> YarnClient::ForceKillApplication(const ApplicationId& id,
                                                      std::string diagnostics) {
  proto::KillApplicationRequest request;
  *request.mutable_application_id() = ApplicationIdToProto(id);
  if (!diagnostics.empty()) request.set_diagnostics(std::move(diagnostics));
  proto::KillApplicationResponse response;
  if (absl::Status s = Call("forceKillApplication", request, &response); !s.ok()) {
    return WithContext(s, StrCat("killing ", id.ToString()));
  }
  return response.is_kill_completed();
}

absl::StatusOr<ClusterMetrics> YarnClient::GetClusterMetrics() {
  proto::GetClusterMetricsResponse response;
  if (absl::Status s = Call("getClusterMetrics", proto::GetClusterMetricsRequest(), &response);
      !s.ok()) {
    return s;
  }
  return ClusterMetricsFromProto(response.metrics());
}

absl::StatusOr<bool> YarnClient::HasPlacementConstraints() {
  proto::GetClusterNodeAttributesResponse response;
  absl::Status status =
      Call("getClusterNodeAttributes", proto::GetClusterNodeAttributesRequest(), &response);
  if (status.ok()) return true;
  // An RM without the method answers RpcNoSuchMethodException.
  if (status.code() == absl::StatusCode::kUnimplemented) return false;
  return status;
}

absl::StatusOr<std::vector<NodeReport>> YarnClient::GetClusterNodes(
    const std::vector<NodeState>& states) {
  proto::GetClusterNodesRequest request;
  for (NodeState state : states) {
    std::optional<proto::NodeState> wire = NodeStateToProto(state);
    if (!wire) return absl::InvalidArgumentError("GetClusterNodes: UNKNOWN is not a node state");
    request.add_states(*wire);
  }
  proto::GetClusterNodesResponse response;
  if (absl::Status s = Call("getClusterNodes", request, &response); !s.ok()) return s;
  std::vector<NodeReport> nodes;
  nodes.reserve(response.nodes_size());
  for (const proto::NodeReport& node : response.nodes()) nodes.push_back(NodeReportFromProto(node));
  return nodes;
}

}  // namespace tony::hadoop
