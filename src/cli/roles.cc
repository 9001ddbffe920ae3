#include "cli/roles.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "am/application_master.h"
#include "cli/config_command.h"
#include "cli/container_credentials.h"
#include "client/tony_client.h"
#include "cluster/local/job_dir_retention.h"
#include "cluster/local/local_cluster_client.h"
#include "cluster/local/local_container_allocator.h"
#include "cluster/staging.h"
#include "cluster/yarn/yarn_cluster_client.h"
#include "cluster/yarn/yarn_container_allocator.h"
#include "common/signal_thread.h"
#include "common/strings.h"
#include "config/key_catalog.h"
#include "executor/executor_guard.h"
#include "executor/task_executor.h"
#include "hadoop/am_rm_client.h"
#include "hadoop/credentials.h"
#include "hadoop/hadoop_conf.h"
#include "hadoop/namenode_client.h"
#include "nlohmann/json.hpp"
#include "rpc/auth.h"
#include "rpc/job_credentials.h"
#include "rpc/launch_contract.h"
#include "spdlog/spdlog.h"

namespace tony::cli {
namespace {

namespace fs = std::filesystem;

// The RM's web proxy as the AM's status page admits it: its addresses and its URL of this
// application (YARN gives the AM the path in APPLICATION_WEB_PROXY_BASE).
absl::Status ResolveWebProxy(const std::string& app_id, am::AmOptions* options) {
  const char* proxy = std::getenv(rpc::kEnvYarnWebProxy);
  absl::StatusOr<hadoop::HostPort> address = hadoop::ParseHostPort(proxy != nullptr ? proxy : "");
  if (!address.ok()) {
    return absl::InvalidArgumentError(
        StrCat(rpc::kEnvYarnWebProxy, ": ", ToStd(address.status().message())));
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(address->host.c_str(), nullptr, &hints, &found); rc != 0) {
    return absl::UnavailableError(
        StrCat("cannot resolve the web proxy ", address->host, ": ", gai_strerror(rc)));
  }
  for (addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw =
        entry->ai_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(entry->ai_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(entry->ai_addr)->sin6_addr);
    if (inet_ntop(entry->ai_family, raw, text, sizeof(text)) != nullptr &&
        std::find(options->proxy_addresses.begin(), options->proxy_addresses.end(), text) ==
            options->proxy_addresses.end()) {
      options->proxy_addresses.push_back(text);
    }
  }
  freeaddrinfo(found);
  const char* base = std::getenv("APPLICATION_WEB_PROXY_BASE");
  options->proxy_base_url =
      StrCat("http://", address->ToString(),
             base != nullptr && *base == '/' ? std::string(base) : StrCat("/proxy/", app_id));
  return absl::OkStatus();
}

int RunSubmitOnYarn(SubmitOptions& options, const ValidatedJob& job) {
  int exit_code = 0;
  std::unique_ptr<cluster::YarnClusterClient> cluster = ConnectYarnClient(
      job.spec.hadoop_conf_dirs, job.spec.keep_staging, job.spec.security, &exit_code);
  if (cluster == nullptr) return exit_code;
  std::map<std::string, cluster::ResourceAsk> asks{
      {"the AM", {job.spec.am.memory_mb, job.spec.am.vcores, job.spec.am.gpus}}};
  for (const auto& [name, type] : job.spec.job_types) {
    asks[StrCat("job type ", name)] = {type.resources.memory_mb, type.resources.vcores,
                                       type.resources.gpus};
  }
  absl::Status fits = cluster->CheckFits(asks);
  if (fits.ok() && job.spec.mode == config::DistributedMode::kGang) {
    cluster::ResourceAsk total{job.spec.am.memory_mb, job.spec.am.vcores, job.spec.am.gpus};
    for (const auto& [name, type] : job.spec.job_types) {
      total.memory_mb += type.instances * type.resources.memory_mb;
      total.vcores += type.instances * type.resources.vcores;
      total.gpus += type.instances * type.resources.gpus;
    }
    fits = cluster->CheckGangFits(total, job.spec.TotalTasks() + 1);
  }
  if (!fits.ok()) {
    std::cerr << "tony: error: " << fits.message() << "\n";
    return fits.code() == absl::StatusCode::kResourceExhausted ? client::kExitBadInput
                                                               : client::kExitJobFailed;
  }
  client::BlockInterruptSignals();
  client::TonyClient tony(cluster.get(), std::cout, std::cerr);
  return tony.Submit(job.resolved, job.spec, {options.request.working_dir, SelfExecutable()});
}

void SetUpRoleLogging(const std::string& role) {
  spdlog::set_pattern(StrCat("%Y-%m-%d %H:%M:%S.%e ", role, " %l: %v"));
  spdlog::flush_on(spdlog::level::info);
}

}  // namespace

std::string TonyHome() {
  if (const char* home = std::getenv("TONY_HOME"); home != nullptr && *home != '\0') return home;
  const char* user_home = std::getenv("HOME");
  return StrCat(user_home != nullptr ? user_home : "/tmp", "/.tony");
}

// The configuration a job was staged with, as the AM and executors read it.
absl::StatusOr<config::Configuration> LoadFinalConf(const std::string& path) {
  config::Configuration conf = config::KeyCatalog::BuiltIn().Defaults();
  if (absl::Status s = conf.LoadXmlFile(path, config::SourceKind::kConfFile); !s.ok()) return s;
  return conf;
}

absl::StatusOr<hadoop::HadoopConf> ClientHadoopConf(const std::vector<std::string>& conf_dirs) {
  std::vector<std::string> dirs = hadoop::HadoopConf::DirsFromEnvironment();
  dirs.insert(dirs.end(), conf_dirs.begin(), conf_dirs.end());
  if (dirs.empty()) {
    return absl::InvalidArgumentError(
        "--backend yarn needs the cluster's configuration: set HADOOP_CONF_DIR (or YARN_CONF_DIR, "
        "or tony.application.yarn-conf-path) to the directory of yarn-site.xml");
  }
  return hadoop::HadoopConf::Load(dirs);
}

absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> ClusterLogin(
    const hadoop::HadoopConf& conf, const config::SecuritySpec& security) {
  if (!conf.SecurityEnabled()) return std::shared_ptr<const hadoop::KerberosCredentials>();
  const config::ConfigEntry* entry = conf.raw().Find("hadoop.security.authentication");
  const std::string where =
      entry != nullptr ? entry->source.ToString() : "the cluster's configuration";
  if (!security.enabled) {
    return absl::InvalidArgumentError(StrCat(
        "hadoop.security.authentication = kerberos (", where,
        ") but tony.application.security.enabled = false: this cluster accepts only Kerberos "
        "logins; remove the setting"));
  }
  absl::StatusOr<std::shared_ptr<hadoop::KerberosCredentials>> login =
      hadoop::KerberosCredentials::Acquire({security.principal, security.keytab});
  if (!login.ok()) {
    return absl::Status(login.status().code(),
                        StrCat("this cluster uses Kerberos (hadoop.security.authentication = "
                               "kerberos, ",
                               where, "): ", ToStd(login.status().message())));
  }
  return std::shared_ptr<const hadoop::KerberosCredentials>(*std::move(login));
}

std::unique_ptr<cluster::YarnClusterClient> ConnectYarnClient(
    const std::vector<std::string>& hadoop_conf_dirs, bool keep_staging,
    const config::SecuritySpec& security, int* exit_code) {
  absl::StatusOr<hadoop::HadoopConf> hadoop_conf = ClientHadoopConf(hadoop_conf_dirs);
  if (!hadoop_conf.ok()) {
    std::cerr << "tony: error: " << hadoop_conf.status().message() << "\n";
    *exit_code = client::kExitBadInput;
    return nullptr;
  }
  // Said before anything is asked of the cluster.
  absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> kerberos =
      ClusterLogin(*hadoop_conf, security);
  if (!kerberos.ok()) {
    std::cerr << "tony: error: " << kerberos.status().message() << "\n";
    *exit_code = kerberos.status().code() == absl::StatusCode::kUnavailable ? client::kExitJobFailed
                                                                            : client::kExitBadInput;
    return nullptr;
  }
  cluster::YarnClusterOptions options;
  options.tony_home = TonyHome();
  options.executable = SelfExecutable();
  options.user = *kerberos != nullptr ? (*kerberos)->ShortName() : hadoop::HadoopUser();
  options.keep_staging = keep_staging;
  options.kerberos = *kerberos;
  options.other_namenodes = security.other_namenodes;
  if (*kerberos != nullptr && !security.keytab.empty()) {
    options.am_keytab = fs::absolute(security.keytab).string();
  }
  absl::StatusOr<std::unique_ptr<cluster::YarnClusterClient>> cluster =
      cluster::YarnClusterClient::Connect(*std::move(hadoop_conf), options);
  if (!cluster.ok()) {
    std::cerr << "tony: error: " << cluster.status().message() << "\n";
    // A login the cluster refuses, or configuration that names no principal: the user's to fix.
    const absl::StatusCode code = cluster.status().code();
    *exit_code = code == absl::StatusCode::kUnauthenticated ||
                         code == absl::StatusCode::kPermissionDenied ||
                         code == absl::StatusCode::kInvalidArgument
                     ? client::kExitBadInput
                     : client::kExitJobFailed;
    return nullptr;
  }
  return *std::move(cluster);
}

std::string SelfExecutable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "tony" : self.string();
}

int RunSubmit(SubmitOptions& options) {
  CompleteFromEnvironment(&options);
  std::optional<ValidatedJob> job = ResolveAndValidate(options);
  if (!job) return client::kExitBadInput;
  if (job->spec.backend == "yarn") return RunSubmitOnYarn(options, *job);
  const cluster::LocalCapacity capacity = cluster::ResolveLocalCapacity(job->spec.local);
  for (const auto& [name, type] : job->spec.job_types) {
    absl::Status fits = cluster::CheckFitsLocally(
        capacity, StrCat("job type ", name),
        {type.resources.memory_mb, type.resources.vcores, type.resources.gpus});
    if (!fits.ok()) {
      std::cerr << "tony: error: " << fits.message() << "\n";
      return client::kExitBadInput;
    }
  }
  if (job->spec.mode == config::DistributedMode::kGang) {
    // In GANG mode every task must hold its container at once; on one machine a job that does
    // not fit as a whole would wait forever for the last container.
    cluster::ResourceAsk total{0, 0, 0};
    for (const auto& [name, type] : job->spec.job_types) {
      total.memory_mb += type.instances * type.resources.memory_mb;
      total.vcores += type.instances * type.resources.vcores;
      total.gpus += type.instances * type.resources.gpus;
    }
    absl::Status fits = cluster::CheckFitsLocally(
        capacity, StrCat("the job's ", job->spec.TotalTasks(), " tasks together (GANG mode)"),
        total);
    if (!fits.ok()) {
      std::cerr << "tony: error: " << fits.message() << "\n";
      return client::kExitBadInput;
    }
  }
  // Old ended jobs' directories go first, quietly: whatever fails there is no reason to fail
  // this job (tony gc reports it).
  {
    cluster::JobDirRetention retention(TonyHome(), job->spec.history_retention_sec,
                                       SystemClock::Get());
    for (const cluster::ExpiredJobDir& dir : retention.FindExpired()) (void)retention.Remove(dir);
  }
  // Before any thread exists, so that every thread inherits the mask.
  client::BlockInterruptSignals();
  cluster::LocalClusterClient cluster(TonyHome());
  client::TonyClient tony(&cluster, std::cout, std::cerr);
  return tony.Submit(job->resolved, job->spec, {options.request.working_dir, SelfExecutable()});
}

int RunAm() {
  SetUpRoleLogging("am");
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  const char* app_id_env = std::getenv(rpc::kEnvAppId);
  if (app_id_env == nullptr) {
    std::cerr << "tony am: TONY_APP_ID must be set; the AM is started by `tony submit`\n";
    return 2;
  }
  const std::string app_id = app_id_env;
  const bool on_yarn = std::getenv(rpc::kEnvBackend) != nullptr &&
                       std::string(std::getenv(rpc::kEnvBackend)) == "yarn";
  // Local: the job directory. YARN: the container's working directory, where the staged files
  // were localized.
  const char* job_dir_env = std::getenv("TONY_JOB_DIR");
  const std::string job_dir = job_dir_env != nullptr ? job_dir_env : fs::current_path().string();
  const std::string conf_file = StrCat(job_dir, "/", cluster::kFinalConfFile);
  absl::StatusOr<config::Configuration> conf = LoadFinalConf(conf_file);
  absl::StatusOr<config::JobSpec> spec =
      conf.ok() ? config::BuildJobSpec(*conf) : absl::StatusOr<config::JobSpec>(conf.status());
  if (!spec.ok()) {
    spdlog::error("cannot start: {}", ToStd(spec.status().message()));
    return 2;
  }

  // Which attempt this AM is (tony.am.retry-count): YARN's is in the AM's container id, the
  // local backend's in TONY_AM_ATTEMPT.
  int am_attempt = 1;
  if (const char* container = std::getenv("CONTAINER_ID"); on_yarn && container != nullptr) {
    if (absl::StatusOr<hadoop::ContainerId> id = hadoop::ContainerId::Parse(container); id.ok()) {
      am_attempt = id->attempt.attempt_id;
    }
  } else if (const char* attempt = std::getenv(rpc::kEnvAmAttempt); attempt != nullptr) {
    am_attempt = std::max(1, std::atoi(attempt));
  }
  if (am_attempt > 1 || spec->am_retry_count > 0) {
    spdlog::info("[{}] AM attempt {} of at most {}", app_id, am_attempt, spec->am_retry_count + 1);
  }

  am::AmOptions options;
  options.app_id = app_id;
  options.wait_client_ms = spec->wait_client_ms;
  std::unique_ptr<cluster::ContainerAllocator> allocator;
  if (on_yarn) {
    absl::StatusOr<hadoop::Credentials> credentials = ContainerCredentials();
    if (!credentials.ok()) {
      spdlog::error("cannot read the container's credentials: {}",
                    ToStd(credentials.status().message()));
      return 2;
    }
    const std::string* secret = credentials->FindSecret(rpc::kJobSecretAlias);
    const std::string* cert = credentials->FindSecret(rpc::kAmCertAlias);
    const std::string* key = credentials->FindSecret(rpc::kAmKeyAlias);
    const hadoop::Token* am_rm_token =
        credentials->FindTokenByKind(std::string(hadoop::kAmRmTokenKind));
    absl::StatusOr<hadoop::HostPort> scheduler = hadoop::ParseHostPort(
        std::getenv(rpc::kEnvYarnScheduler) ? std::getenv(rpc::kEnvYarnScheduler) : "");
    if (secret == nullptr || am_rm_token == nullptr || !scheduler.ok() ||
        (spec->am_tls && (cert == nullptr || key == nullptr))) {
      spdlog::error(
          "the AM container lacks the job secret, its TLS key, its AMRMToken or "
          "TONY_YARN_SCHEDULER");
      return 2;
    }
    const std::string staging =
        std::getenv(rpc::kEnvStagingDir) ? std::getenv(rpc::kEnvStagingDir) : "";
    cluster::YarnAllocatorOptions yarn;
    yarn.scheduler = *scheduler;
    yarn.default_fs = std::getenv(rpc::kEnvDefaultFs) ? std::getenv(rpc::kEnvDefaultFs) : "";
    yarn.webhdfs = std::getenv(rpc::kEnvWebHdfs) ? std::getenv(rpc::kEnvWebHdfs) : "";
    yarn.user = hadoop::HadoopUser();
    yarn.am_rm_token = *am_rm_token;
    for (const auto& [alias, token] : credentials->tokens()) {
      if (token.kind == hadoop::kHdfsDelegationTokenKind) yarn.hdfs_tokens.push_back(token);
    }
    const char* binary = std::getenv(rpc::kEnvBinaryPath);
    yarn.common_files = {{"tony", binary != nullptr ? binary : StrCat(staging, "/tony")},
                         {cluster::kFinalConfFile, StrCat(staging, "/", cluster::kFinalConfFile)}};
    if (const char* hints = std::getenv(std::string(cluster::kNodeHintsEnv).c_str())) {
      absl::StatusOr<std::vector<cluster::NodeHint>> parsed = cluster::ParseNodeHints(hints);
      if (parsed.ok()) {
        yarn.node_hints = *std::move(parsed);
      } else {
        spdlog::warn("asking for containers anywhere: {}", ToStd(parsed.status().message()));
      }
    }
    if (const char* keytab = std::getenv(rpc::kEnvAmKeytab); keytab != nullptr && *keytab) {
      absl::StatusOr<cluster::TokenRefreshOptions> refresh =
          TokenRefreshFromContainer(keytab, yarn.default_fs, spec->security);
      if (!refresh.ok()) {
        spdlog::error("[{}] cannot keep the job's HDFS tokens fresh: {}", app_id,
                      ToStd(refresh.status().message()));
        return 2;
      }
      yarn.token_refresh = *std::move(refresh);
    }
    allocator = std::make_unique<cluster::YarnContainerAllocator>(yarn);
    options.credentials.secret = *secret;
    if (cert != nullptr && key != nullptr) {
      options.credentials.am_cert_pem = *cert;
      options.credentials.am_key_pem = *key;
    }
    options.staging_dir = staging;
    options.conf_file = cluster::kFinalConfFile;  // localized into every task's directory
    options.executable = "./tony";
    const char* nm_host = std::getenv("NM_HOST");
    options.host = nm_host != nullptr ? nm_host : "localhost";
    options.bind_host = spec->am_bind_host.empty() ? options.host : spec->am_bind_host;
    if (absl::Status proxy = ResolveWebProxy(app_id, &options); !proxy.ok()) {
      spdlog::warn("[{}] no status page: {}", app_id, ToStd(proxy.message()));
      options.status_page = false;
    }
    options.has_src = std::getenv(rpc::kEnvHasSrc) != nullptr && *std::getenv(rpc::kEnvHasSrc);
    // Tasks reach HDFS with the client's configuration and, without Kerberos, as the job's user.
    if (const char* has = std::getenv(rpc::kEnvHasHadoopConf); has != nullptr && *has) {
      options.task_resources.push_back(
          {StrCat(staging, "/", cluster::kHadoopConfZip), cluster::kHadoopConfDir, true});
    }
    if (const char* user = std::getenv("HADOOP_USER_NAME"); user != nullptr && *user) {
      options.task_env["HADOOP_USER_NAME"] = user;
    }
    if (cluster::IsRemotePath(spec->python_venv)) {
      options.venv_source = spec->python_venv;
    } else if (std::getenv(rpc::kEnvHasVenv) != nullptr && *std::getenv(rpc::kEnvHasVenv)) {
      options.venv_source = StrCat(staging, "/", cluster::kVenvZip);
    }
  } else {
    absl::StatusOr<rpc::JobCredentials> credentials = rpc::ReadJobCredentials(job_dir);
    if (!credentials.ok()) {
      spdlog::error("cannot start: {}", ToStd(credentials.status().message()));
      return 2;
    }
    cluster::LocalAllocatorOptions local;
    local.app_id = app_id;
    local.job_dir = job_dir;
    local.capacity = cluster::ResolveLocalCapacity(spec->local);
    local.memory_check_interval_ms = spec->local.memory_check_interval_ms;
    local.enforce_memory = spec->local.enforce_memory;
    local.am_attempt = am_attempt;
    local.keep_work_dirs_on_failure = spec->local.keep_work_dirs_on_failure;
    allocator = std::make_unique<cluster::LocalContainerAllocator>(local);
    options.credentials = *std::move(credentials);
    options.staging_dir = job_dir;
    options.conf_file = conf_file;
    options.executable = SelfExecutable();
    options.host = "127.0.0.1";
    options.bind_host = spec->am_bind_host.empty() ? options.host : spec->am_bind_host;
    options.has_src = fs::exists(StrCat(job_dir, "/", cluster::kSrcZip));
    if (fs::exists(StrCat(job_dir, "/", cluster::kVenvZip))) {
      options.venv_source = StrCat(job_dir, "/", cluster::kVenvZip);
    }
  }
  am::ApplicationMaster master(options, *spec, allocator.get(), SystemClock::Get());
  // Destroyed before `master`: a signal that comes as the AM exits (YARN stops the AM's container
  // at the end of every job) is dropped, never delivered to a destroyed AM.
  SignalThread signals(
      stop, [&master](int sig) { master.RequestKill(StrCat("the AM received signal ", sig)); });
  return master.Run();
}

int RunExecutor(char* role_arg) {
  executor::BlockStopSignals();
  SetUpRoleLogging("executor");
  if (std::optional<int> guard_exit = executor::RunGuard(role_arg)) return *guard_exit;
  absl::StatusOr<executor::ExecutorOptions> options = executor::ExecutorOptionsFromEnvironment();
  if (!options.ok()) {
    spdlog::error("{}", ToStd(options.status().message()));
    return 2;
  }
  absl::StatusOr<std::map<std::string, std::string>> secrets = TakeContainerSecrets();
  if (!secrets.ok()) {
    spdlog::error("{}", ToStd(secrets.status().message()));
    return 2;
  }
  auto credential = secrets->find(rpc::kTaskCredentialAlias);
  if (credential == secrets->end()) {
    spdlog::error("the container's credentials lack the task's credential");
    return 2;
  }
  options->auth = rpc::TaskAuthValue(options->task.type, options->task.index, options->container_id,
                                     credential->second);
  if (auto cert = secrets->find(rpc::kAmCertAlias); cert != secrets->end()) {
    options->am_cert_pem = cert->second;
  }
  // On YARN the task reads its tokens where the NodeManager put them; fresh ones go there too.
  if (const char* path = std::getenv("HADOOP_TOKEN_FILE_LOCATION");
      path != nullptr && *path && std::getenv(rpc::kEnvContainerSecrets) == nullptr) {
    options->apply_tokens = [file = std::string(path)](const std::string& fresh) {
      return MergeTokensIntoFile(file, fresh);
    };
  }
  absl::StatusOr<config::Configuration> conf = LoadFinalConf(options->conf_file);
  absl::StatusOr<config::JobSpec> spec =
      conf.ok() ? config::BuildJobSpec(*conf) : absl::StatusOr<config::JobSpec>(conf.status());
  if (!spec.ok()) {
    spdlog::error("cannot read the job: {}", ToStd(spec.status().message()));
    return 2;
  }
  executor::TaskExecutor task_executor(*std::move(options), *std::move(spec));
  return task_executor.Run();
}

}  // namespace tony::cli
