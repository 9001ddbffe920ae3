#include "cli/cluster_command.h"

#include <iostream>

#include "cli/roles.h"
#include "config/config_loader.h"
#include "config/job_spec.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::cli {

int RunClusterCommand(SubmitOptions& options) {
  CompleteFromEnvironment(&options);
  absl::StatusOr<config::ResolvedConfig> resolved = config::ResolveConfiguration(options.request);
  if (!resolved.ok()) {
    std::cerr << "tony: error: " << resolved.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<config::JobControlSpec> control = config::BuildJobControlSpec(resolved->conf);
  if (!control.ok()) {
    std::cerr << "tony: error: " << control.status().message() << "\n";
    return 2;
  }
  std::vector<std::string> dirs = hadoop::HadoopConf::DirsFromEnvironment();
  dirs.insert(dirs.end(), control->hadoop_conf_dirs.begin(), control->hadoop_conf_dirs.end());
  if (dirs.empty()) {
    std::cerr << "tony: error: no Hadoop configuration: set HADOOP_CONF_DIR (or YARN_CONF_DIR, "
                 "or tony.application.yarn-conf-path) to the directory of yarn-site.xml\n";
    return 2;
  }
  absl::StatusOr<hadoop::HadoopConf> conf = hadoop::HadoopConf::Load(dirs);
  if (!conf.ok()) {
    std::cerr << "tony: error: " << conf.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> kerberos =
      ClusterLogin(*conf, control->security);
  if (!kerberos.ok()) {
    std::cerr << "tony: error: " << kerberos.status().message() << "\n";
    return kerberos.status().code() == absl::StatusCode::kUnavailable ? 1 : 2;
  }
  absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> yarn =
      hadoop::YarnClient::Connect(*conf, hadoop::HadoopUser(), *kerberos);
  if (!yarn.ok()) {
    std::cerr << "tony: error: " << yarn.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<hadoop::ClusterMetrics> metrics = (*yarn)->GetClusterMetrics();
  absl::StatusOr<std::vector<hadoop::NodeReport>> nodes =
      metrics.ok() ? (*yarn)->GetClusterNodes({})
                   : absl::StatusOr<std::vector<hadoop::NodeReport>>(metrics.status());
  if (!nodes.ok()) {
    std::cerr << "tony: error: " << nodes.status().message() << "\n";
    return 1;
  }
  std::cout << hadoop::FormatNodesTable(*metrics, *nodes);
  return 0;
}

}  // namespace tony::cli
