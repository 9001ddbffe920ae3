#include "cluster/yarn/yarn_cluster_client.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "cluster/staging.h"
#include "cluster/yarn/hdfs_history_fs.h"
#include "cluster/yarn/hdfs_job_files.h"
#include "cluster/yarn/job_tokens.h"
#include "cluster/yarn/yarn_job_staging.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/strings.h"
#include "hadoop/common/credentials.h"
#include "hadoop/hdfs/nameservice.h"
#include "hadoop/hdfs/viewfs.h"
#include "hadoop/http/truststore.h"
#include "hadoop/ipc/failover.h"
#include "rpc/launch_contract.h"

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

// What the ResourceManager says of an application, in the backend-neutral form.
AppReport ToAppReport(const hadoop::ApplicationReport& yarn) {
  AppReport report;
  report.app_id = yarn.id.ToString();
  report.name = yarn.name;
  report.user = yarn.user;
  report.tracking_url = yarn.tracking_url;
  if (yarn.current_attempt.has_value()) report.attempt = yarn.current_attempt->attempt_id;
  report.diagnostics = yarn.diagnostics;
  if (yarn.rpc_port > 0 && !yarn.host.empty() && yarn.host != "N/A") {
    report.last_am_address = StrCat(yarn.host, ":", yarn.rpc_port);
  }
  using State = hadoop::YarnApplicationState;
  switch (yarn.state) {
    case State::kRunning:
      report.state = AppState::kRunning;
      if (yarn.rpc_port > 0 && yarn.host != "N/A") {
        report.am_address = StrCat(yarn.host, ":", yarn.rpc_port);
      }
      break;
    case State::kFinished:
    case State::kFailed:
    case State::kKilled: {
      using Final = hadoop::FinalApplicationStatus;
      report.final_state = yarn.final_status == Final::kSucceeded ? "SUCCEEDED"
                           : yarn.final_status == Final::kKilled || yarn.state == State::kKilled
                               ? "KILLED"
                               : "FAILED";
      report.state = report.final_state == "SUCCEEDED" ? AppState::kFinished
                     : report.final_state == "KILLED"  ? AppState::kKilled
                                                       : AppState::kFailed;
      break;
    }
    default:
      report.state = AppState::kSubmitted;
  }
  return report;
}

}  // namespace

absl::StatusOr<std::unique_ptr<YarnClusterClient>> YarnClusterClient::Connect(
    hadoop::HadoopConf conf, YarnClusterOptions options) {
  // Where the user's tony files live (<home>/<user>/.tony): on fs.defaultFS, or with ViewFS on the
  // NameNode its mount table names for that directory. A cluster whose default file system is
  // neither (file:///) still serves list, status, kill and cluster; staging then goes to
  // dfs.namenode.http-address, as before NameNode HA.
  absl::StatusOr<TonyHome> tony_home = LocateTonyHome(conf, options.user);
  if (!tony_home.ok()) return tony_home.status();
  Home home{tony_home->fs, tony_home->root, "", {}};
  std::string webhdfs;
  hadoop::http::Tls tls;
  absl::StatusOr<hadoop::NameService> hdfs = hadoop::ResolveNameService(conf, home.fs);
  if (!hdfs.ok() && home.fs == conf.DefaultFs()) {
    hdfs = absl::Status(hdfs.status().code(), StrCat("fs.defaultFS (", conf.DefaultFs(),
                                                     "): ", ToStd(hdfs.status().message())));
  }
  if (hdfs.ok()) {
    webhdfs = hdfs->WebHdfsServers();
    home.token_service = hdfs->TokenService();
    if (hdfs->https) {
      // WebHDFS over HTTPS trusts what the cluster's clients trust (ssl-client.xml). A truststore
      // that cannot be read fails what needs WebHDFS, not list, status or kill.
      absl::StatusOr<hadoop::http::Tls> trusted = hadoop::ClientTls(conf);
      if (trusted.ok()) {
        tls = *std::move(trusted);
      } else {
        home.webhdfs_error = trusted.status();
      }
    }
  } else if (home.fs.starts_with("hdfs://")) {
    return hdfs.status();
  } else if (absl::StatusOr<hadoop::HostPort> http = conf.NameNodeHttpAddress(); http.ok()) {
    webhdfs = http->ToString();
  }
  absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> yarn =
      hadoop::YarnClient::Connect(conf, options.user, options.kerberos);
  if (!yarn.ok()) return yarn.status();
  return std::unique_ptr<YarnClusterClient>(
      new YarnClusterClient(std::move(conf), std::move(options), *std::move(yarn),
                            std::move(webhdfs), std::move(tls), std::move(home)));
}

YarnClusterClient::YarnClusterClient(hadoop::HadoopConf conf, YarnClusterOptions options,
                                     std::unique_ptr<hadoop::YarnClient> yarn, std::string webhdfs,
                                     hadoop::http::Tls tls, Home home)
    : conf_(std::move(conf)),
      options_(std::move(options)),
      yarn_(std::move(yarn)),
      hdfs_(std::move(webhdfs), hadoop::WebHdfsAuth{options_.user, options_.kerberos, {}}),
      tls_(std::move(tls)),
      home_(std::move(home)),
      files_(&hdfs_, home_.fs, home_.root),
      namenodes_(
          HdfsNameNodesOptions{std::make_shared<const hadoop::HadoopConf>(conf_), home_.fs,
                               hadoop::WebHdfsAuth{options_.user, options_.kerberos, {}}, tls_},
          &hdfs_) {
  hdfs_.SetFailoverPolicy(NameNodePolicy());
  hdfs_.SetTls(tls_);
}

hadoop::FailoverPolicy YarnClusterClient::NameNodePolicy() const {
  return hadoop::NameNodeFailoverPolicy(conf_, static_cast<int>(hdfs_.NameNodeCount()));
}

absl::StatusOr<history::HistoryStore> YarnClusterClient::History(
    const std::string& location, const std::string& intermediate,
    const std::string& finished) const {
  if (!home_.webhdfs_error.ok()) return home_.webhdfs_error;
  absl::StatusOr<history::HistoryDirs> dirs =
      HdfsHistoryDirs(location, intermediate, finished, home_.fs, home_.root + "/history");
  if (!dirs.ok()) return dirs.status();
  auto client = std::make_shared<hadoop::WebHdfsClient>(
      hdfs_.namenode_http(), hadoop::WebHdfsAuth{options_.user, options_.kerberos, {}});
  client->SetFailoverPolicy(NameNodePolicy());
  client->SetTls(tls_);
  return history::HistoryStore{HdfsHistoryFs(std::move(client), home_.fs), *dirs};
}

absl::Status YarnClusterClient::AddDelegationTokens(hadoop::Credentials& credentials) const {
  if (options_.kerberos == nullptr) return absl::OkStatus();
  absl::StatusOr<JobTokens> tokens = JobTokens::Resolve(conf_, home_.fs, options_.other_namenodes);
  if (!tokens.ok()) return tokens.status();
  absl::StatusOr<std::vector<hadoop::ServerAddress>> rms =
      conf_.RmAddresses("yarn.resourcemanager.address");
  if (!rms.ok()) return rms.status();
  // The RM renews the tokens while the job runs, and cancels them when it ends (with HA, any of
  // them: the renewer is the principal's user, the same for all).
  const std::string renewer =
      hadoop::SubstituteHost(conf_.Get("yarn.resourcemanager.principal"),
                             hadoop::CanonicalHostName(rms->front().address.host));
  return tokens->AddTo(conf_, options_.kerberos, renewer, &tls_, credentials);
}

absl::Status YarnClusterClient::CheckFits(const std::map<std::string, ResourceAsk>& asks_by_type) {
  if (!reserved_) {
    absl::StatusOr<hadoop::NewApplication> app = yarn_->GetNewApplication();
    if (!app.ok()) return app.status();
    reserved_ = *app;
  }
  const hadoop::Resource& max = reserved_->maximum_capability;
  for (const auto& [what, ask] : asks_by_type) {
    if (ask.memory_mb > max.memory_mb || ask.vcores > max.vcores || ask.gpus > max.gpus) {
      return absl::ResourceExhaustedError(StrCat(
          what, " asks for ", ask.memory_mb, " MB, ", ask.vcores, " vcores and ", ask.gpus,
          " GPUs, but the cluster's largest container has ", max.memory_mb, " MB, ", max.vcores,
          " vcores and ",
          max.gpus == INT64_MAX ? std::string("unlimited") : std::to_string(max.gpus), " GPUs"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<hadoop::NodeReport>> YarnClusterClient::RunningNodes() {
  if (!running_nodes_) {
    absl::StatusOr<std::vector<hadoop::NodeReport>> nodes =
        yarn_->GetClusterNodes({hadoop::NodeState::kRunning});
    if (!nodes.ok()) return nodes.status();
    running_nodes_ = *std::move(nodes);
  }
  return *running_nodes_;
}

absl::Status YarnClusterClient::CheckGangFits(const ResourceAsk& total, int containers) {
  absl::StatusOr<std::vector<hadoop::NodeReport>> nodes = RunningNodes();
  if (!nodes.ok()) return nodes.status();
  int64_t memory = 0, vcores = 0, gpus = 0;
  for (const hadoop::NodeReport& node : *nodes) {
    memory += node.capability.memory_mb;
    vcores += node.capability.vcores;
    gpus += node.capability.gpus;
  }
  if (total.memory_mb > memory || total.vcores > vcores || total.gpus > gpus) {
    return absl::ResourceExhaustedError(
        StrCat("the job's ", containers, " containers (GANG mode, the AM included) need ",
               total.memory_mb, " MB, ", total.vcores, " vcores and ", total.gpus,
               " GPUs at once, but the cluster's running NodeManagers have ", memory, " MB, ",
               vcores, " vcores and ", gpus, " GPUs in all"));
  }
  return absl::OkStatus();
}

absl::Status YarnClusterClient::CheckPlacementConstraints() {
  absl::StatusOr<bool> supported = yarn_->HasPlacementConstraints();
  if (!supported.ok()) return supported.status();
  if (!*supported) {
    return absl::FailedPreconditionError(
        StrCat("the cluster's ResourceManager (", yarn_->peer(),
               ") takes no placement constraints: they need Hadoop 3.2 or later"));
  }
  return absl::OkStatus();
}

std::vector<NodeHint> YarnClusterClient::NodeHints() {
  absl::StatusOr<std::vector<hadoop::NodeReport>> nodes = RunningNodes();
  // Without them the AM asks for containers anywhere, which works, only more slowly.
  if (!nodes.ok() || nodes->size() > static_cast<size_t>(kMaxNodeHints)) return {};
  std::vector<NodeHint> hints;
  for (const hadoop::NodeReport& node : *nodes) {
    if (node.host.empty()) continue;
    hints.push_back({node.host, node.rack.empty() ? "/default-rack" : node.rack});
  }
  return hints;
}

absl::StatusOr<std::string> YarnClusterClient::NewApplicationId() {
  if (!reserved_) {
    absl::StatusOr<hadoop::NewApplication> app = yarn_->GetNewApplication();
    if (!app.ok()) return app.status();
    reserved_ = *app;
  }
  return reserved_->id.ToString();
}

std::string YarnClusterClient::JobDir(const std::string& app_id) const {
  return StrCat(options_.tony_home, "/jobs/", app_id);
}

std::string YarnClusterClient::StagingDir(const std::string& app_id) const {
  return files_.StagingDir(app_id);
}

absl::Status YarnClusterClient::Submit(const AmSubmission& submission) {
  if (!home_.webhdfs_error.ok()) return home_.webhdfs_error;
  absl::StatusOr<hadoop::ApplicationId> id = hadoop::ApplicationId::Parse(submission.app_id);
  if (!id.ok()) return id.status();
  absl::Status submitted = StageAndSubmit(*id, submission);
  if (submitted.code() == absl::StatusCode::kUnavailable && !hadoop::IsNoActiveServer(submitted)) {
    // A server that broke off (a DataNode, one NameNode or ResourceManager that went away) is not
    // "no server took the job" (ClusterClient::Submit): a call may have been in flight.
    submitted = absl::Status(absl::StatusCode::kAborted, submitted.message());
  }
  if (!submitted.ok() && !options_.keep_staging) {
    (void)hdfs_.Delete(StagingDir(submission.app_id), /*recursive=*/true);
  }
  return submitted;
}

absl::Status YarnClusterClient::StageAndSubmit(const hadoop::ApplicationId& id,
                                               const AmSubmission& submission) {
  // Tokens first: a NameNode that refuses them stops the job before anything is staged.
  hadoop::Credentials credentials;
  if (absl::Status s = AddDelegationTokens(credentials); !s.ok()) return s;
  const std::string staging = StagingDir(submission.app_id);
  if (absl::Status s = hdfs_.Mkdirs(staging, 0700); !s.ok()) return s;
  if (absl::Status s = hdfs_.Mkdirs(StrCat(staging, "/", kResourcesDir), 0700); !s.ok()) return s;

  // The client's Hadoop configuration, for the tasks' own HDFS clients.
  if (absl::Status s = ZipHadoopConf(conf_.files(), submission.job_dir); !s.ok()) return s;
  // What the client trusts for WebHDFS over HTTPS, for the AM's own calls.
  const bool ship_ca = hdfs_.https() && !tls_.ca_pem.empty();
  if (ship_ca) {
    if (absl::Status s =
            WriteFile(StrCat(submission.job_dir, "/", kWebHdfsCaFile), tls_.ca_pem, 0600);
        !s.ok()) {
      return s;
    }
  }

  // Everything the client staged locally, except its private files, goes to HDFS; the binary and
  // the Hadoop configuration to the cache (yarn_job_staging.h).
  JobStaging staging_job(&files_, options_.executable, options_.am_keytab);
  absl::StatusOr<StagedJob> staged = staging_job.Stage(submission.app_id, submission.job_dir,
                                                       staging, submission.local_only_files);
  if (!staged.ok()) return staged.status();
  absl::StatusOr<std::string> final_conf =
      ReadFile(StrCat(submission.job_dir, "/", kFinalConfFile));
  if (!final_conf.ok()) return final_conf.status();
  hadoop::ContainerLaunchContext am;
  am.local_resources = staged->am_files;
  am.local_resources["tony"] = staged->binary;
  // The AM localizes the Hadoop configuration too (it reads it to get fresh tokens): the
  // NodeManager then has every file the tasks share at hand when they start.
  if (staged->hadoop_conf) {
    am.local_resources[kHadoopConfDir] = *staged->hadoop_conf;
    am.local_resources[kHadoopConfDir].type = hadoop::LocalResourceType::kArchive;
  }

  absl::StatusOr<std::vector<hadoop::ServerAddress>> schedulers =
      conf_.RmAddresses("yarn.resourcemanager.scheduler.address");
  if (!schedulers.ok()) return schedulers.status();
  rpc::AmLaunch launch;
  launch.app_id = submission.app_id;
  launch.on_yarn = true;
  launch.submitted_ms = submission.submitted_ms;
  launch.staging_dir = staging;
  launch.binary_path = staged->binary.url.file;
  if (staged->hadoop_conf) launch.hadoop_conf_path = staged->hadoop_conf->url.file;
  launch.yarn_scheduler = hadoop::FormatServerList(*schedulers);
  // The AM works on the file system tony's files are on (with ViewFS, resolved here).
  launch.default_fs = home_.fs;
  launch.webhdfs = hdfs_.namenode_http();
  if (ship_ca) launch.webhdfs_ca = kWebHdfsCaFile;
  launch.webhdfs_token = home_.token_service;
  // The status page serves task output only to the RM's web proxy (AmIpFilter's rule).
  if (absl::StatusOr<std::vector<hadoop::ServerAddress>> proxies = conf_.WebProxyAddresses();
      proxies.ok()) {
    launch.web_proxy =
        StrCat(conf_.YarnHttpsOnly() ? "https://" : "", hadoop::FormatServerList(*proxies));
  }
  launch.has_src = fs::exists(StrCat(submission.job_dir, "/", kSrcZip));
  launch.has_venv = fs::exists(StrCat(submission.job_dir, "/", kVenvZip));
  if (!options_.am_keytab.empty()) launch.keytab = kAmKeytabFile;
  if (std::vector<NodeHint> hints = NodeHints(); !hints.empty()) {
    launch.node_hints = FormatNodeHints(hints);
  }
  am.environment = submission.env;
  am.environment.erase("TONY_JOB_DIR");
  // HADOOP_USER_NAME names the user only without Kerberos; with it, the tokens do.
  if (options_.kerberos == nullptr) am.environment["HADOOP_USER_NAME"] = options_.user;
  for (auto& [name, value] : launch.ToEnv()) am.environment[name] = std::move(value);
  am.commands = {"./tony am 1>><LOG_DIR>/am.log 2>&1"};
  for (const auto& [alias, secret] : submission.secrets) credentials.AddSecret(alias, secret);
  credentials.AddSecret(kFinalConfSecret, *final_conf);
  am.tokens = credentials.Serialize(hadoop::Credentials::Format::kWritable);

  hadoop::AppSubmission app;
  app.id = id;
  app.name = submission.name;
  app.queue = submission.queue;
  app.type = submission.application_type;
  app.tags = submission.tags;
  app.node_label_expression = submission.node_label;
  app.max_app_attempts = submission.max_attempts;
  app.keep_containers = submission.keep_containers;
  app.priority = submission.priority;
  app.am_resource.memory_mb = submission.resources.memory_mb;
  app.am_resource.vcores = submission.resources.vcores;
  app.am_resource.gpus = submission.resources.gpus;
  app.am_container = std::move(am);
  return yarn_->SubmitApplication(app);
}

absl::StatusOr<AppReport> YarnClusterClient::GetReport(const std::string& app_id) {
  absl::StatusOr<hadoop::ApplicationId> id = hadoop::ApplicationId::Parse(app_id);
  if (!id.ok()) return id.status();
  absl::StatusOr<hadoop::ApplicationReport> yarn = yarn_->GetApplicationReport(*id);
  if (!yarn.ok()) return yarn.status();
  return ToAppReport(*yarn);
}

absl::Status YarnClusterClient::Kill(const std::string& app_id, bool force) {
  absl::StatusOr<hadoop::ApplicationId> id = hadoop::ApplicationId::Parse(app_id);
  if (!id.ok()) return id.status();
  absl::StatusOr<hadoop::ApplicationReport> report = yarn_->GetApplicationReport(*id);
  if (report.ok() && hadoop::IsFinal(report->state)) return absl::OkStatus();
  absl::StatusOr<bool> killed = yarn_->ForceKillApplication(*id, "killed by tony's client");
  return killed.ok() ? absl::OkStatus() : killed.status();
}

absl::Status YarnClusterClient::AwaitAmExit(const std::string& app_id, int64_t timeout_ms) {
  absl::StatusOr<hadoop::ApplicationId> id = hadoop::ApplicationId::Parse(app_id);
  if (!id.ok()) return id.status();
  const Clock* clock = SystemClock::Get();
  const int64_t deadline = clock->NowMs() + timeout_ms;
  absl::Status result = absl::DeadlineExceededError(
      StrCat("YARN had not finished ", app_id, " ", timeout_ms, " ms after the job ended"));
  while (clock->NowMs() < deadline) {
    absl::StatusOr<hadoop::ApplicationReport> report = yarn_->GetApplicationReport(*id);
    if (report.ok() && hadoop::IsFinal(report->state)) {
      result = absl::OkStatus();
      break;
    }
    // The RM has no way to push the end of an application; ask again shortly.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!options_.keep_staging) RemoveStaging(app_id);
  return result;
}

void YarnClusterClient::RemoveStaging(const std::string& app_id) {
  const std::string staging = StagingDir(app_id);
  const std::string outputs = StrCat(staging, "/", kOutputsDir);
  absl::StatusOr<std::vector<hadoop::FileStatus>> kept = hdfs_.ListStatus(outputs);
  if (!kept.ok() || kept->empty()) {
    (void)hdfs_.Delete(staging, /*recursive=*/true);
    return;
  }
  // The job's outputs stay where the tasks put them (tony.application.output-dir's default).
  absl::StatusOr<std::vector<hadoop::FileStatus>> entries = hdfs_.ListStatus(staging);
  if (!entries.ok()) return;
  for (const hadoop::FileStatus& entry : *entries) {
    if (entry.path_suffix != kOutputsDir) {
      (void)hdfs_.Delete(StrCat(staging, "/", entry.path_suffix), /*recursive=*/true);
    }
  }
}

absl::StatusOr<hadoop::YarnUrl> YarnClusterClient::ResolveForJob(const std::string& uri,
                                                                 std::string_view use) {
  if (!home_.webhdfs_error.ok()) return home_.webhdfs_error;
  // hdfs:///<path> on fs.defaultFS (with ViewFS, where its mount table puts it), or the NameNode
  // the URI names; the AM resolves it the same way.
  absl::StatusOr<hadoop::YarnUrl> url = namenodes_.Resolve(uri);
  if (!url.ok()) return url.status();
  if (!namenodes_.OnDefault(*url) && options_.kerberos != nullptr) {
    // The job reaches it with the job's tokens: one of them must be that NameNode's.
    absl::StatusOr<hadoop::NameService> namenode = namenodes_.NameServiceOf(*url);
    if (!namenode.ok()) return namenode.status();
    absl::StatusOr<JobTokens> tokens =
        JobTokens::Resolve(conf_, home_.fs, options_.other_namenodes);
    if (!tokens.ok()) return tokens.status();
    if (!tokens->Covers(*namenode)) {
      return absl::InvalidArgumentError(StrCat(uri, ": the job gets no delegation token of ",
                                               namenode->Uri(), ", so ", use,
                                               "; name it in tony.other.namenodes"));
    }
  }
  return url;
}

absl::StatusOr<std::string> YarnClusterClient::OutputDir(const std::string& app_id,
                                                         const std::string& requested) {
  if (requested.empty()) return StrCat(home_.fs, StagingDir(app_id), "/", kOutputsDir);
  if (requested.starts_with('/')) return StrCat("file://", requested);  // each node's own disk
  std::string uri = requested;
  if (hadoop::IsViewFs(uri)) {
    absl::StatusOr<std::string> target = hadoop::ResolveViewFs(conf_, uri);
    if (!target.ok()) {
      return absl::InvalidArgumentError(
          StrCat("tony.application.output-dir ", uri, ": ", ToStd(target.status().message())));
    }
    uri = *std::move(target);
  }
  absl::StatusOr<hadoop::YarnUrl> url = ResolveForJob(uri, "its tasks could not write there");
  if (!url.ok()) {
    return absl::Status(url.status().code(),
                        StrCat("tony.application.output-dir ", ToStd(url.status().message())));
  }
  return url->ToString();
}

absl::Status YarnClusterClient::MakeOutputDir(const std::string& dir) {
  if (dir.starts_with("file://")) return absl::OkStatus();  // each executor makes it
  // The first WebHDFS call of a submit: what would refuse the staging refuses this alike.
  if (!home_.webhdfs_error.ok()) return home_.webhdfs_error;
  absl::StatusOr<hadoop::YarnUrl> url = namenodes_.Resolve(dir);
  if (!url.ok()) return url.status();
  absl::StatusOr<hadoop::WebHdfsClient*> client = namenodes_.ClientFor(*url);
  if (!client.ok()) return client.status();
  if (absl::Status made = (*client)->Mkdirs(url->file, 0700); !made.ok()) {
    // As Submit's: kUnavailable only when no NameNode took the call (nothing was made).
    const absl::StatusCode code =
        made.code() == absl::StatusCode::kUnavailable && !hadoop::IsNoActiveServer(made)
            ? absl::StatusCode::kAborted
            : made.code();
    return absl::Status(
        code, StrCat("cannot create the output directory ", dir, ": ", ToStd(made.message())));
  }
  return absl::OkStatus();
}

absl::StatusOr<RemoteFileInfo> YarnClusterClient::StatRemote(const std::string& uri) {
  absl::StatusOr<hadoop::YarnUrl> url = ResolveForJob(uri, "YARN could not localize it");
  if (!url.ok()) return url.status();
  absl::StatusOr<hadoop::WebHdfsClient*> client = namenodes_.ClientFor(*url);
  if (!client.ok()) return client.status();
  absl::StatusOr<hadoop::FileStatus> status = (*client)->GetFileStatus(url->file);
  if (status.status().code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(StrCat(uri, ": no such file or directory"));
  }
  if (!status.ok())
    return absl::Status(status.status().code(),
                        StrCat(uri, ": ", ToStd(status.status().message())));
  return RemoteFileInfo{.is_directory = status->is_directory};
}

absl::StatusOr<std::vector<AppReport>> YarnClusterClient::ListApplications(
    const std::string& application_type, bool include_ended) {
  absl::StatusOr<std::vector<hadoop::ApplicationReport>> apps =
      yarn_->GetApplications({application_type}, include_ended);
  if (!apps.ok()) return apps.status();
  std::vector<AppReport> reports;
  for (const hadoop::ApplicationReport& app : *apps) reports.push_back(ToAppReport(app));
  return reports;
}

}  // namespace tony::cluster
