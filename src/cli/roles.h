#pragma once
// Entry points of tony's roles, wiring the concrete implementations together.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/submit_options.h"
#include "cluster/yarn/yarn_cluster_client.h"
#include "config/configuration.h"
#include "config/job_spec.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/sasl/kerberos.h"
#include "history/history_format.h"

namespace tony::cli {

// `tony submit`: returns the process exit code.
int RunSubmit(SubmitOptions& options);
// `tony am`: the ApplicationMaster, started by a backend in the AM container.
int RunAm();
// `tony executor`: the TaskExecutor, started by the AM in a task container, under its guard
// (executor/executor_guard.h). `role_arg` is the "executor" argument of argv, which the guard
// renames; may be null.
int RunExecutor(char* role_arg);

// The path of the running tony binary.
std::string SelfExecutable();

// $TONY_HOME, else ~/.tony: where the client keeps each job's directory (jobs/<app id>).
std::string TonyHome();

// The jobs' history on this machine's disk: tony.history.location ("" for $TONY_HOME/history, or
// a file:// URI), .intermediate and .finished. InvalidArgument names a location that is not a
// local directory.
absl::StatusOr<history::HistoryStore> LocalHistoryStore(const std::string& location,
                                                        const std::string& intermediate,
                                                        const std::string& finished);

// The configuration a job was staged with (its tony-final.xml over the built-in defaults).
absl::StatusOr<config::Configuration> LoadFinalConf(const std::string& path);

// The cluster's Hadoop configuration as the client finds it: HADOOP_CONF_DIR / YARN_CONF_DIR and
// the job's tony.application.{hdfs,yarn}-conf-path.
absl::StatusOr<hadoop::HadoopConf> ClientHadoopConf(const std::vector<std::string>& conf_dirs);

// The client's Kerberos login where the cluster uses Kerberos (hadoop.security.authentication),
// from tony.kerberos.keytab or the ticket cache; nullptr where it does not. Errors say how to log
// in (kinit, the keytab keys); they are bad input (exit 2), except a KDC that cannot be reached.
absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> ClusterLogin(
    const hadoop::HadoopConf& conf, const config::SecuritySpec& security);

// The YARN backend as the client sees it, for a job with these Hadoop configuration directories
// (JobControlSpec::hadoop_conf_dirs), tony.application.keep-staging and Kerberos settings. On
// failure: nullptr, after the one error line, with *exit_code 2 (no cluster configuration, no
// Kerberos login) or 1 (no cluster).
std::unique_ptr<cluster::YarnClusterClient> ConnectYarnClient(
    const std::vector<std::string>& hadoop_conf_dirs, bool keep_staging,
    const config::SecuritySpec& security, int* exit_code);

}  // namespace tony::cli
