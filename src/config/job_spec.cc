#include "config/job_spec.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <set>

#include "common/strings.h"
#include "config/config_reader.h"
#include "config/job_spec_checks.h"
#include "config/key_catalog.h"
#include "config/key_names.h"
#include "config/value_parsers.h"
#include "re2/re2.h"

namespace tony::config {
namespace {

// Names under tony.* that are namespaces of tony itself, never job types.
const std::set<std::string, std::less<>>& ReservedNames() {
  static const auto* names =
      new std::set<std::string, std::less<>>{"application",   "am",
                                             "task",          "containers",
                                             "container",     "execution",
                                             "docker",        "history",
                                             "portal",        "local",
                                             "yarn",          "horovod",
                                             "other",         "python-exec-path",
                                             "gpu-exec-path", "keytab",
                                             "https",         "http",
                                             "secret"};
  return *names;
}

// Job types: every <t> with a tony.<t>.instances key, in name order.
absl::StatusOr<std::vector<std::string>> DiscoverJobTypes(const Reader& reader,
                                                          const Configuration& conf) {
  std::vector<std::string> types;
  for (const auto& [key, entry] : conf.entries()) {
    std::optional<std::string_view> type = JobTypeOfInstancesKey(key);
    if (!type) {
      // tony.<name>.instances with a name no job type may have ("a/b", "x y", "-x", "a;b", a
      // line break): a job type the user meant, which would otherwise silently not run.
      constexpr std::string_view kPrefix = "tony.", kSuffix = ".instances";
      if (key.size() > kPrefix.size() + kSuffix.size() && key.starts_with(kPrefix) &&
          key.ends_with(kSuffix)) {
        const std::string_view name(key.data() + kPrefix.size(),
                                    key.size() - kPrefix.size() - kSuffix.size());
        if (name.find('.') == std::string_view::npos) {
          return reader.Error(key,
                              "the job type in this key is not a valid name (lowercase "
                              "letters, digits, '_' and '-', starting with a letter)");
        }
      }
      continue;
    }
    if (ReservedNames().count(*type)) continue;
    if (type->size() > kMaxJobTypeNameLength) {
      return reader.Error(
          key, StrCat("the job type name is ", type->size(), " characters long; at most ",
                      kMaxJobTypeNameLength, " are allowed"));
    }
    types.emplace_back(*type);
  }
  return types;
}

// `common_resources`: tony.containers.resources, split once for every type.
absl::Status ReadJobType(const Reader& reader, const std::string& type,
                         const std::vector<std::string>& common_resources, JobSpec* spec,
                         JobTypeSpec* out) {
  out->name = type;
  int64_t value = 0;
  TONY_ASSIGN_OR_RETURN(value, reader.JobTypeInt(type, "instances", 0));
  if (value > 100000) {
    return reader.Error(StrCat("tony.", type, ".instances"), "more than 100000 tasks");
  }
  out->instances = static_cast<int>(value);
  const std::string memory_key = StrCat("tony.", type, ".memory");
  TONY_ASSIGN_OR_RETURN(out->resources.memory_mb,
                        reader.Memory(memory_key, reader.JobTypeValue(type, "memory")));
  TONY_ASSIGN_OR_RETURN(value, reader.JobTypeInt(type, "vcores", 1));
  out->resources.vcores = static_cast<int>(value);
  TONY_ASSIGN_OR_RETURN(value, reader.JobTypeInt(type, "gpus", 0));
  out->resources.gpus = static_cast<int>(value);
  TONY_ASSIGN_OR_RETURN(value, reader.JobTypeInt(type, "max-instances", -1));
  if (value >= 0 && out->instances > value) {
    return reader.Error(StrCat("tony.", type, ".instances"),
                        StrCat("more than tony.", type, ".max-instances = ", value));
  }
  TONY_ASSIGN_OR_RETURN(value, reader.JobTypeInt(type, "max-restarts", 0));
  out->max_restarts = static_cast<int>(value);
  TONY_ASSIGN_OR_RETURN(out->restart_backoff_ms, reader.JobTypeInt(type, "restart-backoff-ms", 0));
  for (const std::string& code : SplitList(reader.JobTypeValue(type, "transient-exit-codes"))) {
    const std::string key = StrCat("tony.", type, ".transient-exit-codes");
    absl::StatusOr<int64_t> parsed = ParseInt(code);
    if (!parsed.ok() || *parsed < 1 || *parsed > 255) {
      return reader.Error(key, StrCat("'", code, "' is not an exit code from 1 to 255"));
    }
    out->transient_exit_codes.insert(static_cast<int>(*parsed));
  }

  if (std::string growth(StripWhitespace(reader.JobTypeValue(type, "memory-growth")));
      !growth.empty()) {
    const std::string key = StrCat("tony.", type, ".memory-growth");
    char* end = nullptr;
    errno = 0;
    const double parsed = std::strtod(growth.c_str(), &end);
    if (end != growth.c_str() + growth.size() || errno != 0 || !(parsed >= 1.0 && parsed <= 16.0)) {
      return reader.Error(key, "expected a factor from 1 to 16, e.g. 1.5");
    }
    out->memory_growth = parsed;
  }

  out->progress_pattern = reader.JobTypeValue(type, "progress-pattern");
  if (!out->progress_pattern.empty()) {
    const std::string key = StrCat("tony.", type, ".progress-pattern");
    const re2::RE2 pattern(out->progress_pattern, re2::RE2::Quiet);
    if (!pattern.ok()) {
      return reader.Error(key, StrCat("not a regular expression: ", pattern.error()));
    }
    if (!pattern.NamedCapturingGroups().contains("step")) {
      return reader.Error(key, "has no named group 'step', as in 'step (?P<step>\\d+)'");
    }
  }

  out->command = reader.JobTypeValue(type, "command");
  if (out->command.empty()) out->command = reader.String("tony.containers.command");
  out->localized_resources = SplitList(reader.JobTypeValue(type, "resources"));
  out->localized_resources.insert(out->localized_resources.end(), common_resources.begin(),
                                  common_resources.end());
  out->node_label = reader.JobTypeValue(type, "node-label");
  if (out->node_label.empty()) out->node_label = spec->node_label;
  return absl::OkStatus();
}

absl::StatusOr<LocalBackendSpec> ReadLocalBackend(const Reader& reader) {
  LocalBackendSpec local;
  if (std::string memory = reader.String("tony.local.memory"); !StripWhitespace(memory).empty()) {
    TONY_ASSIGN_OR_RETURN(local.memory_mb, reader.Memory("tony.local.memory", memory));
  }
  int64_t value = 0;
  if (!StripWhitespace(reader.String("tony.local.vcores")).empty()) {
    TONY_ASSIGN_OR_RETURN(value, reader.Int("tony.local.vcores", 1));
    if (value > INT32_MAX) return reader.Error("tony.local.vcores", "too large");
    local.vcores = static_cast<int>(value);
  }
  if (!StripWhitespace(reader.String("tony.local.gpus")).empty()) {
    TONY_ASSIGN_OR_RETURN(value, reader.Int("tony.local.gpus", 0));
    if (value > 1024) return reader.Error("tony.local.gpus", "more than 1024 GPUs");
    local.gpus = static_cast<int>(value);
  }
  TONY_ASSIGN_OR_RETURN(local.memory_check_interval_ms,
                        reader.Int("tony.local.memory-check-interval-ms", 1));
  TONY_ASSIGN_OR_RETURN(local.enforce_memory, reader.Bool("tony.local.enforce-memory"));
  TONY_ASSIGN_OR_RETURN(local.keep_work_dirs_on_failure,
                        reader.Bool("tony.local.keep-work-dirs-on-failure"));
  return local;
}

// framework=horovod. The AM serves Horovod's rendezvous itself and the job has no driver, unless
// tony.horovod.driver.mode.debug asks for TonY's debug mode: then a driver task of the user's
// (tony.driver.command) runs the rendezvous, never tracked, and its failure fails the job.
absl::Status ApplyHorovod(const Reader& reader, const std::vector<std::string>& common_resources,
                          JobSpec* spec) {
  if (spec->framework != "horovod") return absl::OkStatus();
  constexpr std::string_view kDebugKey = "tony.horovod.driver.mode.debug";
  TONY_ASSIGN_OR_RETURN(spec->horovod_debug_driver, reader.Bool(kDebugKey));
  if (spec->mode != DistributedMode::kGang) {
    return reader.Error("tony.application.distributed-mode",
                        "Horovod's workers rendezvous all together: it needs GANG");
  }
  if (!spec->horovod_debug_driver) {
    if (spec->job_types.count(kHorovodDriverType)) {
      return reader.Error("tony.driver.instances",
                          StrCat("tony serves Horovod's rendezvous itself; a driver task of your "
                                 "own needs ",
                                 kDebugKey, " = true"));
    }
    return absl::OkStatus();
  }
  auto [it, added] = spec->job_types.try_emplace(kHorovodDriverType);
  JobTypeSpec& driver = it->second;
  if (added) {
    if (absl::Status s = ReadJobType(reader, kHorovodDriverType, common_resources, spec, &driver);
        !s.ok()) {
      return s;
    }
    driver.instances = 1;
  }
  if (driver.instances != 1) {
    return reader.Error("tony.driver.instances", "a Horovod job has one driver");
  }
  if (reader.JobTypeValue(kHorovodDriverType, "command").empty()) {
    return reader.Error(
        "tony.driver.command",
        StrCat("the command of your Horovod driver is required with ", kDebugKey, " = true"));
  }
  driver.role = JobTypeRole::kUntracked;
  driver.stop_on_failure = true;
  driver.stop_on_failure_reason = "the workers' rendezvous runs in the Horovod driver";
  return absl::OkStatus();
}

// The application's identity, scheduling and framework.
absl::Status ReadApplication(const Reader& reader, JobSpec* spec) {
  spec->queue = reader.String("tony.yarn.queue");
  if (!StripWhitespace(reader.String("tony.yarn.priority")).empty()) {
    int64_t priority = 0;
    TONY_ASSIGN_OR_RETURN(priority, reader.Int("tony.yarn.priority", 0));
    if (priority > INT32_MAX) return reader.Error("tony.yarn.priority", "too large");
    spec->priority = static_cast<int32_t>(priority);
  }
  spec->tags = SplitList(reader.String("tony.application.tags"));
  spec->node_label = reader.String("tony.application.node-label");

  spec->framework = ToLower(reader.String("tony.application.framework"));
  const auto& frameworks = KnownFrameworks();
  if (std::find(frameworks.begin(), frameworks.end(), spec->framework) == frameworks.end()) {
    return reader.Error("tony.application.framework",
                        StrCat("unknown framework; expected one of ", Join(frameworks, ", ")));
  }
  const std::string mode = ToUpper(reader.String("tony.application.distributed-mode"));
  if (mode == "GANG") {
    spec->mode = DistributedMode::kGang;
  } else if (mode == "FCFS") {
    spec->mode = DistributedMode::kFcfs;
  } else {
    return reader.Error("tony.application.distributed-mode", "expected GANG or FCFS");
  }
  return absl::OkStatus();
}

// tony.application.output-dir: a local path (file:///<path> is one too) or an hdfs:// or
// viewfs:// URI; a URI only on YARN, and on YARN a local path only as file://, so that a path
// meant for HDFS is never taken for one on each node's disk.
absl::Status ReadOutputDir(const Reader& reader, JobSpec* spec) {
  constexpr char kKey[] = "tony.application.output-dir";
  std::string dir(StripWhitespace(reader.String(kKey)));
  const size_t scheme_end = dir.find("://");
  const std::string scheme =
      scheme_end == std::string::npos ? "" : ToLower(dir.substr(0, scheme_end));
  const bool yarn = spec->backend == "yarn";
  if (scheme == "hdfs" || scheme == "viewfs") {
    if (!yarn) {
      return reader.Error(kKey, StrCat(scheme,
                                       ":// outputs need the yarn backend; the local backend "
                                       "writes them to a local path"));
    }
  } else if (scheme == "file") {
    dir.erase(0, scheme_end + 3);
    if (!dir.starts_with('/')) return reader.Error(kKey, "expected file:///<absolute path>");
  } else if (!scheme.empty()) {
    return reader.Error(kKey, "expected a local path, or an hdfs:// or viewfs:// URI");
  } else if (yarn && !dir.empty()) {
    return reader.Error(kKey,
                        "a path without a scheme is ambiguous on YARN: name hdfs://<path> (or "
                        "viewfs://), or file://<path> for a directory on every node's disk");
  }
  spec->output_dir = std::move(dir);
  return absl::OkStatus();
}

// What job_control_spec reads for every command, and the history server's URL.
absl::Status ApplyControl(const Reader& reader, const Configuration& conf, JobSpec* spec) {
  JobControlSpec control;
  TONY_ASSIGN_OR_RETURN(control, BuildJobControlSpec(conf));
  spec->name = std::move(control.name);
  spec->application_type = std::move(control.application_type);
  spec->backend = std::move(control.backend);
  spec->keep_staging = control.keep_staging;
  spec->stop_grace_ms = control.stop_grace_ms;
  spec->history_retention_sec = control.history_retention_sec;
  spec->history_location = std::move(control.history_location);
  spec->history_intermediate = std::move(control.history_intermediate);
  spec->history_finished = std::move(control.history_finished);
  spec->history_max_log_bytes = control.history_max_log_bytes;
  spec->history_url = std::string(StripWhitespace(reader.String("tony.history.url")));
  if (spec->history_url.empty()) {
    spec->history_url = std::string(StripWhitespace(reader.String("tony.portal.url")));
  }
  if (!spec->history_url.empty() && !spec->history_url.starts_with("http://") &&
      !spec->history_url.starts_with("https://")) {
    return reader.Error(
        !reader.String("tony.history.url").empty() ? "tony.history.url" : "tony.portal.url",
        "expected an http:// or https:// URL of the history server");
  }
  while (spec->history_url.ends_with('/')) spec->history_url.pop_back();
  spec->hadoop_conf_dirs = std::move(control.hadoop_conf_dirs);
  spec->security = std::move(control.security);
  return ReadOutputDir(reader, spec);
}

// The AM's resources, the AM's and the tasks' timeouts, heartbeats, metrics and environment.
absl::Status ReadTimingAndEnvironment(const Reader& reader, JobSpec* spec) {
  int64_t value = 0;
  TONY_ASSIGN_OR_RETURN(spec->am.memory_mb,
                        reader.Memory("tony.am.memory", reader.String("tony.am.memory")));
  TONY_ASSIGN_OR_RETURN(value, reader.Int("tony.am.vcores", 1));
  spec->am.vcores = static_cast<int>(value);
  TONY_ASSIGN_OR_RETURN(value, reader.Int("tony.am.gpus", 0));
  spec->am.gpus = static_cast<int>(value);

  TONY_ASSIGN_OR_RETURN(spec->fail_on_worker_failure,
                        reader.Bool("tony.application.fail-on-worker-failure-enabled"));
  TONY_ASSIGN_OR_RETURN(spec->application_timeout_ms, reader.Int("tony.application.timeout", 0));
  TONY_ASSIGN_OR_RETURN(spec->am_startup_timeout_ms, reader.Int("tony.am.startup-timeout", 0));
  TONY_ASSIGN_OR_RETURN(spec->am_tls, reader.Bool("tony.am.tls.enabled"));
  spec->am_bind_host = std::string(StripWhitespace(reader.String("tony.am.bind-host")));
  TONY_ASSIGN_OR_RETURN(value, reader.Int("tony.am.retry-count", 0));
  if (value > 100) return reader.Error("tony.am.retry-count", "at most 100");
  spec->am_retry_count = static_cast<int>(value);
  TONY_ASSIGN_OR_RETURN(spec->am_recovery_timeout_ms, reader.Int("tony.am.recovery-timeout-ms", 1));
  TONY_ASSIGN_OR_RETURN(spec->wait_client_ms,
                        reader.SecondsAsMs("tony.am.wait-client-signal-stop-timeout-sec"));
  TONY_ASSIGN_OR_RETURN(spec->allocation_timeout_ms,
                        reader.Int("tony.container.allocation.timeout", -1));
  TONY_ASSIGN_OR_RETURN(spec->registration_timeout_ms,
                        reader.Int("tony.container.registration.timeout", -1));
  TONY_ASSIGN_OR_RETURN(spec->execution_timeout_ms,
                        reader.Int("tony.task.executor.execution-timeout-ms", 0));
  TONY_ASSIGN_OR_RETURN(spec->hang_timeout_ms, reader.Int("tony.task.hang-timeout-ms", 0));
  TONY_ASSIGN_OR_RETURN(spec->straggler_steps, reader.Int("tony.task.straggler-steps", 0));
  TONY_ASSIGN_OR_RETURN(value, reader.Int("tony.application.max-gang-restarts", -1));
  if (value > 1000000) return reader.Error("tony.application.max-gang-restarts", "too large");
  spec->max_gang_restarts = static_cast<int>(value);
  spec->checkpoint_dir =
      std::string(StripWhitespace(reader.String("tony.application.checkpoint-dir")));
  TONY_ASSIGN_OR_RETURN(spec->registry_timeout_ms,
                        reader.SecondsAsMs("tony.task.executor.registry-timeout-sec"));
  TONY_ASSIGN_OR_RETURN(spec->heartbeat_interval_ms,
                        reader.Int("tony.task.heartbeat-interval-ms", 1));
  TONY_ASSIGN_OR_RETURN(spec->metrics_interval_ms, reader.Int("tony.task.metrics-interval-ms", 1));
  TONY_ASSIGN_OR_RETURN(value, reader.Int("tony.task.max-missed-heartbeats", 1));
  spec->max_missed_heartbeats = static_cast<int>(value);
  TONY_ASSIGN_OR_RETURN(value,
                        reader.Int("tony.task.executor.execution.error-message-max-depth", 0));
  spec->error_message_max_lines = static_cast<int>(value);
  TONY_ASSIGN_OR_RETURN(spec->gpu_metrics, reader.Bool("tony.task.gpu-metrics.enabled"));
  TONY_ASSIGN_OR_RETURN(spec->task_sandbox, reader.Bool("tony.task.sandbox"));
  spec->gpu_exec_path = std::string(StripWhitespace(reader.String("tony.gpu-exec-path")));
  if (spec->gpu_exec_path.empty()) spec->gpu_exec_path = "nvidia-smi";

  TONY_ASSIGN_OR_RETURN(spec->container_envs, reader.Envs("tony.containers.envs"));
  TONY_ASSIGN_OR_RETURN(spec->execution_envs, reader.Envs("tony.execution.envs"));
  spec->python_venv = reader.String("tony.application.python-venv");
  spec->src_dir = reader.String("tony.application.src-dir");
  spec->python_exec_path = reader.String("tony.python-exec-path");
  spec->executes = reader.String("tony.application.executes");
  TONY_ASSIGN_OR_RETURN(spec->local, ReadLocalBackend(reader));

  return absl::OkStatus();
}

// With tony.docker.enabled: YARN's container runtime variables for the type's containers.
absl::Status ApplyDocker(const Reader& reader, const JobSpec& spec, JobTypeSpec* type) {
  bool docker = false;
  TONY_ASSIGN_OR_RETURN(docker, reader.Bool("tony.docker.enabled"));
  if (!docker) return absl::OkStatus();
  if (spec.backend != "yarn") {
    return reader.Error("tony.docker.enabled",
                        "Docker containers need the YARN backend (--backend yarn)");
  }
  std::string image = reader.String(StrCat("tony.docker.", type->name, ".image"));
  if (image.empty()) image = reader.String("tony.docker.containers.image");
  if (image.empty()) {
    return reader.Error("tony.docker.enabled",
                        StrCat("no image for job type ", type->name, ": set tony.docker.",
                               type->name, ".image or tony.docker.containers.image"));
  }
  type->docker_env["YARN_CONTAINER_RUNTIME_TYPE"] = "docker";
  type->docker_env["YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"] = image;
  if (std::string mounts = reader.String("tony.docker.containers.mount"); !mounts.empty()) {
    type->docker_env["YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"] = mounts;
  }
  return absl::OkStatus();
}

// The job types with their roles, Docker images, single-node mode and TonY's TensorBoard sidecar.
absl::Status ReadJobTypes(const Reader& reader, const Configuration& conf, JobSpec* spec) {
  // Sets, so that many job types against long lists stay O(n log n).
  auto name_set = [&](std::string_view key) {
    std::vector<std::string> list = SplitList(reader.String(key));
    return std::set<std::string, std::less<>>(std::make_move_iterator(list.begin()),
                                              std::make_move_iterator(list.end()));
  };
  const auto untracked = name_set("tony.application.untracked.jobtypes");
  const auto sidecars = name_set("tony.application.sidecar.jobtypes");
  const auto stop_on_failure = name_set("tony.application.stop-on-failure-jobtypes");
  const std::vector<std::string> common_resources =
      SplitList(reader.String("tony.containers.resources"));

  std::vector<std::string> types;
  TONY_ASSIGN_OR_RETURN(types, DiscoverJobTypes(reader, conf));
  for (const std::string& type : types) {
    JobTypeSpec job_type;
    if (absl::Status s = ReadJobType(reader, type, common_resources, spec, &job_type); !s.ok()) {
      return s;
    }
    if (job_type.instances == 0) continue;
    job_type.role = sidecars.count(type)    ? JobTypeRole::kSidecar
                    : untracked.count(type) ? JobTypeRole::kUntracked
                                            : JobTypeRole::kTracked;
    job_type.stop_on_failure = stop_on_failure.count(type) > 0;
    spec->job_types.emplace(type, std::move(job_type));
  }

  for (auto& [name, type] : spec->job_types) {
    if (absl::Status s = ApplyDocker(reader, *spec, &type); !s.ok()) return s;
  }

  if (spec->job_types.empty()) {
    // Single-node mode: the command runs as one task, with the worker type's resources (the
    // TensorBoard sidecar below does not count: it runs beside that task).
    spec->single_node = true;
    JobTypeSpec single;
    if (absl::Status s = ReadJobType(reader, "worker", common_resources, spec, &single); !s.ok()) {
      return s;
    }
    single.instances = 1;
    spec->job_types.emplace("worker", std::move(single));
  }

  spec->hdfs_classpath = SplitList(reader.String("tony.application.hdfs-classpath"));
  spec->tensorboard_log_dir =
      std::string(StripWhitespace(reader.String("tony.application.tensorboard-log-dir")));
  if (!spec->tensorboard_log_dir.empty()) {
    // TonY's sidecar: a tensorboard task (one, unless the job sets tony.tensorboard.instances),
    // never tracked, running TensorBoard unless tony.tensorboard.command says otherwise.
    auto [it, added] = spec->job_types.try_emplace(kTensorBoardType);
    JobTypeSpec& sidecar = it->second;
    if (added) {
      if (absl::Status s = ReadJobType(reader, kTensorBoardType, common_resources, spec, &sidecar);
          !s.ok()) {
        return s;
      }
      sidecar.instances = 1;
    }
    sidecar.role = JobTypeRole::kSidecar;
    if (reader.JobTypeValue(kTensorBoardType, "command").empty()) {
      sidecar.command = DefaultTensorBoardCommand(spec->python_exec_path);
    }
    spec->execution_envs["TB_LOG_DIR"] = spec->tensorboard_log_dir;
  }

  return absl::OkStatus();
}

// tony.application.enable-preprocess: the preprocessing job, as TonY's AM runs it (tony.am.command,
// else the job's command, in a container of the AM's size) but in a container of its own, where
// it sees none of the AM's credentials. After the stages are read: no stage key may name it.
absl::Status AddPreprocessing(const Reader& reader, JobSpec* spec) {
  TONY_ASSIGN_OR_RETURN(spec->preprocess, reader.Bool("tony.application.enable-preprocess"));
  // Single-node mode: the one task is the job (TonY runs it as its preprocessing job, too).
  if (spec->single_node) spec->preprocess = false;
  if (!spec->preprocess) return absl::OkStatus();
  if (spec->job_types.count(kPreprocessType)) {
    return reader.Error(StrCat("tony.", kPreprocessType, ".instances"),
                        StrCat("the job type name ", kPreprocessType,
                               " is the preprocessing job's with "
                               "tony.application.enable-preprocess; name this type otherwise"));
  }
  JobTypeSpec job;
  if (absl::Status s =
          ReadJobType(reader, kPreprocessType,
                      SplitList(reader.String("tony.containers.resources")), spec, &job);
      !s.ok()) {
    return s;
  }
  job.instances = 1;
  job.resources = spec->am;
  if (std::string command = reader.JobTypeValue("am", "command"); !command.empty()) {
    job.command = std::move(command);
  }
  if (StripWhitespace(job.command).empty()) {
    return reader.Error("tony.application.enable-preprocess",
                        "the preprocessing job has no command: set tony.am.command or the job's "
                        "command (--executes)");
  }
  if (std::string label = reader.String("tony.am.node-label"); !label.empty()) {
    job.node_label = std::move(label);
  }
  job.role = JobTypeRole::kTracked;
  job.stop_on_failure = true;
  job.stop_on_failure_reason = "the preprocessing job failed, so no other task starts";
  job.restart_policy = RestartPolicy::kTask;
  job.min_instances = 0;
  if (absl::Status s = ApplyDocker(reader, *spec, &job); !s.ok()) return s;
  spec->job_types.emplace(kPreprocessType, std::move(job));
  return absl::OkStatus();
}

}  // namespace

std::string_view ToString(DistributedMode mode) {
  return mode == DistributedMode::kGang ? "GANG" : "FCFS";
}

std::string_view ToString(JobTypeRole role) {
  switch (role) {
    case JobTypeRole::kTracked:
      return "tracked";
    case JobTypeRole::kUntracked:
      return "untracked";
    case JobTypeRole::kSidecar:
      return "sidecar";
  }
  return "?";
}

std::string TaskRef::ToString() const { return StrCat(type, ":", index); }

const std::vector<std::string>& KnownFrameworks() {
  static const auto* frameworks = new std::vector<std::string>{
      "tensorflow", "pytorch", "mxnet", "horovod", "jax", "standalone"};
  return *frameworks;
}

int JobSpec::TotalTasks() const {
  int total = 0;
  for (const auto& [name, type] : job_types) total += type.instances;
  return total;
}

int JobSpec::TrackedTasks() const {
  int total = 0;
  for (const auto& [name, type] : job_types) {
    if (type.role == JobTypeRole::kTracked && !(preprocess && name == kPreprocessType)) {
      total += type.instances;
    }
  }
  return total;
}

int JobSpec::GangTasks() const {
  const JobTypeSpec* alone = preprocess ? Find(kPreprocessType) : nullptr;
  return TotalTasks() - (alone != nullptr ? alone->instances : 0);
}

Resources JobSpec::GangResources() const {
  Resources total{0, 0, 0};
  for (const auto& [name, type] : job_types) {
    if (preprocess && name == kPreprocessType) continue;
    total.memory_mb += type.instances * type.resources.memory_mb;
    total.vcores += type.instances * type.resources.vcores;
    total.gpus += type.instances * type.resources.gpus;
  }
  return total;
}

bool JobSpec::HasPlacement() const {
  for (const auto& [name, type] : job_types) {
    if (!type.placement.empty()) return true;
  }
  return false;
}

const JobTypeSpec* JobSpec::Find(const std::string& type) const {
  auto it = job_types.find(type);
  return it == job_types.end() ? nullptr : &it->second;
}

const JobTypeSpec* JobSpec::ElasticType() const {
  for (const auto& [name, type] : job_types) {
    if (type.min_instances > 0) return &type;
  }
  return nullptr;
}

std::string DefaultTensorBoardCommand(const std::string& python) {
  return StrCat(python.empty() ? "python3" : python,
                " -m tensorboard.main --logdir \"$TB_LOG_DIR\" --host \"$TB_HOST\" --port "
                "\"$TB_PORT\"");
}

absl::StatusOr<JobSpec> BuildJobSpec(const Configuration& conf) {
  Reader reader(conf);
  JobSpec spec;
  if (absl::Status s = ReadApplication(reader, &spec); !s.ok()) return s;
  if (absl::Status s = ApplyControl(reader, conf, &spec); !s.ok()) return s;
  if (absl::Status s = ReadTimingAndEnvironment(reader, &spec); !s.ok()) return s;
  if (absl::Status s = ReadJobTypes(reader, conf, &spec); !s.ok()) return s;
  if (absl::Status s =
          ApplyHorovod(reader, SplitList(reader.String("tony.containers.resources")), &spec);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckJobSize(reader, spec); !s.ok()) return s;
  if (absl::Status s = ReadElastic(reader, &spec); !s.ok()) return s;
  if (absl::Status s = ReadRestartPolicies(reader, &spec); !s.ok()) return s;
  if (absl::Status s = ReadGroupsAndStages(reader, conf, &spec); !s.ok()) return s;
  if (absl::Status s = AddPreprocessing(reader, &spec); !s.ok()) return s;
  if (absl::Status s = ReadPlacement(reader, &spec); !s.ok()) return s;
  if (spec.job_types.count("chief")) {
    spec.chief = TaskRef{"chief", 0};
  } else if (spec.job_types.count("worker") && spec.ElasticType() == nullptr) {
    // An elastic job has none: torchrun makes a rank 0 at each rendezvous, whichever worker.
    spec.chief = TaskRef{"worker", 0};
  }
  return spec;
}

}  // namespace tony::config
