#include "cli/roles.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "am/am_process.h"
#include "am/application_master.h"
#include "cli/am_backend.h"
#include "cli/config_command.h"
#include "cli/container_credentials.h"
#include "client/tony_client.h"
#include "cluster/local/job_dir_retention.h"
#include "cluster/local/local_cluster_client.h"
#include "cluster/local/local_container_allocator.h"
#include "cluster/staging.h"
#include "cluster/yarn/hdfs_outputs.h"
#include "cluster/yarn/yarn_cluster_client.h"
#include "cluster/yarn/yarn_container_allocator.h"
#include "common/quick_exit.h"
#include "common/signal_thread.h"
#include "common/strings.h"
#include "config/key_catalog.h"
#include "executor/executor_guard.h"
#include "executor/task_context.h"
#include "executor/task_executor.h"
#include "grpc/grpc.h"
#include "hadoop/common/credentials.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/namenode_client.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/yarn/am_rm_client.h"
#include "history/history_reader.h"
#include "nlohmann/json.hpp"
#include "rpc/auth.h"
#include "rpc/job_credentials.h"
#include "rpc/launch_contract.h"
#include "spdlog/spdlog.h"

namespace tony::cli {
namespace {

namespace fs = std::filesystem;

// The key that gave the job its (first) placement constraint, for messages: a type's own key,
// else the one every type takes (tony.containers.placement-spec).
std::string PlacementKey(const ValidatedJob& job) {
  if (!job.spec.application_placement.empty()) return "tony.application.placement-spec";
  for (const auto& [name, type] : job.spec.job_types) {
    if (type.placement.empty()) continue;
    const std::string own = StrCat("tony.", name, ".placement-spec");
    return StripWhitespace(job.resolved.conf.Get(own)).empty() ? "tony.containers.placement-spec"
                                                               : own;
  }
  return "";
}

// Holds gRPC initialized for as long as it lives. The submitting client's last channel, the one
// to the AM, closes as the job ends, and as gRPC's last user it would shut gRPC down there,
// joining its threads with pauses of 1 and 2 ms, while the user waits for the job's end; held up,
// gRPC goes with the process (ExitWithoutTeardown, once the client's own objects are gone). Made
// after the interrupt signals are blocked: its threads inherit the mask.
class GrpcHeldUp {
 public:
  GrpcHeldUp() { grpc_init(); }
  ~GrpcHeldUp() { grpc_shutdown(); }
  GrpcHeldUp(const GrpcHeldUp&) = delete;
  GrpcHeldUp& operator=(const GrpcHeldUp&) = delete;
};

int RunSubmitOnYarn(SubmitOptions& options, const ValidatedJob& job) {
  int exit_code = 0;
  std::unique_ptr<cluster::YarnClusterClient> cluster = ConnectYarnClient(
      job.spec.hadoop_conf_dirs, job.spec.keep_staging, job.spec.security, &exit_code);
  if (cluster == nullptr) return exit_code;
  std::map<std::string, cluster::ResourceAsk> asks{{"the AM", job.spec.am}};
  for (const auto& [name, type] : job.spec.job_types) {
    asks[StrCat("job type ", name)] = type.resources;
  }
  absl::Status fits = cluster->CheckFits(asks);
  if (fits.ok() && job.spec.mode == config::DistributedMode::kGang) {
    cluster::ResourceAsk total = job.spec.GangResources();
    total.memory_mb += job.spec.am.memory_mb;
    total.vcores += job.spec.am.vcores;
    total.gpus += job.spec.am.gpus;
    fits = cluster->CheckGangFits(total, job.spec.GangTasks() + 1);
  }
  if (!fits.ok()) {
    std::cerr << "tony: error: " << fits.message() << "\n";
    return fits.code() == absl::StatusCode::kResourceExhausted ? client::kExitBadInput
                                                               : client::kExitJobFailed;
  }
  if (job.spec.HasPlacement()) {
    if (absl::Status placement = cluster->CheckPlacementConstraints(); !placement.ok()) {
      std::cerr << "tony: error: " << PlacementKey(job) << ": " << placement.message() << "\n";
      return placement.code() == absl::StatusCode::kFailedPrecondition ? client::kExitBadInput
                                                                       : client::kExitJobFailed;
    }
  }
  client::SubmitContext context{options.request.working_dir, SelfExecutable(), std::nullopt};
  if (options.tee) {
    absl::StatusOr<history::HistoryStore> store = cluster->History(
        job.spec.history_location, job.spec.history_intermediate, job.spec.history_finished);
    if (!store.ok()) {
      std::cerr << "tony: error: --tee: " << store.status().message() << "\n";
      return client::kExitBadInput;
    }
    context.tee = *std::move(store);
  }
  client::BlockInterruptSignals();
  const GrpcHeldUp grpc;
  // --output json: stdout holds the JSON lines alone.
  if (options.json) context.json_out = &std::cout;
  int code = 0;
  {
    client::TonyClient tony(cluster.get(), options.json ? std::cerr : std::cout, std::cerr);
    code = tony.Submit(job.resolved, job.spec, context);
  }
  return ExitWithoutTeardown(code);
}

void SetUpRoleLogging(const std::string& role) {
  spdlog::set_pattern(StrCat("%Y-%m-%d %H:%M:%S.%e ", role, " %l: %v"));
  spdlog::flush_on(spdlog::level::info);
}

// YARN, the job's outputs on HDFS: how the executor copies a task's local output directory
// there, with the job's Hadoop configuration and the container's HDFS token of that NameNode read
// when it copies (fresh ones may have come meanwhile).
std::function<absl::Status(const std::string&)> OutputUploader(std::string uri,
                                                               std::string ca_pem) {
  return [uri = std::move(uri), ca_pem = std::move(ca_pem)](const std::string& local_dir) {
    std::error_code ec;
    const char* env_conf = std::getenv("HADOOP_CONF_DIR");
    const std::string conf_dir = fs::is_directory(cluster::kHadoopConfDir, ec)
                                     ? fs::absolute(cluster::kHadoopConfDir).string()
                                     : std::string(env_conf != nullptr ? env_conf : "");
    absl::StatusOr<hadoop::HadoopConf> conf = hadoop::HadoopConf::Load({conf_dir});
    if (!conf.ok()) return conf.status();
    std::vector<hadoop::Token> tokens;
    if (absl::StatusOr<hadoop::Credentials> credentials = ContainerCredentials();
        credentials.ok()) {
      for (const auto& [alias, token] : credentials->tokens()) tokens.push_back(token);
    }
    absl::StatusOr<hadoop::YarnUrl> url = hadoop::YarnUrl::Parse(uri);
    if (!url.ok()) return url.status();
    absl::StatusOr<std::unique_ptr<hadoop::WebHdfsClient>> hdfs = cluster::TaskHdfsClient(
        *conf, uri, tokens, hadoop::HadoopUser(), {ca_pem, "the client's truststore"});
    if (!hdfs.ok()) return hdfs.status();
    absl::StatusOr<cluster::UploadedTree> uploaded =
        cluster::UploadTree(**hdfs, local_dir, url->file);
    if (!uploaded.ok()) return uploaded.status();
    spdlog::info("saved the task's outputs to {}: {} files, {} bytes", uri, uploaded->files,
                 uploaded->bytes);
    if (!uploaded->skipped.empty()) {
      spdlog::warn("left out of the outputs (not regular files): {}",
                   Join(uploaded->skipped, ", "));
    }
    return absl::OkStatus();
  };
}

}  // namespace

std::string TonyHome() {
  if (const char* home = std::getenv("TONY_HOME"); home != nullptr && *home != '\0') return home;
  const char* user_home = std::getenv("HOME");
  return StrCat(user_home != nullptr ? user_home : "/tmp", "/.tony");
}

absl::StatusOr<history::HistoryStore> LocalHistoryStore(const std::string& location,
                                                        const std::string& intermediate,
                                                        const std::string& finished) {
  std::string root = location;
  if (root.starts_with("file://")) root = root.substr(7);
  if (!root.empty() && !root.starts_with("/")) {
    return absl::InvalidArgumentError(
        StrCat("tony.history.location '", location,
               "' is not a local directory (the local backend keeps history on this disk)"));
  }
  history::HistoryDirs dirs =
      history::DirsAt(root.empty() ? StrCat(TonyHome(), "/history") : root, intermediate, finished);
  // Every read stays beneath the store's directories, through no link (history_fs.h).
  return history::HistoryStore{history::LocalHistoryFs({dirs.intermediate, dirs.finished}),
                               std::move(dirs)};
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
    // A login the cluster refuses, configuration that names no principal or no address, or no
    // ResourceManager that answers (with HA: none active): nothing was started, the user's to
    // fix or to try again.
    const absl::StatusCode code = cluster.status().code();
    *exit_code = code == absl::StatusCode::kUnauthenticated ||
                         code == absl::StatusCode::kPermissionDenied ||
                         code == absl::StatusCode::kInvalidArgument ||
                         code == absl::StatusCode::kUnavailable ||
                         code == absl::StatusCode::kDeadlineExceeded
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
  if (job->spec.HasPlacement()) {
    std::cerr << "tony: warning: " << PlacementKey(*job)
              << " is for YARN's scheduler; the local backend runs every task on this machine\n";
  }
  const cluster::LocalCapacity capacity = cluster::ResolveLocalCapacity(job->spec.local);
  for (const auto& [name, type] : job->spec.job_types) {
    absl::Status fits =
        cluster::CheckFitsLocally(capacity, StrCat("job type ", name), type.resources);
    if (!fits.ok()) {
      std::cerr << "tony: error: " << fits.message() << "\n";
      return client::kExitBadInput;
    }
  }
  if (job->spec.mode == config::DistributedMode::kGang) {
    // In GANG mode every task must hold its container at once; on one machine a job that does
    // not fit as a whole would wait forever for the last container.
    absl::Status fits = cluster::CheckFitsLocally(
        capacity, StrCat("the job's ", job->spec.GangTasks(), " tasks together (GANG mode)"),
        job->spec.GangResources());
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
    if (absl::StatusOr<history::HistoryStore> store = LocalHistoryStore(
            job->spec.history_location, job->spec.history_intermediate, job->spec.history_finished);
        store.ok()) {
      absl::StatusOr<std::vector<history::ExpiredHistory>> old = history::FindExpiredHistory(
          *store->fs, store->dirs, job->spec.history_retention_sec, SystemClock::Get()->WallMs());
      if (old.ok()) {
        for (const history::ExpiredHistory& expired : *old) (void)store->fs->Remove(expired.dir);
      }
    }
  }
  // Before any thread exists, so that every thread inherits the mask.
  client::SubmitContext context{options.request.working_dir, SelfExecutable(), std::nullopt};
  if (options.tee) {
    absl::StatusOr<history::HistoryStore> store = LocalHistoryStore(
        job->spec.history_location, job->spec.history_intermediate, job->spec.history_finished);
    if (!store.ok()) {
      std::cerr << "tony: error: " << store.status().message() << "\n";
      return client::kExitBadInput;
    }
    context.tee = *std::move(store);
  }
  client::BlockInterruptSignals();
  const GrpcHeldUp grpc;
  if (options.json) context.json_out = &std::cout;
  int code = 0;
  {
    cluster::LocalClusterClient cluster(TonyHome());
    client::TonyClient tony(&cluster, options.json ? std::cerr : std::cout, std::cerr);
    code = tony.Submit(job->resolved, job->spec, context);
  }
  return ExitWithoutTeardown(code);
}

int RunAm() {
  am::LimitMallocArenas();
  SetUpRoleLogging("am");
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  absl::StatusOr<rpc::AmLaunch> launch = rpc::ReadAmLaunch();
  if (!launch.ok()) {
    std::cerr << "tony am: " << launch.status().message() << "\n";
    return 2;
  }
  const std::string& app_id = launch->app_id;
  const bool on_yarn = launch->on_yarn;
  if (on_yarn) {
    // The AM dies with the shell YARN launched its container with. Once that shell is gone the
    // container has ended for YARN, which may start the next attempt: an AM living on as an
    // orphan would run the job beside it and claim a final status that is no longer its own.
    const pid_t shell = getppid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != shell) return 1;  // it died before PR_SET_PDEATHSIG took effect
  }
  // Local: the job directory. YARN: the container's working directory, where the staged files
  // were localized.
  const char* job_dir_env = std::getenv("TONY_JOB_DIR");
  const std::string job_dir = job_dir_env != nullptr ? job_dir_env : fs::current_path().string();
  const std::string conf_file = StrCat(job_dir, "/", cluster::kFinalConfFile);
  if (absl::Status written = on_yarn ? WriteFinalConfFromContainer(conf_file) : absl::OkStatus();
      !written.ok()) {
    spdlog::error("cannot start: the job's configuration: {}", ToStd(written.message()));
    return 2;
  }
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
  } else if (launch->am_attempt > 0) {
    am_attempt = launch->am_attempt;
  }
  if (am_attempt > 1 || spec->am_retry_count > 0) {
    spdlog::info("[{}] AM attempt {} of at most {}", app_id, am_attempt, spec->am_retry_count + 1);
  }

  absl::StatusOr<AmBackend> backend =
      on_yarn ? YarnAmBackend(*launch, *spec) : LocalAmBackend(*launch, job_dir, *spec, am_attempt);
  if (!backend.ok()) {
    spdlog::error("[{}] cannot start: {}", app_id, ToStd(backend.status().message()));
    return 2;
  }
  am::AmOptions& options = backend->options;
  options.am_attempt = am_attempt;
  std::unique_ptr<cluster::ContainerAllocator>& allocator = backend->allocator;
  am::ApplicationMaster master(options, *spec, allocator.get(), SystemClock::Get());
  // Destroyed before `master`: a signal that comes as the AM exits (YARN stops the AM's container
  // at the end of every job) is dropped, never delivered to a destroyed AM.
  // Locally a signal to the AM is the user's, and kills the job. On YARN only the container's
  // owner signals the AM (the NodeManager stopping it: the application killed through the
  // ResourceManager, the container over its memory, the node going down): the ResourceManager
  // then decides how the attempt ended, and the AM claims nothing.
  SignalThread signals(stop, [&master, on_yarn](int sig) {
    const std::string why = StrCat("the AM received signal ", sig);
    if (on_yarn) {
      master.Abandon(why);
    } else {
      master.RequestKill(why);
    }
  });
  const int code = master.Run();
  // The job's end is recorded, the servers and the allocator are stopped, the containers gone.
  return master.Finished() ? ExitWithoutTeardown(code) : code;
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
  if (auto conf = secrets->find(cluster::kFinalConfSecret); conf != secrets->end()) {
    // YARN: the AM sent the job's configuration in the container's credentials.
    if (absl::Status written = WriteFinalConf(options->conf_file, conf->second); !written.ok()) {
      spdlog::error("the job's configuration: {}", ToStd(written.message()));
      return 2;
    }
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
  if (!options->am_address_webhdfs.empty() && !options->am_address_file.empty()) {
    // YARN: the next AM attempt's address is read beside the staged job, as the task's user, with
    // the container's HDFS token of the default file system (none without Kerberos).
    hadoop::WebHdfsAuth auth{hadoop::HadoopUser(), nullptr, std::nullopt};
    if (absl::StatusOr<hadoop::Credentials> credentials = ContainerCredentials();
        credentials.ok()) {
      for (const auto& [alias, token] : credentials->tokens()) {
        if (token.kind == hadoop::kHdfsDelegationTokenKind &&
            (options->am_address_webhdfs_token.empty() ||
             token.service == options->am_address_webhdfs_token)) {
          auth.delegation = token;
          break;
        }
      }
    }
    auto hdfs = std::make_shared<hadoop::WebHdfsClient>(options->am_address_webhdfs,
                                                        std::move(auth), /*timeout_ms=*/5000);
    if (auto ca = secrets->find(rpc::kWebHdfsCaAlias); ca != secrets->end()) {
      hdfs->SetTls({ca->second, "the client's truststore"});
    }
    options->read_am_address = [hdfs, path = options->am_address_file] { return hdfs->Open(path); };
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
  if (options->on_yarn && executor::OutputsUploaded(spec->output_dir)) {
    auto ca = secrets->find(rpc::kWebHdfsCaAlias);
    options->upload_outputs =
        OutputUploader(spec->output_dir, ca != secrets->end() ? ca->second : "");
  }
  executor::TaskExecutor task_executor(*std::move(options), *std::move(spec));
  // The task has ended and its end is reported.
  return ExitWithoutTeardown(task_executor.Run());
}

}  // namespace tony::cli
