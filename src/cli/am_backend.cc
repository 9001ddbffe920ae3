#include "cli/am_backend.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "cli/container_credentials.h"
#include "cli/roles.h"
#include "cluster/local/local_capacity.h"
#include "cluster/local/local_container_allocator.h"
#include "cluster/staging.h"
#include "cluster/yarn/hdfs_history_fs.h"
#include "cluster/yarn/yarn_asks.h"
#include "cluster/yarn/yarn_container_allocator.h"
#include "common/files.h"
#include "common/strings.h"
#include "hadoop/common/credentials.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/kms.h"
#include "hadoop/hdfs/namenode_client.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/ipc/failover.h"
#include "hadoop/yarn/am_rm_client.h"
#include "history/history_fs.h"
#include "rpc/job_credentials.h"
#include "rpc/launch_contract.h"
#include "spdlog/spdlog.h"

namespace tony::cli {
namespace {

namespace fs = std::filesystem;

// The RM's web proxy as the AM's status page admits it: its addresses and its URL of this
// application (YARN gives the AM the path in APPLICATION_WEB_PROXY_BASE). With RM HA, every RM's
// proxy is admitted; links go to the first, which a standby redirects to the active one.
absl::Status ResolveWebProxy(const std::string& app_id, const std::string& proxy,
                             am::AmOptions* options) {
  // "https://..." when the proxy serves HTTPS (yarn.http.policy HTTPS_ONLY).
  const bool https = proxy.starts_with("https://");
  absl::StatusOr<std::vector<hadoop::ServerAddress>> proxies =
      hadoop::ParseServerList(https ? proxy.substr(8) : proxy);
  if (!proxies.ok()) {
    return absl::InvalidArgumentError(
        StrCat(rpc::kEnvYarnWebProxy, ": ", ToStd(proxies.status().message())));
  }
  for (const hadoop::ServerAddress& each : *proxies) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(each.address.host.c_str(), nullptr, &hints, &found); rc != 0) {
      return absl::UnavailableError(
          StrCat("cannot resolve the web proxy ", each.address.host, ": ", gai_strerror(rc)));
    }
    for (addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
      char text[INET6_ADDRSTRLEN] = {};
      const void* raw =
          entry->ai_family == AF_INET
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(entry->ai_addr)->sin_addr)
              : static_cast<const void*>(
                    &reinterpret_cast<sockaddr_in6*>(entry->ai_addr)->sin6_addr);
      if (inet_ntop(entry->ai_family, raw, text, sizeof(text)) != nullptr &&
          std::find(options->proxy_addresses.begin(), options->proxy_addresses.end(), text) ==
              options->proxy_addresses.end()) {
        options->proxy_addresses.emplace_back(text);
      }
    }
    freeaddrinfo(found);
  }
  const char* base = std::getenv("APPLICATION_WEB_PROXY_BASE");
  options->proxy_base_url =
      StrCat(https ? "https://" : "http://", proxies->front().address.ToString(),
             base != nullptr && *base == '/' ? std::string(base) : StrCat("/proxy/", app_id));
  return absl::OkStatus();
}

// The job's history on YARN: HDFS, with the AM container's HDFS token (or as the user without
// Kerberos). A location that is not on the default file system means no history, with a warning.
void SetYarnHistory(const std::string& app_id, const config::JobSpec& spec,
                    const cluster::YarnAllocatorOptions& yarn, const std::string& tony_root,
                    am::AmOptions* options) {
  absl::StatusOr<history::HistoryDirs> dirs =
      cluster::HdfsHistoryDirs(spec.history_location, spec.history_intermediate,
                               spec.history_finished, yarn.default_fs, tony_root + "/history");
  if (!dirs.ok()) {
    spdlog::warn("[{}] no history for this job: {}", app_id, ToStd(dirs.status().message()));
    return;
  }
  if (yarn.webhdfs.empty()) {
    spdlog::warn("[{}] no history for this job: WebHDFS's address is unknown", app_id);
    return;
  }
  hadoop::WebHdfsAuth auth{yarn.user, nullptr, std::nullopt};
  if (!yarn.hdfs_tokens.empty()) auth.delegation = yarn.hdfs_tokens.front();
  auto client = std::make_shared<hadoop::WebHdfsClient>(yarn.webhdfs, auth, /*timeout_ms=*/10000);
  client->SetTls(yarn.webhdfs_tls);
  options->history_fs = cluster::HdfsHistoryFs(std::move(client), yarn.default_fs);
  options->history_dirs = *dirs;
}

}  // namespace

absl::StatusOr<AmBackend> YarnAmBackend(const rpc::AmLaunch& launch, const config::JobSpec& spec) {
  const std::string& app_id = launch.app_id;
  AmBackend backend;
  backend.options.app_id = app_id;
  backend.options.wait_client_ms = spec.wait_client_ms;
  absl::StatusOr<hadoop::Credentials> credentials = ContainerCredentials();
  if (!credentials.ok()) {
    return absl::InvalidArgumentError(
        StrCat("cannot read the container's credentials: ", ToStd(credentials.status().message())));
  }
  const std::string* secret = credentials->FindSecret(rpc::kJobSecretAlias);
  const std::string* cert = credentials->FindSecret(rpc::kAmCertAlias);
  const std::string* key = credentials->FindSecret(rpc::kAmKeyAlias);
  const hadoop::Token* am_rm_token =
      credentials->FindTokenByKind(std::string(hadoop::kAmRmTokenKind));
  absl::StatusOr<std::vector<hadoop::ServerAddress>> schedulers =
      hadoop::ParseServerList(launch.yarn_scheduler);
  if (secret == nullptr || am_rm_token == nullptr || !schedulers.ok() ||
      (spec.am_tls && (cert == nullptr || key == nullptr))) {
    return absl::InvalidArgumentError(
        StrCat("the AM container lacks the job secret, its TLS key, its AMRMToken or ",
               rpc::kEnvYarnScheduler));
  }
  const std::string& staging = launch.staging_dir;
  cluster::YarnAllocatorOptions yarn;
  yarn.scheduler = schedulers->front().address;
  // With RM HA, each scheduler call fails over with tony's default policy; the heartbeat loop
  // goes on calling while the RMs fail over or restart.
  if (schedulers->size() > 1) yarn.ha_schedulers = *schedulers;
  yarn.default_fs = launch.default_fs;
  if (!launch.hadoop_conf_path.empty()) {
    // The client's configuration, for the user's files on other NameNodes (ViewFS mounts,
    // tony.other.namenodes): the AM must resolve them as the client did, or not at all.
    absl::StatusOr<hadoop::HadoopConf> conf =
        hadoop::HadoopConf::Load({fs::absolute(cluster::kHadoopConfDir).string()});
    if (!conf.ok()) {
      return absl::InvalidArgumentError(
          StrCat("the job's Hadoop configuration: ", ToStd(conf.status().message())));
    }
    yarn.hadoop_conf = std::make_shared<const hadoop::HadoopConf>(*std::move(conf));
  }
  yarn.webhdfs = launch.webhdfs;
  yarn.web_https = launch.web_proxy.starts_with("https://");
  if (!launch.webhdfs_ca.empty()) {
    // The authorities the client trusts for WebHDFS over HTTPS, localized beside the AM.
    absl::StatusOr<std::string> pem = ReadFile(launch.webhdfs_ca);
    if (!pem.ok()) {
      return absl::InvalidArgumentError(StrCat(rpc::kEnvWebHdfsCa, " (", launch.webhdfs_ca,
                                               "): ", ToStd(pem.status().message())));
    }
    yarn.webhdfs_tls = {*std::move(pem),
                        StrCat("the client's truststore (", launch.webhdfs_ca, ")")};
  }
  yarn.user = hadoop::HadoopUser();
  yarn.am_rm_token = *am_rm_token;
  for (const auto& [alias, token] : credentials->tokens()) {
    if (token.kind == hadoop::kHdfsDelegationTokenKind) yarn.hdfs_tokens.push_back(token);
    if (token.kind == hadoop::kKmsDelegationTokenKind) yarn.kms_tokens.push_back(token);
  }
  for (const auto& [alias, secret] : credentials->secrets()) {
    if (alias.starts_with("dfs-kms-")) yarn.task_secrets[alias] = secret;
    // The job's configuration goes to each task as it came to the AM (cluster::kFinalConfSecret).
    if (alias == cluster::kFinalConfSecret) yarn.task_secrets[alias] = secret;
  }
  // The AM's own WebHDFS calls use the first: its default file system's (with ViewFS or
  // tony.other.namenodes there are others, and the credentials keep no order).
  std::stable_partition(
      yarn.hdfs_tokens.begin(), yarn.hdfs_tokens.end(),
      [&launch](const hadoop::Token& token) { return token.service == launch.webhdfs_token; });
  // The binary in tony's cache is named by its content (HdfsJobFiles::CachedBinary).
  const bool cached_binary = !launch.binary_path.empty();
  yarn.common_files = {{.source = cached_binary ? launch.binary_path : StrCat(staging, "/tony"),
                        .name = "tony",
                        .reusable = cached_binary}};
  if (!launch.node_hints.empty()) {
    absl::StatusOr<std::vector<cluster::NodeHint>> parsed =
        cluster::ParseNodeHints(launch.node_hints);
    if (parsed.ok()) {
      yarn.node_hints = *std::move(parsed);
    } else {
      spdlog::warn("asking for containers anywhere: {}", ToStd(parsed.status().message()));
    }
  }
  if (!launch.keytab.empty()) {
    absl::StatusOr<cluster::TokenRefreshOptions> refresh =
        TokenRefreshFromContainer(launch.keytab, yarn.default_fs, spec.security);
    if (!refresh.ok()) {
      return absl::InvalidArgumentError(
          StrCat("cannot keep the job's HDFS tokens fresh: ", ToStd(refresh.status().message())));
    }
    yarn.token_refresh = *std::move(refresh);
    yarn.token_refresh->tls = yarn.webhdfs_tls;  // the client's truststore, for an https:// KMS
  }
  backend.options.user = yarn.user;
  backend.options.backend = "yarn";
  backend.options.submitted_ms = launch.submitted_ms;
  // The user's tony directory, where the client staged the job (.../.tony/<app id>); with ViewFS
  // already resolved to its NameNode's path.
  const std::string tony_root = staging.empty() ? StrCat("/user/", yarn.user, "/.tony")
                                                : fs::path(staging).parent_path().string();
  SetYarnHistory(app_id, spec, yarn, tony_root, &backend.options);
  if (!spec.history_url.empty()) {
    yarn.final_tracking_url = StrCat(spec.history_url, "/jobs/", app_id);
  }
  // A later attempt adopts the running tasks (tony.am.retry-count): each attempt writes its
  // address beside the staged job, where the executors of earlier attempts look for it.
  if (spec.am_retry_count > 0 && !staging.empty() && !yarn.webhdfs.empty()) {
    yarn.am_address_file = StrCat(staging, "/am.address");
    backend.options.am_address_file = yarn.am_address_file;
    backend.options.am_address_webhdfs = yarn.webhdfs;
    backend.options.am_address_webhdfs_token = launch.webhdfs_token;
  }
  backend.options.webhdfs_ca = yarn.webhdfs_tls.ca_pem;
  backend.allocator = std::make_unique<cluster::YarnContainerAllocator>(yarn);
  backend.options.credentials.secret = *secret;
  if (cert != nullptr && key != nullptr) {
    backend.options.credentials.am_cert_pem = *cert;
    backend.options.credentials.am_key_pem = *key;
  }
  backend.options.staging_dir = staging;
  backend.options.checkpoint_dir = !spec.checkpoint_dir.empty() ? spec.checkpoint_dir
                                   : staging.empty()
                                       ? ""
                                       : StrCat(yarn.default_fs, staging, "/checkpoints");
  // Written into every task's directory from its credentials (cluster::kFinalConfSecret).
  backend.options.conf_file = cluster::kFinalConfFile;
  backend.options.executable = "./tony";
  const char* nm_host = std::getenv("NM_HOST");
  backend.options.host = nm_host != nullptr ? nm_host : "localhost";
  backend.options.bind_host = spec.am_bind_host.empty() ? backend.options.host : spec.am_bind_host;
  if (absl::Status proxy = ResolveWebProxy(app_id, launch.web_proxy, &backend.options);
      !proxy.ok()) {
    spdlog::warn("[{}] no status page: {}", app_id, ToStd(proxy.message()));
    backend.options.status_page = false;
  }
  backend.options.has_src = launch.has_src;
  // Tasks reach HDFS with the client's configuration and, without Kerberos, as the job's user.
  if (!launch.hadoop_conf_path.empty()) {
    backend.options.task_resources.push_back({.source = launch.hadoop_conf_path,
                                              .name = std::string(cluster::kHadoopConfDir),
                                              .is_archive = true,
                                              .reusable = true});  // in tony's cache
  }
  if (const char* user = std::getenv("HADOOP_USER_NAME"); user != nullptr && *user) {
    backend.options.task_env["HADOOP_USER_NAME"] = user;
  }
  if (cluster::IsRemotePath(spec.python_venv)) {
    backend.options.venv_source = spec.python_venv;
  } else if (launch.has_venv) {
    backend.options.venv_source = StrCat(staging, "/", cluster::kVenvZip);
  }
  return backend;
}

absl::StatusOr<AmBackend> LocalAmBackend(const rpc::AmLaunch& launch, const std::string& job_dir,
                                         const config::JobSpec& spec, int am_attempt) {
  const std::string& app_id = launch.app_id;
  AmBackend backend;
  backend.options.app_id = app_id;
  backend.options.wait_client_ms = spec.wait_client_ms;
  absl::StatusOr<rpc::JobCredentials> credentials = rpc::ReadJobCredentials(job_dir);
  if (!credentials.ok()) return credentials.status();
  cluster::LocalAllocatorOptions local;
  local.app_id = app_id;
  local.job_dir = job_dir;
  local.capacity = cluster::ResolveLocalCapacity(spec.local);
  local.memory_check_interval_ms = spec.local.memory_check_interval_ms;
  local.enforce_memory = spec.local.enforce_memory;
  local.am_attempt = am_attempt;
  local.keep_work_dirs_on_failure = spec.local.keep_work_dirs_on_failure;
  // A later attempt adopts the running tasks, which must then outlive this AM.
  local.keep_containers = spec.am_retry_count > 0;
  backend.allocator = std::make_unique<cluster::LocalContainerAllocator>(local);
  backend.options.user = hadoop::HadoopUser();
  backend.options.backend = "local";
  backend.options.submitted_ms = launch.submitted_ms;
  backend.options.am_attempt = am_attempt;
  // The allocator writes it (LocalContainerAllocator::Start); executors look there for the next
  // attempt.
  if (local.keep_containers) backend.options.am_address_file = StrCat(job_dir, "/am.address");
  absl::StatusOr<history::HistoryStore> store =
      LocalHistoryStore(spec.history_location, spec.history_intermediate, spec.history_finished);
  if (store.ok()) {
    backend.options.history_fs = store->fs;
    backend.options.history_dirs = store->dirs;
  } else {
    spdlog::warn("[{}] no history for this job: {}", app_id, ToStd(store.status().message()));
  }
  backend.options.credentials = *std::move(credentials);
  backend.options.staging_dir = job_dir;
  backend.options.checkpoint_dir =
      !spec.checkpoint_dir.empty() ? spec.checkpoint_dir : StrCat(job_dir, "/checkpoints");
  backend.options.conf_file = StrCat(job_dir, "/", cluster::kFinalConfFile);
  backend.options.executable = SelfExecutable();
  backend.options.host = "127.0.0.1";
  backend.options.bind_host = spec.am_bind_host.empty() ? backend.options.host : spec.am_bind_host;
  backend.options.has_src = fs::exists(StrCat(job_dir, "/", cluster::kSrcZip));
  if (fs::exists(StrCat(job_dir, "/", cluster::kVenvZip))) {
    backend.options.venv_source = StrCat(job_dir, "/", cluster::kVenvZip);
  }
  return backend;
}

}  // namespace tony::cli
