// The records, their conversions to and from yarn.proto, and the node table that yarn_client.h
// declares; the client itself is in yarn_client.cc.

#include <algorithm>
#include <charconv>
#include <utility>

#include "common/strings.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::hadoop {
namespace {

// Re-labels a status with `context` in front of its message, keeping its code and payloads (the
// RemoteError that GetRemoteError reads).

YarnApplicationState ApplicationStateFromProto(proto::ApplicationState state) {
  switch (state) {
    case proto::APP_STATE_NEW:
      return YarnApplicationState::kNew;
    case proto::APP_STATE_NEW_SAVING:
      return YarnApplicationState::kNewSaving;
    case proto::APP_STATE_SUBMITTED:
      return YarnApplicationState::kSubmitted;
    case proto::APP_STATE_ACCEPTED:
      return YarnApplicationState::kAccepted;
    case proto::APP_STATE_RUNNING:
      return YarnApplicationState::kRunning;
    case proto::APP_STATE_FINISHED:
      return YarnApplicationState::kFinished;
    case proto::APP_STATE_FAILED:
      return YarnApplicationState::kFailed;
    case proto::APP_STATE_KILLED:
      return YarnApplicationState::kKilled;
  }
  return YarnApplicationState::kUnknown;
}

FinalApplicationStatus FinalStatusFromProto(proto::FinalStatus status) {
  switch (status) {
    case proto::FINAL_STATUS_UNDEFINED:
      return FinalApplicationStatus::kUndefined;
    case proto::FINAL_STATUS_SUCCEEDED:
      return FinalApplicationStatus::kSucceeded;
    case proto::FINAL_STATUS_FAILED:
      return FinalApplicationStatus::kFailed;
    case proto::FINAL_STATUS_KILLED:
      return FinalApplicationStatus::kKilled;
    case proto::FINAL_STATUS_ENDED:
      return FinalApplicationStatus::kEnded;
  }
  return FinalApplicationStatus::kUndefined;
}

NodeState NodeStateFromProto(proto::NodeState state) {
  switch (state) {
    case proto::NODE_NEW:
      return NodeState::kNew;
    case proto::NODE_RUNNING:
      return NodeState::kRunning;
    case proto::NODE_UNHEALTHY:
      return NodeState::kUnhealthy;
    case proto::NODE_DECOMMISSIONED:
      return NodeState::kDecommissioned;
    case proto::NODE_LOST:
      return NodeState::kLost;
    case proto::NODE_REBOOTED:
      return NodeState::kRebooted;
    case proto::NODE_DECOMMISSIONING:
      return NodeState::kDecommissioning;
    case proto::NODE_SHUTDOWN:
      return NodeState::kShutdown;
  }
  return NodeState::kUnknown;
}

proto::Url UrlToProto(const YarnUrl& url) {
  proto::Url out;
  out.set_scheme(url.scheme);
  if (!url.host.empty()) out.set_host(url.host);
  out.set_port(url.port);
  out.set_file(url.file);
  if (!url.user_info.empty()) out.set_user_info(url.user_info);
  return out;
}

proto::LocalResource LocalResourceToProto(const LocalResource& resource) {
  proto::LocalResource out;
  *out.mutable_url() = UrlToProto(resource.url);
  out.set_size(resource.size);
  out.set_timestamp(resource.timestamp_ms);
  out.set_type(resource.type == LocalResourceType::kArchive ? proto::LOCAL_RESOURCE_ARCHIVE
                                                            : proto::LOCAL_RESOURCE_FILE);
  switch (resource.visibility) {
    case LocalResourceVisibility::kPublic:
      out.set_visibility(proto::VISIBILITY_PUBLIC);
      break;
    case LocalResourceVisibility::kPrivate:
      out.set_visibility(proto::VISIBILITY_PRIVATE);
      break;
    case LocalResourceVisibility::kApplication:
      out.set_visibility(proto::VISIBILITY_APPLICATION);
      break;
  }
  return out;
}

}  // namespace

// --- Records ---

std::string ApplicationId::ToString() const {
  return StrCat("application_", cluster_timestamp, "_", ZeroPadded(id, 4));
}

absl::StatusOr<ApplicationId> ApplicationId::Parse(std::string_view text) {
  std::vector<std::string_view> parts = Split(text, '_');
  ApplicationId id;
  if (parts.size() != 3 || parts[0] != "application" ||
      !ParseDecimal(parts[1], &id.cluster_timestamp) || !ParseDecimal(parts[2], &id.id) ||
      id.cluster_timestamp < 0 || id.id < 0) {
    return absl::InvalidArgumentError(StrCat("'", text,
                                             "' is not a YARN application id (expected "
                                             "application_<cluster timestamp>_<number>)"));
  }
  return id;
}

std::string ApplicationAttemptId::ToString() const {
  return StrCat("appattempt_", application_id.cluster_timestamp, "_",
                ZeroPadded(application_id.id, 4), "_", ZeroPadded(attempt_id, 6));
}

std::string ToString(YarnApplicationState state) {
  switch (state) {
    case YarnApplicationState::kNew:
      return "NEW";
    case YarnApplicationState::kNewSaving:
      return "NEW_SAVING";
    case YarnApplicationState::kSubmitted:
      return "SUBMITTED";
    case YarnApplicationState::kAccepted:
      return "ACCEPTED";
    case YarnApplicationState::kRunning:
      return "RUNNING";
    case YarnApplicationState::kFinished:
      return "FINISHED";
    case YarnApplicationState::kFailed:
      return "FAILED";
    case YarnApplicationState::kKilled:
      return "KILLED";
    case YarnApplicationState::kUnknown:
      break;
  }
  return "UNKNOWN";
}

std::string ToString(FinalApplicationStatus status) {
  switch (status) {
    case FinalApplicationStatus::kUndefined:
      return "UNDEFINED";
    case FinalApplicationStatus::kSucceeded:
      return "SUCCEEDED";
    case FinalApplicationStatus::kFailed:
      return "FAILED";
    case FinalApplicationStatus::kKilled:
      return "KILLED";
    case FinalApplicationStatus::kEnded:
      return "ENDED";
  }
  return "UNDEFINED";
}

std::string ToString(NodeState state) {
  switch (state) {
    case NodeState::kNew:
      return "NEW";
    case NodeState::kRunning:
      return "RUNNING";
    case NodeState::kUnhealthy:
      return "UNHEALTHY";
    case NodeState::kDecommissioned:
      return "DECOMMISSIONED";
    case NodeState::kLost:
      return "LOST";
    case NodeState::kRebooted:
      return "REBOOTED";
    case NodeState::kDecommissioning:
      return "DECOMMISSIONING";
    case NodeState::kShutdown:
      return "SHUTDOWN";
    case NodeState::kUnknown:
      break;
  }
  return "UNKNOWN";
}

bool IsFinal(YarnApplicationState state) {
  return state == YarnApplicationState::kFinished || state == YarnApplicationState::kFailed ||
         state == YarnApplicationState::kKilled;
}

absl::StatusOr<YarnUrl> YarnUrl::Parse(std::string_view uri) {
  auto invalid = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("'", uri, "' is not a URL for YARN: ", why));
  };
  size_t colon = uri.find(':');
  if (colon == std::string_view::npos || colon == 0) return invalid("no scheme");
  YarnUrl url;
  url.scheme = std::string(uri.substr(0, colon));
  for (size_t i = 0; i < url.scheme.size(); ++i) {
    char c = url.scheme[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
    if (!ok) return invalid("bad scheme");
  }
  std::string_view rest = uri.substr(colon + 1);
  if (rest.substr(0, 2) != "//") {
    url.file = std::string(rest);
    return url;
  }
  rest.remove_prefix(2);
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  url.file = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    url.user_info = std::string(authority.substr(0, at));
    authority.remove_prefix(at + 1);
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return invalid("unclosed '[' in the host");
    url.host = std::string(authority.substr(0, close + 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return invalid("junk after the host");
      port = after.substr(1);
    }
  } else if (size_t c = authority.rfind(':'); c != std::string_view::npos) {
    url.host = std::string(authority.substr(0, c));
    port = authority.substr(c + 1);
  } else {
    url.host = std::string(authority);
  }
  if (!port.empty() && (!ParseDecimal(port, &url.port) || url.port > 65535 || url.port < 0)) {
    return invalid(StrCat("bad port '", port, "'"));
  }
  return url;
}

std::string YarnUrl::ToString() const {
  std::string out = StrCat(scheme, ":");
  if (!host.empty() || port >= 0 || !user_info.empty()) {
    out += "//";
    if (!user_info.empty()) out += StrCat(user_info, "@");
    out += host;
    if (port >= 0) out += StrCat(":", port);
  }
  out += file;
  return out;
}

absl::StatusOr<YarnUrl> ResolveOnDefaultFs(std::string_view uri, std::string_view default_fs) {
  absl::StatusOr<YarnUrl> fs = YarnUrl::Parse(default_fs);
  if (!fs.ok() || fs->scheme != "hdfs") {
    return absl::InvalidArgumentError(
        StrCat(uri, ": the cluster's fs.defaultFS (", default_fs, ") is not an hdfs:// URI"));
  }
  absl::StatusOr<YarnUrl> url = YarnUrl::Parse(uri);
  if (!url.ok()) return url.status();
  if (url->scheme != "hdfs") {
    return absl::InvalidArgumentError(StrCat(uri, ": only hdfs:// paths can be localized"));
  }
  if (url->file.empty() || url->file.front() != '/') {
    return absl::InvalidArgumentError(StrCat(uri, ": not an absolute path"));
  }
  if (!url->host.empty() || url->port >= 0) {
    // The default port of an hdfs:// URI is the namenode's RPC port, 8020.
    const int32_t port = url->port >= 0 ? url->port : 8020;
    const int32_t fs_port = fs->port >= 0 ? fs->port : 8020;
    if (url->host != fs->host || port != fs_port) {
      return absl::InvalidArgumentError(
          StrCat(uri, ": not on the cluster's file system ", default_fs, " (fs.defaultFS)"));
    }
  }
  YarnUrl resolved = *fs;
  resolved.file = url->file;
  return resolved;
}

// --- Conversions ---

proto::ApplicationId ApplicationIdToProto(const ApplicationId& id) {
  proto::ApplicationId out;
  out.set_id(id.id);
  out.set_cluster_timestamp(id.cluster_timestamp);
  return out;
}

ApplicationId ApplicationIdFromProto(const proto::ApplicationId& id) {
  return {.cluster_timestamp = id.cluster_timestamp(), .id = id.id()};
}

proto::Resource ResourceToProto(const Resource& resource) {
  proto::Resource out;
  out.set_memory_mb(resource.memory_mb);
  out.set_vcores(resource.vcores);
  if (resource.gpus > 0) {
    proto::ResourceEntry* gpu = out.add_entries();
    gpu->set_key(std::string(kGpuResource));
    gpu->set_value(resource.gpus);
    gpu->set_units("");
    gpu->set_kind(proto::RESOURCE_KIND_COUNTABLE);
  }
  return out;
}

Resource ResourceFromProto(const proto::Resource& resource) {
  Resource out{.memory_mb = resource.memory_mb(), .vcores = resource.vcores()};
  for (const proto::ResourceEntry& entry : resource.entries()) {
    if (entry.key() == kGpuResource) out.gpus = entry.value();
  }
  return out;
}

proto::SubmitApplicationRequest MakeSubmitApplicationRequest(const AppSubmission& submission) {
  proto::SubmitApplicationRequest request;
  proto::ApplicationSubmissionContext* context = request.mutable_context();
  *context->mutable_application_id() = ApplicationIdToProto(submission.id);
  context->set_application_name(submission.name);
  context->set_queue(submission.queue);
  if (submission.priority.has_value()) {
    context->mutable_priority()->set_priority(*submission.priority);
  }
  context->set_unmanaged_am(false);
  context->set_max_app_attempts(submission.max_app_attempts);
  *context->mutable_resource() = ResourceToProto(submission.am_resource);
  context->set_application_type(submission.type);
  context->set_keep_containers_across_application_attempts(submission.keep_containers);
  for (const std::string& tag : submission.tags) context->add_tags(tag);
  if (!submission.node_label_expression.empty()) {
    context->set_node_label_expression(submission.node_label_expression);
  }

  const ContainerLaunchContext& am = submission.am_container;
  proto::ContainerLaunchContext* launch = context->mutable_am_container_spec();
  for (const auto& [name, resource] : am.local_resources) {
    proto::LocalResourceEntry* entry = launch->add_local_resources();
    entry->set_key(name);
    *entry->mutable_value() = LocalResourceToProto(resource);
  }
  if (!am.tokens.empty()) launch->set_tokens(am.tokens);
  for (const auto& [key, value] : am.environment) {
    proto::StringPair* pair = launch->add_environment();
    pair->set_key(key);
    pair->set_value(value);
  }
  for (const std::string& command : am.commands) launch->add_command(command);
  return request;
}

ApplicationReport ApplicationReportFromProto(const proto::ApplicationReport& report) {
  ApplicationReport out;
  out.id = ApplicationIdFromProto(report.application_id());
  if (report.has_current_attempt_id()) {
    out.current_attempt = ApplicationAttemptId{
        .application_id = ApplicationIdFromProto(report.current_attempt_id().application_id()),
        .attempt_id = report.current_attempt_id().attempt_id()};
  }
  out.user = report.user();
  out.queue = report.queue();
  out.name = report.name();
  out.application_type = report.application_type();
  out.tags.assign(report.tags().begin(), report.tags().end());
  out.state = report.has_state() ? ApplicationStateFromProto(report.state())
                                 : YarnApplicationState::kUnknown;
  out.final_status = FinalStatusFromProto(report.final_status());
  out.diagnostics = report.diagnostics();
  out.host = report.host();
  out.rpc_port = report.rpc_port();
  out.tracking_url = report.tracking_url();
  out.original_tracking_url = report.original_tracking_url();
  out.progress = report.progress();
  out.priority = report.priority().priority();
  out.start_time_ms = report.start_time();
  out.finish_time_ms = report.finish_time();
  return out;
}

ClusterMetrics ClusterMetricsFromProto(const proto::ClusterMetrics& metrics) {
  return {.num_node_managers = metrics.num_node_managers(),
          .num_active = metrics.num_active(),
          .num_decommissioned = metrics.num_decommissioned(),
          .num_lost = metrics.num_lost(),
          .num_unhealthy = metrics.num_unhealthy(),
          .num_rebooted = metrics.num_rebooted()};
}

NodeReport NodeReportFromProto(const proto::NodeReport& node) {
  NodeReport out;
  out.host = node.node_id().host();
  out.port = node.node_id().port();
  out.node_id = StrCat(out.host, ":", out.port);
  out.http_address = node.http_address();
  out.rack = node.rack();
  out.state = node.has_state() ? NodeStateFromProto(node.state()) : NodeState::kUnknown;
  out.capability = ResourceFromProto(node.capability());
  out.used = ResourceFromProto(node.used());
  out.num_containers = node.num_containers();
  out.health_report = node.health_report();
  out.last_health_report_time_ms = node.last_health_report_time();
  out.node_labels.assign(node.node_labels().begin(), node.node_labels().end());
  return out;
}

std::string FormatNodesTable(const ClusterMetrics& metrics, const std::vector<NodeReport>& nodes) {
  std::string out = StrCat("Total NodeManagers: ", metrics.num_node_managers, " (active ",
                           metrics.num_active, ", unhealthy ", metrics.num_unhealthy, ", lost ",
                           metrics.num_lost, ", decommissioned ", metrics.num_decommissioned,
                           ", rebooted ", metrics.num_rebooted, ")\n");
  if (nodes.empty()) return out + "No nodes.\n";

  auto used_of = [](auto used, auto total) { return StrCat(used, "/", total); };
  std::vector<std::vector<std::string>> rows = {
      {"Node-Id", "State", "Memory-MB", "VCores", "GPUs", "Containers"}};
  Resource used_sum, total_sum;
  int64_t containers_sum = 0;
  for (const NodeReport& node : nodes) {
    rows.push_back({node.node_id, ToString(node.state),
                    used_of(node.used.memory_mb, node.capability.memory_mb),
                    used_of(node.used.vcores, node.capability.vcores),
                    used_of(node.used.gpus, node.capability.gpus),
                    std::to_string(node.num_containers)});
    used_sum.memory_mb += node.used.memory_mb;
    used_sum.vcores += node.used.vcores;
    used_sum.gpus += node.used.gpus;
    total_sum.memory_mb += node.capability.memory_mb;
    total_sum.vcores += node.capability.vcores;
    total_sum.gpus += node.capability.gpus;
    containers_sum += node.num_containers;
  }
  if (nodes.size() > 1) {
    rows.push_back({"Total", "", used_of(used_sum.memory_mb, total_sum.memory_mb),
                    used_of(used_sum.vcores, total_sum.vcores),
                    used_of(used_sum.gpus, total_sum.gpus), std::to_string(containers_sum)});
  }

  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 2, ' ');
    }
    out += StrCat(line, "\n");
  }
  return out;
}

}  // namespace tony::hadoop
