#include "cli/app_commands.h"

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/roles.h"
#include "client/job_control.h"
#include "client/job_logs.h"
#include "client/tony_client.h"
#include "cluster/local/job_dir_retention.h"
#include "cluster/local/local_cluster_client.h"
#include "cluster/staging.h"
#include "cluster/yarn/yarn_cluster_client.h"
#include "common/clock.h"
#include "common/net.h"
#include "common/strings.h"
#include "config/job_spec.h"
#include "config/value_parsers.h"
#include "hadoop/yarn/yarn_client.h"
#include "history/history_format.h"
#include "history/history_reader.h"
#include "history/history_server.h"
#include "rpc/job_credentials.h"

namespace tony::cli {
namespace {

namespace fs = std::filesystem;

// "3 d", "5 h", "12 min", "40 s": how long a directory has been unchanged.
std::string Age(int64_t ms) {
  const int64_t s = ms / 1000;
  if (s >= int64_t{2} * 86400) return StrCat(s / 86400, " d");
  if (s >= int64_t{2} * 3600) return StrCat(s / 3600, " h");
  if (s >= int64_t{2} * 60) return StrCat(s / 60, " min");
  return StrCat(s, " s");
}

// The backend that runs jobs configured by `control`; nullptr after the one error line.
std::unique_ptr<cluster::ClusterClient> MakeClusterClient(const config::JobControlSpec& control,
                                                          int* exit_code) {
  if (control.backend == "yarn") {
    return ConnectYarnClient(control.hadoop_conf_dirs, control.keep_staging, control.security,
                             exit_code);
  }
  return std::make_unique<cluster::LocalClusterClient>(TonyHome());
}

// The keys of `conf` these commands read; nullopt after the one error line.
std::optional<config::JobControlSpec> ReadControlSpec(const config::Configuration& conf) {
  absl::StatusOr<config::JobControlSpec> control = config::BuildJobControlSpec(conf);
  if (!control.ok()) {
    std::cerr << "tony: error: " << control.status().message() << "\n";
    return std::nullopt;
  }
  return *std::move(control);
}

// The configuration from the command's flags, files and environment; nullopt after the error.
std::optional<config::Configuration> ResolveFromFlags(SubmitOptions& options) {
  CompleteFromEnvironment(&options);
  absl::StatusOr<config::ResolvedConfig> resolved = config::ResolveConfiguration(options.request);
  if (!resolved.ok()) {
    std::cerr << "tony: error: " << resolved.status().message() << "\n";
    return std::nullopt;
  }
  return std::move(resolved->conf);
}

// The jobs' history of the backend `control` names (tony.history.*): the local disk, or the
// cluster's HDFS (through `cluster`, or a client of its own when that is null). nullopt after the
// one error line.
std::optional<history::HistoryStore> HistoryStoreFor(const config::JobControlSpec& control,
                                                     cluster::ClusterClient* cluster,
                                                     int* exit_code) {
  if (control.backend != "yarn") {
    absl::StatusOr<history::HistoryStore> store = LocalHistoryStore(
        control.history_location, control.history_intermediate, control.history_finished);
    if (!store.ok()) {
      std::cerr << "tony: error: " << store.status().message() << "\n";
      *exit_code = client::kExitBadInput;
      return std::nullopt;
    }
    return *std::move(store);
  }
  std::unique_ptr<cluster::YarnClusterClient> own;
  auto* yarn = dynamic_cast<cluster::YarnClusterClient*>(cluster);
  if (yarn == nullptr) {
    own = ConnectYarnClient(control.hadoop_conf_dirs, control.keep_staging, control.security,
                            exit_code);
    if (own == nullptr) return std::nullopt;
    yarn = own.get();
  }
  absl::StatusOr<history::HistoryStore> store = yarn->History(
      control.history_location, control.history_intermediate, control.history_finished);
  if (!store.ok()) {
    std::cerr << "tony: error: " << store.status().message() << "\n";
    *exit_code = client::kExitBadInput;
    return std::nullopt;
  }
  return *std::move(store);
}

// What both commands need: the job's configuration, its secret where this machine has it, and
// the backend it runs on.
struct Target {
  config::Configuration conf;
  client::JobControlOptions control;
  std::unique_ptr<cluster::ClusterClient> cluster;
};

// nullopt after printing the one error line; *exit_code then says how it ended.
std::optional<Target> Resolve(AppCommandOptions& options, int* exit_code) {
  *exit_code = client::kExitBadInput;
  if (!hadoop::ApplicationId::Parse(options.app_id).ok()) {
    std::cerr << "tony: error: '" << options.app_id
              << "' is not an application id (application_<cluster timestamp>_<number>)\n";
    return std::nullopt;
  }
  Target target;
  target.control.app_id = options.app_id;
  const std::string job_dir = StrCat(TonyHome(), "/jobs/", options.app_id);
  const std::string final_conf = StrCat(job_dir, "/", cluster::kFinalConfFile);
  std::error_code ec;
  if (fs::exists(final_conf, ec)) {
    absl::StatusOr<config::Configuration> conf = LoadFinalConf(final_conf);
    if (!conf.ok()) {
      std::cerr << "tony: error: " << conf.status().message() << "\n";
      return std::nullopt;
    }
    target.conf = *std::move(conf);
    for (const std::string& pair : options.submit.request.conf) {  // e.g. the cluster's conf path
      const size_t eq = pair.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::cerr << "tony: error: --conf \"" << pair << "\": expected key=value\n";
        return std::nullopt;
      }
      target.conf.Set(pair.substr(0, eq), pair.substr(eq + 1), config::ValueSource::ConfFlag());
    }
    if (options.submit.request.flags.backend) {
      target.conf.Set("tony.application.backend", *options.submit.request.flags.backend,
                      config::ValueSource::ConfFlag());
    }
    if (absl::StatusOr<rpc::JobCredentials> credentials = rpc::ReadJobCredentials(job_dir);
        credentials.ok()) {
      target.control.credentials = *std::move(credentials);
    }
  } else {
    std::optional<config::Configuration> conf = ResolveFromFlags(options.submit);
    if (!conf) return std::nullopt;
    target.conf = *std::move(conf);
  }
  std::optional<config::JobControlSpec> control = ReadControlSpec(target.conf);
  if (!control) return std::nullopt;
  target.control.stop_grace_ms = control->stop_grace_ms;

  target.cluster = MakeClusterClient(*control, exit_code);
  if (target.cluster == nullptr) return std::nullopt;
  return target;
}

}  // namespace

namespace {

void AddBackendAndConf(CLI::App* app, SubmitOptions* options, const std::string& backend_help) {
  app->add_option_function<std::string>(
      "--backend", [options](const std::string& value) { options->request.flags.backend = value; },
      backend_help);
  app->add_option("--conf", options->request.conf, "key=value (repeatable)");
}

}  // namespace

void AddAppCommandFlags(CLI::App* app, AppCommandOptions* options) {
  app->add_option("app_id", options->app_id, "The application id tony submit printed")->required();
  AddBackendAndConf(app, &options->submit,
                    "local or yarn, for a job this machine did not submit (else the job's own)");
}

void AddListFlags(CLI::App* app, ListOptions* options) {
  app->add_flag("--all", options->all, "Ended jobs too");
  AddOutputFlag(app, &options->json, "text (default), or json: the jobs as one JSON array");
  AddBackendAndConf(app, &options->submit, "local (default) or yarn");
}

int RunListCommand(ListOptions& options) {
  std::optional<config::Configuration> conf = ResolveFromFlags(options.submit);
  if (!conf) return client::kExitBadInput;
  std::optional<config::JobControlSpec> control = ReadControlSpec(*conf);
  if (!control) return client::kExitBadInput;
  int code = 0;
  std::unique_ptr<cluster::ClusterClient> cluster = MakeClusterClient(*control, &code);
  if (cluster == nullptr) return code;
  return client::ListJobs(*cluster, control->application_type, options.all, options.json, std::cout,
                          std::cerr);
}

void AddGcFlags(CLI::App* app, GcOptions* options) {
  app->add_flag("--dry-run", options->dry_run, "List what would be removed; remove nothing");
  app->add_flag("--outputs", options->outputs,
                "Remove the expired jobs' outputs/ too (kept otherwise)");
  app->add_option("--conf", options->submit.request.conf,
                  "key=value (repeatable), e.g. tony.history.retention-sec=86400");
}

int RunGcCommand(GcOptions& options) {
  std::optional<config::Configuration> conf = ResolveFromFlags(options.submit);
  if (!conf) return client::kExitBadInput;
  std::optional<config::JobControlSpec> control = ReadControlSpec(*conf);
  if (!control) return client::kExitBadInput;
  const int64_t retention_sec = control->history_retention_sec;
  cluster::JobDirRetention retention(TonyHome(), retention_sec, SystemClock::Get(),
                                     options.outputs);
  if (retention.KeepsForever()) {
    std::cout << "tony.history.retention-sec is " << retention_sec
              << ": job directories are kept forever\n";
    return 0;
  }
  std::vector<cluster::ExpiredJobDir> expired = retention.FindExpired();
  // The local history's ended jobs too (tony history purges a cluster's while it runs), and the
  // history a local job's AM left in the intermediate directory when it died: ended once its job
  // directory here says so.
  std::vector<history::ExpiredHistory> old_history;
  absl::StatusOr<history::HistoryStore> store = LocalHistoryStore(
      control->history_location, control->history_intermediate, control->history_finished);
  if (store.ok()) {
    auto ended = [](const std::string& app_id) {
      const std::string job_dir = StrCat(TonyHome(), "/jobs/", app_id);
      std::error_code ec;
      return std::filesystem::is_directory(job_dir, ec) &&
             std::filesystem::exists(StrCat(job_dir, "/", cluster::kFinalConfFile), ec) &&
             cluster::JobEndedBecause(job_dir).has_value();
    };
    absl::StatusOr<std::vector<history::ExpiredHistory>> found = history::FindExpiredHistory(
        *store->fs, store->dirs, retention_sec, SystemClock::Get()->WallMs(), ended);
    if (found.ok()) old_history = *std::move(found);
  }
  if (expired.empty() && old_history.empty()) {
    std::cout << "nothing to remove: no ended job under " << retention.jobs_dir() << " older than "
              << retention_sec << " s (tony.history.retention-sec)\n";
    return 0;
  }
  int code = 0;
  for (const history::ExpiredHistory& job : old_history) {
    const std::string why = StrCat(" (history; unchanged for ", Age(job.age_ms), ")");
    if (options.dry_run) {
      std::cout << "would remove " << job.dir << why << "\n";
    } else if (absl::Status removed = store->fs->Remove(job.dir); removed.ok()) {
      std::cout << "removed " << job.dir << why << "\n";
    } else {
      std::cerr << "tony: error: " << removed.message() << "\n";
      code = client::kExitJobFailed;
    }
  }
  for (const cluster::ExpiredJobDir& dir : expired) {
    const std::string why = StrCat(
        " (", dir.ended_because, "; unchanged for ", Age(dir.age_ms),
        dir.keeps_outputs ? StrCat("; keeping its outputs, ", dir.path, "/outputs") : "", ")");
    if (options.dry_run) {
      std::cout << "would remove " << dir.path << why << "\n";
    } else if (absl::Status removed = retention.Remove(dir); removed.ok()) {
      std::cout << "removed " << dir.path << why << "\n";
    } else {
      std::cerr << "tony: error: " << removed.message() << "\n";
      code = client::kExitJobFailed;
    }
  }
  return code;
}

void AddLogsFlags(CLI::App* app, LogsCommandOptions* options) {
  AddAppCommandFlags(app, &options->app);
  app->add_option("--task", options->task, "Only this task's output (TYPE:INDEX, e.g. worker:0)");
  app->add_flag("--stderr", options->stderr_only, "Its stderr instead of its stdout");
  app->add_flag("--all", options->all, "Its stdout and its stderr");
  app->add_flag("--follow,-f", options->follow,
                "Print new output as the tasks print it, until the job ends");
}

int RunLogsCommand(LogsCommandOptions& options) {
  client::LogsOptions logs;
  if (!options.task.empty()) {
    absl::StatusOr<config::TaskRef> task = client::ParseTaskFlag(options.task);
    if (!task.ok()) {
      std::cerr << "tony: error: " << task.status().message() << "\n";
      return client::kExitBadInput;
    }
    logs.task = *task;
  }
  if (options.stderr_only && options.all) {
    std::cerr << "tony: error: --stderr and --all exclude each other\n";
    return client::kExitBadInput;
  }
  logs.app_id = options.app.app_id;
  logs.stdout_stream = !options.stderr_only;
  logs.stderr_stream = options.stderr_only || options.all;
  logs.follow = options.follow;
  int code = 0;
  std::optional<Target> target = Resolve(options.app, &code);
  if (!target) return code;
  std::optional<config::JobControlSpec> control = ReadControlSpec(target->conf);
  if (!control) return client::kExitBadInput;
  std::optional<history::HistoryStore> store =
      HistoryStoreFor(*control, target->cluster.get(), &code);
  if (!store) return code;
  return client::ShowLogs(*store->fs, store->dirs, logs, std::cout, std::cerr);
}

void AddHistoryFlags(CLI::App* app, HistoryCommandOptions* options) {
  AddBackendAndConf(app, &options->submit,
                    "Whose history: local (this machine's) or yarn (the cluster's HDFS)");
  app->add_option("--port", options->port, "Port to serve on (0 picks a free one)");
  app->add_option("--host", options->host,
                  "Address to listen on (127.0.0.1: only this machine; the history holds the "
                  "jobs' output and configuration)");
}

int RunHistoryCommand(HistoryCommandOptions& options) {
  std::optional<config::Configuration> conf = ResolveFromFlags(options.submit);
  if (!conf) return client::kExitBadInput;
  std::optional<config::JobControlSpec> control = ReadControlSpec(*conf);
  if (!control) return client::kExitBadInput;
  int code = 0;
  std::optional<history::HistoryStore> store = HistoryStoreFor(*control, nullptr, &code);
  if (!store) return code;
  absl::StatusOr<int64_t> purge_ms = config::ParseInt(conf->Get("tony.history.purger-interval-ms"));
  if (!purge_ms.ok() || *purge_ms <= 0) {
    std::cerr << "tony: error: tony.history.purger-interval-ms must be a positive number of "
                 "milliseconds\n";
    return client::kExitBadInput;
  }
  client::BlockInterruptSignals();
  history::HistoryServer server;
  history::HistoryServerOptions server_options;
  server_options.store = *store;
  server_options.host = options.host;
  server_options.port = options.port;
  server_options.retention_sec = control->history_retention_sec;
  server_options.purge_interval_ms = *purge_ms;
  absl::StatusOr<int> port = server.Start(server_options);
  if (!port.ok()) {
    std::cerr << "tony: error: " << port.status().message() << "\n";
    return client::kExitBadInput;
  }
  std::cout << "tony: history of " << store->fs->Describe(store->dirs.finished) << " at http://"
            << HostForAddress(options.host) << ":" << *port << "/ (Ctrl-C stops it)\n"
            << std::flush;
  client::WaitForInterrupt();
  server.Stop();
  return 0;
}

int RunStatusCommand(AppCommandOptions& options) {
  int code = 0;
  std::optional<Target> target = Resolve(options, &code);
  if (!target) return code;
  target->control.json = options.json;
  // An ended job's task table from its history where the backend keeps none (YARN).
  if (std::optional<config::JobControlSpec> control = ReadControlSpec(target->conf)) {
    target->control.recorded_job_json = [control = *control, cluster = target->cluster.get(),
                                         app_id = options.app_id]() -> std::optional<std::string> {
      auto* yarn = dynamic_cast<cluster::YarnClusterClient*>(cluster);
      absl::StatusOr<history::HistoryStore> store =
          yarn != nullptr
              ? yarn->History(control.history_location, control.history_intermediate,
                              control.history_finished)
              : LocalHistoryStore(control.history_location, control.history_intermediate,
                                  control.history_finished);
      if (!store.ok()) return std::nullopt;
      absl::StatusOr<history::JobLocation> job = history::FindJob(*store->fs, store->dirs, app_id);
      if (!job.ok()) return std::nullopt;
      absl::StatusOr<std::string> text =
          store->fs->Read(StrCat(job->dir, "/", history::kJobFile), 0, int64_t{16} << 20);
      if (!text.ok()) return std::nullopt;
      return *std::move(text);
    };
  }
  return client::ShowJob(*target->cluster, target->control, std::cout, std::cerr);
}

int RunKillCommand(AppCommandOptions& options) {
  int code = 0;
  std::optional<Target> target = Resolve(options, &code);
  if (!target) return code;
  return client::KillJob(*target->cluster, target->control, std::cout, std::cerr);
}

}  // namespace tony::cli
