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
#include <string_view>

namespace tony::rpc {

// Client -> AM.
inline constexpr char kEnvAppId[] = "TONY_APP_ID";
inline constexpr char kEnvBackend[] = "TONY_BACKEND";       // "yarn" on YARN
inline constexpr char kEnvAmAttempt[] = "TONY_AM_ATTEMPT";  // local backend
inline constexpr char kEnvStagingDir[] = "TONY_STAGING_DIR";
inline constexpr char kEnvYarnScheduler[] = "TONY_YARN_SCHEDULER";
inline constexpr char kEnvDefaultFs[] = "TONY_DEFAULT_FS";
inline constexpr char kEnvWebHdfs[] = "TONY_WEBHDFS";
inline constexpr char kEnvHasSrc[] = "TONY_HAS_SRC";
inline constexpr char kEnvHasVenv[] = "TONY_HAS_VENV";
inline constexpr char kEnvHasHadoopConf[] = "TONY_HAS_HADOOP_CONF";
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
// Local backend -> container.
inline constexpr char kEnvWorkDir[] = "TONY_WORK_DIR";
inline constexpr char kEnvContainerSecrets[] = "TONY_CONTAINER_SECRETS";

inline constexpr std::array<std::string_view, 23> kInternalVariables = {
    kEnvAppId,       kEnvBackend,    kEnvAmAttempt,       kEnvStagingDir,  kEnvYarnScheduler,
    kEnvSubmittedMs, kEnvBinaryPath, kEnvAmKeytab,        kEnvDefaultFs,   kEnvWebHdfs,
    kEnvHasSrc,      kEnvHasVenv,    kEnvYarnNodes,       kEnvAmAddress,   kEnvConfFile,
    kEnvTaskType,    kEnvTaskIndex,  kEnvTaskAttempt,     kEnvContainerId, kEnvLogDir,
    kEnvHost,        kEnvWorkDir,    kEnvContainerSecrets};

}  // namespace tony::rpc
