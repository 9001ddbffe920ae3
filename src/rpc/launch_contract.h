#pragma once
// The variables tony's own processes pass each other when one starts another (client -> AM,
// AM -> executor, backend -> container). They are tony's internal launch contract: the user's
// process never sees them (the executor removes every one, InternalVariables), and credentials are
// never among them (they travel as LaunchSpec::secrets / AmSubmission::secrets).
//
// Not here, because they are not tony's to remove: TONY_HOME and TONY_CONF_DIR (the user's own
// settings) and TONY_JOB_DIR (public: the job directory on the local backend, which marks every
// process of a job so that tony can find what a job left behind).

#include <array>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tony::rpc {

// Client -> AM.
inline constexpr char kEnvAppId[] = "TONY_APP_ID";
inline constexpr char kEnvBackend[] = "TONY_BACKEND";       // "yarn" on YARN
inline constexpr char kEnvAmAttempt[] = "TONY_AM_ATTEMPT";  // local backend
inline constexpr char kEnvStagingDir[] = "TONY_STAGING_DIR";
inline constexpr char kEnvYarnScheduler[] = "TONY_YARN_SCHEDULER";
inline constexpr char kEnvDefaultFs[] = "TONY_DEFAULT_FS";
inline constexpr char kEnvWebHdfs[] = "TONY_WEBHDFS";
inline constexpr char kEnvWebHdfsCa[] = "TONY_WEBHDFS_CA";  // PEM file the AM trusts for HTTPS
// The service of the HDFS token the AM's WebHDFS calls use (its default file system's): the
// container's credentials hold one per NameNode, in no particular order.
inline constexpr char kEnvWebHdfsToken[] = "TONY_WEBHDFS_TOKEN";
inline constexpr char kEnvHasSrc[] = "TONY_HAS_SRC";
inline constexpr char kEnvHasVenv[] = "TONY_HAS_VENV";
// YARN: the client's Hadoop configuration, zipped, on HDFS (the content-addressed cache), for the
// task containers; unset when the client had none.
inline constexpr char kEnvHadoopConfPath[] = "TONY_HADOOP_CONF_PATH";
inline constexpr char kEnvYarnNodes[] = "TONY_YARN_NODES";
inline constexpr char kEnvYarnWebProxy[] = "TONY_YARN_WEB_PROXY";  // host:port
inline constexpr char kEnvAmKeytab[] = "TONY_AM_KEYTAB";           // the user's keytab, localized
// YARN: the tony binary on HDFS (the client's content-addressed cache), for the task containers.
inline constexpr char kEnvBinaryPath[] = "TONY_BINARY_PATH";
inline constexpr char kEnvSubmittedMs[] = "TONY_SUBMITTED_MS";  // wall clock, for the history
// AM -> executor.
inline constexpr char kEnvAmAddress[] = "TONY_AM_ADDRESS";
inline constexpr char kEnvConfFile[] = "TONY_CONF_FILE";
inline constexpr char kEnvTaskType[] = "TONY_TASK_TYPE";
inline constexpr char kEnvTaskIndex[] = "TONY_TASK_INDEX";
inline constexpr char kEnvTaskAttempt[] = "TONY_TASK_ATTEMPT";
inline constexpr char kEnvContainerId[] = "TONY_CONTAINER_ID";
inline constexpr char kEnvLogDir[] = "TONY_LOG_DIR";
inline constexpr char kEnvHost[] = "TONY_HOST";
// Where each AM attempt writes its address ("host:port"), when a later attempt adopts the running
// tasks (tony.am.retry-count): an executor that lost its AM looks there for the next one.
inline constexpr char kEnvAmAddressFile[] = "TONY_AM_ADDRESS_FILE";
// YARN: TONY_AM_ADDRESS_FILE is an HDFS path, read through WebHDFS at these NameNodes (as
// TONY_WEBHDFS) with the container's HDFS token of this service (as TONY_WEBHDFS_TOKEN).
inline constexpr char kEnvAmAddressWebHdfs[] = "TONY_AM_ADDRESS_WEBHDFS";
inline constexpr char kEnvAmAddressWebHdfsToken[] = "TONY_AM_ADDRESS_WEBHDFS_TOKEN";
// AM -> executor and the task: where the task keeps checkpoints (tony.application.checkpoint-dir).
inline constexpr char kEnvCheckpointDir[] = "TONY_CHECKPOINT_DIR";
// Local backend -> container.
inline constexpr char kEnvWorkDir[] = "TONY_WORK_DIR";
inline constexpr char kEnvContainerSecrets[] = "TONY_CONTAINER_SECRETS";

inline constexpr std::array<std::string_view, 30> kInternalVariables = {
    kEnvAppId,         kEnvBackend,          kEnvAmAttempt,
    kEnvStagingDir,    kEnvYarnScheduler,    kEnvSubmittedMs,
    kEnvBinaryPath,    kEnvAmKeytab,         kEnvDefaultFs,
    kEnvWebHdfs,       kEnvWebHdfsCa,        kEnvWebHdfsToken,
    kEnvHasSrc,        kEnvHasVenv,          kEnvHadoopConfPath,
    kEnvYarnNodes,     kEnvYarnWebProxy,     kEnvAmAddress,
    kEnvConfFile,      kEnvTaskType,         kEnvTaskIndex,
    kEnvTaskAttempt,   kEnvContainerId,      kEnvLogDir,
    kEnvHost,          kEnvWorkDir,          kEnvContainerSecrets,
    kEnvAmAddressFile, kEnvAmAddressWebHdfs, kEnvAmAddressWebHdfsToken};

// What a backend tells the AM it starts (client -> AM), typed: the backends write it with ToEnv()
// and `tony am` reads it with ReadAmLaunch(), whose errors name the variable. The backends add
// their own variables beside these (YARN's NM_HOST and CONTAINER_ID, TONY_JOB_DIR).
struct AmLaunch {
  std::string app_id;  // required
  bool on_yarn = false;
  int am_attempt = 0;  // the local backend's count, from 1; 0: not given (YARN: the container id)
  int64_t submitted_ms = 0;  // the client's wall clock at submission; 0: unknown
  // YARN only.
  std::string staging_dir;
  std::string binary_path;
  std::string yarn_scheduler;  // host:port, or with RM HA rm1=host:port,rm2=host:port
  std::string default_fs;
  // host:port (with NameNode HA nn1=host:port,nn2=host:port), behind "https://" for HTTPS
  std::string webhdfs;
  std::string webhdfs_ca;     // the localized PEM of the authorities to trust for HTTPS, or ""
  std::string webhdfs_token;  // the service of default_fs's HDFS token, or ""
  // host:port (with RM HA, id=host:port,...), behind "https://" for HTTPS, or "" without one
  std::string web_proxy;
  std::string keytab;      // the localized keytab, or ""
  std::string node_hints;  // "host@rack,..." (cluster/yarn/yarn_asks.h), or ""
  bool has_src = false;
  bool has_venv = false;
  std::string hadoop_conf_path;  // the zipped Hadoop configuration on HDFS, or ""

  std::map<std::string, std::string> ToEnv() const {
    std::map<std::string, std::string> env = {{kEnvAppId, app_id}};
    const auto set = [&env](const char* name, const std::string& value) {
      if (!value.empty()) env[name] = value;
    };
    set(kEnvBackend, on_yarn ? "yarn" : "");
    if (am_attempt > 0) env[kEnvAmAttempt] = std::to_string(am_attempt);
    if (submitted_ms > 0) env[kEnvSubmittedMs] = std::to_string(submitted_ms);
    set(kEnvStagingDir, staging_dir);
    set(kEnvBinaryPath, binary_path);
    set(kEnvYarnScheduler, yarn_scheduler);
    set(kEnvDefaultFs, default_fs);
    set(kEnvWebHdfs, webhdfs);
    set(kEnvWebHdfsCa, webhdfs_ca);
    set(kEnvWebHdfsToken, webhdfs_token);
    set(kEnvYarnWebProxy, web_proxy);
    set(kEnvAmKeytab, keytab);
    set(kEnvYarnNodes, node_hints);
    set(kEnvHasSrc, has_src ? "1" : "");
    set(kEnvHasVenv, has_venv ? "1" : "");
    set(kEnvHadoopConfPath, hadoop_conf_path);
    return env;
  }
};

// How a reader looks a variable up: nullptr when it is not set.
using EnvLookup = std::function<const char*(const char*)>;

inline absl::StatusOr<AmLaunch> ReadAmLaunch(const EnvLookup& lookup = [](const char* name) {
  return static_cast<const char*>(std::getenv(name));
}) {
  const auto get = [&lookup](const char* name) {
    const char* value = lookup(name);
    return std::string(value != nullptr ? value : "");
  };
  AmLaunch launch;
  launch.app_id = get(kEnvAppId);
  if (launch.app_id.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kEnvAppId, " must be set; the AM is started by `tony submit`"));
  }
  const std::string backend = get(kEnvBackend);
  if (!backend.empty() && backend != "yarn") {
    return absl::InvalidArgumentError(
        absl::StrCat(kEnvBackend, "='", backend, "': only 'yarn', or unset for the local backend"));
  }
  launch.on_yarn = backend == "yarn";
  if (const std::string attempt = get(kEnvAmAttempt); !attempt.empty()) {
    if (!absl::SimpleAtoi(attempt, &launch.am_attempt) || launch.am_attempt < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(kEnvAmAttempt, "='", attempt, "': not an attempt number (1, 2, ...)"));
    }
  }
  if (const std::string ms = get(kEnvSubmittedMs); !ms.empty()) {
    if (!absl::SimpleAtoi(ms, &launch.submitted_ms) || launch.submitted_ms < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(kEnvSubmittedMs, "='", ms, "': not milliseconds since the epoch"));
    }
  }
  launch.staging_dir = get(kEnvStagingDir);
  launch.binary_path = get(kEnvBinaryPath);
  launch.yarn_scheduler = get(kEnvYarnScheduler);
  launch.default_fs = get(kEnvDefaultFs);
  launch.webhdfs = get(kEnvWebHdfs);
  launch.webhdfs_ca = get(kEnvWebHdfsCa);
  launch.webhdfs_token = get(kEnvWebHdfsToken);
  launch.web_proxy = get(kEnvYarnWebProxy);
  launch.keytab = get(kEnvAmKeytab);
  launch.node_hints = get(kEnvYarnNodes);
  launch.has_src = !get(kEnvHasSrc).empty();
  launch.has_venv = !get(kEnvHasVenv).empty();
  launch.hadoop_conf_path = get(kEnvHadoopConfPath);
  return launch;
}

// What the AM tells each executor it starts (AM -> executor), typed: the AM writes it with
// ToEnv() and `tony executor` reads it with ReadExecutorLaunch(), whose errors name the variable.
struct ExecutorLaunch {
  // Every name ToEnv may write: whoever builds an executor's environment removes them all first,
  // so that no other source (the job's variables) stands in for one ToEnv leaves out.
  static constexpr std::array<std::string_view, 13> kVariables = {kEnvAppId,
                                                                  kEnvAmAddress,
                                                                  kEnvConfFile,
                                                                  kEnvTaskType,
                                                                  kEnvTaskIndex,
                                                                  kEnvTaskAttempt,
                                                                  kEnvContainerId,
                                                                  kEnvBackend,
                                                                  kEnvLogDir,
                                                                  kEnvHost,
                                                                  kEnvAmAddressFile,
                                                                  kEnvAmAddressWebHdfs,
                                                                  kEnvAmAddressWebHdfsToken};

  std::string app_id;
  std::string am_address;  // host:port of the AM's control plane
  std::string conf_file;   // the job's resolved configuration
  std::string task_type;
  int task_index = -1;  // 0, 1, ...
  int attempt = 0;      // 0 for the first
  std::string container_id;
  bool on_yarn = false;
  // Where the executor keeps the task's output. The local backend names it (TONY_LOG_DIR); on
  // YARN the NodeManager does (the first of LOG_DIRS), and the AM writes none.
  std::string log_dir;
  std::string host;  // the address other tasks reach this one at; "": the executor finds one
  // Where a later AM attempt that adopts the running tasks writes its address; "": none will.
  // A local path, or with am_address_webhdfs an HDFS path read through WebHDFS.
  std::string am_address_file;
  std::string am_address_webhdfs;        // YARN: the NameNodes' HTTP addresses (as AmLaunch's)
  std::string am_address_webhdfs_token;  // YARN: the service of the HDFS token to read it with

  std::map<std::string, std::string> ToEnv() const {
    std::map<std::string, std::string> env = {
        {kEnvAppId, app_id},
        {kEnvAmAddress, am_address},
        {kEnvConfFile, conf_file},
        {kEnvTaskType, task_type},
        {kEnvTaskIndex, std::to_string(task_index)},
        {kEnvTaskAttempt, std::to_string(attempt)},
        {kEnvContainerId, container_id},
    };
    if (on_yarn) env[kEnvBackend] = "yarn";
    if (!log_dir.empty()) env[kEnvLogDir] = log_dir;
    if (!host.empty()) env[kEnvHost] = host;
    if (!am_address_file.empty()) env[kEnvAmAddressFile] = am_address_file;
    if (!am_address_webhdfs.empty()) env[kEnvAmAddressWebHdfs] = am_address_webhdfs;
    if (!am_address_webhdfs_token.empty()) {
      env[kEnvAmAddressWebHdfsToken] = am_address_webhdfs_token;
    }
    return env;
  }
};

inline absl::StatusOr<ExecutorLaunch> ReadExecutorLaunch(
    const EnvLookup& lookup = [](const char* name) {
      return static_cast<const char*>(std::getenv(name));
    }) {
  const auto get = [&lookup](const char* name) {
    const char* value = lookup(name);
    return std::string(value != nullptr ? value : "");
  };
  ExecutorLaunch launch;
  std::string missing;
  const auto required = [&](const char* name) {
    std::string value = get(name);
    if (value.empty() && missing.empty()) missing = name;
    return value;
  };
  launch.app_id = required(kEnvAppId);
  launch.am_address = required(kEnvAmAddress);
  launch.conf_file = required(kEnvConfFile);
  launch.task_type = required(kEnvTaskType);
  const std::string index = required(kEnvTaskIndex);
  launch.container_id = required(kEnvContainerId);
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        missing, " is not set; tony executor runs inside a container started by tony's AM"));
  }
  if (!absl::SimpleAtoi(index, &launch.task_index) || launch.task_index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kEnvTaskIndex, "='", index, "': not a task index (0, 1, ...)"));
  }
  if (const std::string attempt = get(kEnvTaskAttempt); !attempt.empty()) {
    if (!absl::SimpleAtoi(attempt, &launch.attempt) || launch.attempt < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(kEnvTaskAttempt, "='", attempt, "': not an attempt number (0, 1, ...)"));
    }
  }
  const std::string backend = get(kEnvBackend);
  if (!backend.empty() && backend != "yarn") {
    return absl::InvalidArgumentError(
        absl::StrCat(kEnvBackend, "='", backend, "': only 'yarn', or unset for the local backend"));
  }
  launch.on_yarn = backend == "yarn";
  if (launch.on_yarn) {
    // YARN's NodeManager names the container's log directories, comma-separated.
    const std::string dirs = get("LOG_DIRS");
    launch.log_dir = dirs.substr(0, dirs.find(','));
    if (launch.log_dir.empty() || launch.log_dir[0] != '/') {
      return absl::InvalidArgumentError(absl::StrCat(
          "LOG_DIRS='", dirs, "': the NodeManager names no log directory of the container"));
    }
  } else {
    launch.log_dir = get(kEnvLogDir);
    if (launch.log_dir.empty() || launch.log_dir[0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat(kEnvLogDir, "='", launch.log_dir, "': not an absolute directory"));
    }
  }
  launch.host = get(kEnvHost);
  launch.am_address_file = get(kEnvAmAddressFile);
  launch.am_address_webhdfs = get(kEnvAmAddressWebHdfs);
  launch.am_address_webhdfs_token = get(kEnvAmAddressWebHdfsToken);
  if (!launch.am_address_file.empty() && launch.am_address_file[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat(kEnvAmAddressFile, "='", launch.am_address_file, "': not an absolute path"));
  }
  return launch;
}

}  // namespace tony::rpc
