#pragma once
// The validated, typed job: what TonY calls JobConfig, built from a resolved Configuration.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/resources.h"
#include "config/configuration.h"

namespace tony::config {

enum class DistributedMode { kGang, kFcfs };
std::string_view ToString(DistributedMode mode);

// tony.<type>.restart-policy: what a failed (or hung) task's restart takes with it.
enum class RestartPolicy {
  kTask,  // the task alone, in a new container (independent tasks)
  kGang,  // every task of the job's gang types, in their containers (collective training)
};

using Resources = tony::Resources;

// How a job type's tasks count for the job's end (TonY's failure rules: docs/running-jobs.md, "How
// a job ends").
enum class JobTypeRole {
  kTracked,    // the job waits for it
  kUntracked,  // not waited for; stopped when the tracked tasks are done (ps)
  kSidecar,    // not waited for, failures ignored (tensorboard)
};
std::string_view ToString(JobTypeRole role);

struct JobTypeSpec {
  std::string name;
  int instances = 0;
  Resources resources;
  std::string command;
  // Its command runs torchrun, which gives each process it starts OMP_NUM_THREADS itself.
  bool runs_torchrun = false;
  std::vector<std::string> localized_resources;  // tony.<t>.resources + tony.containers.resources
  std::string node_label;
  // The YARN placement constraint (config/placement_constraint.h) its containers must meet,
  // checked: tony.<type>.placement-spec, else tony.containers.placement-spec, joined with
  // tony.application.placement-spec by and(...); the preprocessing job's is its own key's only.
  // "" for none.
  std::string placement;
  JobTypeRole role = JobTypeRole::kTracked;
  bool stop_on_failure = false;
  // Why a failure of this type ends the job, for the job's diagnostics; "" when the reason is
  // tony.application.stop-on-failure-jobtypes.
  std::string stop_on_failure_reason;
  int max_restarts = 0;
  int64_t restart_backoff_ms = 1000;
  // tony.<type>.transient-exit-codes: exit codes of the user's own (1-255) after which a task is
  // restarted without using up max_restarts.
  std::set<int> transient_exit_codes;
  // tony.<type>.memory-growth: a task killed over its memory is restarted once (using no restart)
  // with its memory times this; 1: never.
  double memory_growth = 1;
  // tony.<type>.restart-policy; unset: kGang for the tracked types of a collective job (pytorch,
  // horovod, jax), kTask otherwise.
  RestartPolicy restart_policy = RestartPolicy::kTask;
  // tony.<type>.min-instances, or MIN of torchrun's --nnodes=MIN:MAX in the type's command: an
  // elastic PyTorch job's workers, which go on with at least this many while a lost one is
  // replaced (docs/running-jobs.md, "Elastic PyTorch"); 0: not elastic.
  int min_instances = 0;
  // tony.<type>.progress-pattern: a regular expression (RE2) with a named group `step`, and
  // optionally `total` and metrics of its own, matched against each line the task prints; ""
  // when unset (docs/running-jobs.md, "Progress and hangs").
  std::string progress_pattern;
  // With tony.docker.enabled: YARN's container runtime variables for this type's containers
  // (YARN_CONTAINER_RUNTIME_TYPE, ..._DOCKER_IMAGE, ..._DOCKER_MOUNTS); empty otherwise.
  std::map<std::string, std::string> docker_env;
};

struct TaskRef {
  std::string type;
  int index = 0;
  bool operator==(const TaskRef&) const = default;
  // A false positive of clang-tidy's on the defaulted comparison:
  // NOLINTNEXTLINE(modernize-use-nullptr)
  auto operator<=>(const TaskRef&) const = default;
  std::string ToString() const;  // "worker:1"
};

// tony.application.dependency.<type>.timeout.after.<group>: once every task of the group has
// ended, tasks of `type` may run this much longer.
struct GroupDependency {
  std::string type;
  std::string group;
  int64_t timeout_ms = 0;
  bool ignored = false;  // when it expires, stop the tasks without failing the job
};

// tony.local.*: what the local backend may hand out and how it watches its containers.
struct LocalBackendSpec {
  std::optional<int64_t> memory_mb;        // tony.local.memory; unset: the machine's memory
  std::optional<int> vcores;               // tony.local.vcores; unset: the machine's CPUs
  std::optional<int> gpus;                 // tony.local.gpus; unset: the machine's GPUs
  int64_t memory_check_interval_ms = 0;    // tony.local.memory-check-interval-ms
  bool enforce_memory = false;             // tony.local.enforce-memory
  bool keep_work_dirs_on_failure = false;  // tony.local.keep-work-dirs-on-failure
};

// Kerberos, on a cluster whose hadoop.security.authentication is kerberos.
struct SecuritySpec {
  bool enabled = true;    // tony.application.security.enabled: false never logs in
  std::string principal;  // tony.kerberos.principal; "" with a keytab: its first principal
  std::string keytab;     // tony.kerberos.keytab; "" logs in from the ticket cache
  // tony.other.namenodes: more NameNodes to get delegation tokens from, "hdfs://host:port".
  std::vector<std::string> other_namenodes;
};

// The keys that commands acting on an existing job read (tony status, kill, list, gc). They hold
// a Configuration that need not describe a runnable job (it may have no command), so they build
// this instead of a JobSpec; BuildJobSpec reads the same keys through it.
struct JobControlSpec {
  std::string name;                   // tony.application.name
  std::string application_type;       // tony.application.type
  std::string backend;                // tony.application.backend: "local" or "yarn"
  bool keep_staging = false;          // tony.application.keep-staging
  int64_t stop_grace_ms = 0;          // tony.task.stop-grace-ms
  int64_t history_retention_sec = 0;  // tony.history.retention-sec; <= 0 keeps them forever
  // Where jobs' histories go (history/history_format.h): tony.history.location, "" for the
  // backend's default ($TONY_HOME/history locally, /user/<user>/.tony/history on YARN's HDFS);
  // tony.history.intermediate and tony.history.finished, "" for <location>/intermediate and
  // <location>/finished.
  std::string history_location;
  std::string history_intermediate;
  std::string history_finished;
  int64_t history_max_log_bytes = 0;  // tony.history.max-log-bytes, per task attempt and stream
  // tony.application.hdfs-conf-path, then tony.application.yarn-conf-path, those that are set.
  std::vector<std::string> hadoop_conf_dirs;
  SecuritySpec security;
};

// Validates the keys of JobControlSpec in `conf`; errors as BuildJobSpec's.
[[nodiscard]] absl::StatusOr<JobControlSpec> BuildJobControlSpec(const Configuration& conf);

// BuildJobSpec sets every field, from the configuration or the catalogue's defaults
// (tony-default.xml). The initial values are only those of a JobSpec built by hand, in tests.
// The job type of the TensorBoard sidecar (TonY's tony.tensorboard.* keys).
inline constexpr char kTensorBoardType[] = "tensorboard";

// The job type of Horovod's driver, which a job has only with tony.horovod.driver.mode.debug: the
// user's own driver (TonY's debug mode). Without it, the AM serves Horovod's rendezvous itself.
inline constexpr char kHorovodDriverType[] = "driver";

// The job type of the preprocessing job (tony.application.enable-preprocess, TonY's): one task
// that runs tony.am.command (else the job's command) with PREPROCESSING_JOB=true and the AM's
// resources before any other task starts. Its failure fails the job; the text after the first
// "Model parameters: " its stdout prints reaches every later task as MODEL_PARAMS and TASK_PARAMS.
inline constexpr char kPreprocessType[] = "preprocess";
// The marker the preprocessing job prints before the parameters it hands on (TonY's).
inline constexpr char kModelParamsMarker[] = "Model parameters: ";

// The sidecar's command when tony.tensorboard.command is not set: TensorBoard (the `tensorboard`
// Python package) on TB_LOG_DIR, listening on the TB_HOST and TB_PORT its executor reserved.
std::string DefaultTensorBoardCommand(const std::string& python);

struct JobSpec {
  std::string name;
  std::string application_type;
  std::string queue;
  std::optional<int32_t> priority;  // tony.yarn.priority; unset: the queue's default
  std::vector<std::string> tags;
  std::string node_label;
  std::string framework;  // one of runtime's supported frameworks
  DistributedMode mode = DistributedMode::kGang;
  std::string backend;  // "local" or "yarn"

  // Job types by name, only those with instances > 0. In single-node mode (every
  // tony.<t>.instances is 0) this holds one "worker" task that runs the command.
  std::map<std::string, JobTypeSpec> job_types;
  bool single_node = false;
  // The chief: chief:0 when the job has a chief type, else worker:0 if there are workers.
  std::optional<TaskRef> chief;

  Resources am;
  bool fail_on_worker_failure = false;
  int64_t application_timeout_ms = 0;  // 0: none
  int64_t am_startup_timeout_ms = 0;   // 0: none
  int am_retry_count = 0;              // tony.am.retry-count: AM attempts after the first
  // tony.am.recovery-timeout-ms: how long an executor that lost its AM waits for the next attempt
  // (only where that attempt adopts the running tasks).
  int64_t am_recovery_timeout_ms = 300000;
  int64_t wait_client_ms = 0;            // tony.am.wait-client-signal-stop-timeout-sec
  bool am_tls = true;                    // tony.am.tls.enabled
  std::string am_bind_host;              // tony.am.bind-host; "" = what the backend needs
  int64_t allocation_timeout_ms = -1;    // -1: none
  int64_t registration_timeout_ms = -1;  // -1: none
  int64_t execution_timeout_ms = 0;      // 0: none
  // tony.task.hang-timeout-ms: a running task that makes no progress this long is hung; 0: never.
  int64_t hang_timeout_ms = 0;
  // tony.task.straggler-steps: a running task whose step lags its type's median by more is named
  // a straggler; 0: never.
  int64_t straggler_steps = 0;
  // tony.application.max-gang-restarts: how often the gang may restart in all (restarts after the
  // cluster's doing or a transient exit code aside); -1: as often as the failed task's
  // tony.<type>.max-restarts allows it.
  int max_gang_restarts = -1;
  // tony.application.checkpoint-dir: every task's TONY_CHECKPOINT_DIR (a local path or a URI such
  // as hdfs://...); "": the backend's default, inside the job's directory.
  std::string checkpoint_dir;
  int64_t registry_timeout_ms = 0;  // 0: none
  int64_t heartbeat_interval_ms = 1000;
  int max_missed_heartbeats = 25;
  int64_t stop_grace_ms = 5000;
  int error_message_max_lines = 20;

  // tony.application.group.<G>: named sets of job types.
  std::map<std::string, std::vector<std::string>> groups;
  std::vector<GroupDependency> dependencies;
  // tony.application.prepare-stage / training-stage: the training types start only after every
  // prepare type's tasks succeeded. Both empty when the job has no stages.
  std::vector<std::string> prepare_stage;
  std::vector<std::string> training_stage;
  // tony.application.enable-preprocess (not in single-node mode, where the one task is the job):
  // job_types has kPreprocessType, whose task runs first, alone; every other waits for its
  // success (the stages above then follow it).
  bool preprocess = false;
  // tony.application.placement-spec, as given (already part of each type's placement); "" for
  // none.
  std::string application_placement;

  std::map<std::string, std::string> container_envs;  // tony.containers.envs
  std::map<std::string, std::string> execution_envs;  // tony.execution.envs
  std::string python_venv;                            // local path or URI; "" if none
  std::string src_dir;                                // directory or zip; "" if none
  std::string python_exec_path;                       // tony.python-exec-path; "" if none
  std::string executes;  // tony.application.executes, for reference; "" if none
  // tony.application.tensorboard-log-dir (--sidecar_tensorboard_log_dir): the job gets TonY's
  // TensorBoard sidecar, a job type kTensorBoardType that runs TensorBoard on this directory,
  // unless it defines that type itself. "" if none.
  std::string tensorboard_log_dir;
  // tony.application.hdfs-classpath: the --hdfs_classpath entries, which the client leaves out of
  // the job (with a warning) where they do not exist, as TonY does.
  std::vector<std::string> hdfs_classpath;
  // framework horovod with tony.horovod.driver.mode.debug: the job's driver task
  // (kHorovodDriverType) runs the user's rendezvous and publishes its port; workers wait for it.
  bool horovod_debug_driver = false;

  bool keep_staging = false;  // tony.application.keep-staging (YARN)
  // tony.application.output-dir (--output_dir): where the tasks' outputs go and stay after the
  // job: a local path (relative to the submitter's directory until the client resolves it;
  // file:// is stripped) or, on YARN only, an hdfs:// or viewfs:// URI. "": the backend's default
  // (the job directory's outputs/ locally, the job's HDFS directory's on YARN). The client writes
  // the resolved place into the job's configuration, which is what the AM and executors read.
  std::string output_dir;
  int64_t history_retention_sec = 0;  // tony.history.retention-sec; <= 0 keeps them forever
  std::string history_location;       // as JobControlSpec's
  std::string history_intermediate;
  std::string history_finished;
  int64_t history_max_log_bytes = 0;
  // tony.history.url, else TonY's tony.portal.url: the history server; "" for none.
  std::string history_url;
  int64_t metrics_interval_ms = 5000;
  bool gpu_metrics = true;   // tony.task.gpu-metrics.enabled
  bool task_sandbox = true;  // tony.task.sandbox: the user's command in namespaces of its own
  std::string gpu_exec_path =
      "nvidia-smi";  // tony.gpu-exec-path  // tony.task.metrics-interval-ms: history samples per
                     // task
  std::vector<std::string> hadoop_conf_dirs;  // as JobControlSpec::hadoop_conf_dirs
  SecuritySpec security;                      // as JobControlSpec::security
  LocalBackendSpec local;

  int TotalTasks() const;
  // Tasks of the tracked types (the preprocessing job's not: it runs before them).
  int TrackedTasks() const;
  // The tasks that hold their containers at once in GANG mode (every one but the preprocessing
  // job's, which runs alone before them), and what they ask for together.
  int GangTasks() const;
  Resources GangResources() const;
  // Whether any job type has a placement constraint (YARN asks for those with SchedulingRequests).
  bool HasPlacement() const;
  const JobTypeSpec* Find(const std::string& type) const;
  // The elastic type of an elastic PyTorch job (min_instances > 0); nullptr for any other job.
  const JobTypeSpec* ElasticType() const;
};

// Validates `conf` into a JobSpec. The first problem found is returned as one line naming the
// key, its value and its source: `tony.worker.instances = "-1" (--conf): expected ...`.
[[nodiscard]] absl::StatusOr<JobSpec> BuildJobSpec(const Configuration& conf);

// The frameworks tony knows, in the order error messages list them.
const std::vector<std::string>& KnownFrameworks();

}  // namespace tony::config
