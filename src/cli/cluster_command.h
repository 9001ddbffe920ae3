#pragma once
// `tony cluster`: the cluster's metrics and a table of its nodes, like `yarn node -list`, read
// natively from the ResourceManager configured in HADOOP_CONF_DIR / YARN_CONF_DIR (or
// tony.application.yarn-conf-path / hdfs-conf-path).

#include "cli/submit_options.h"

namespace tony::cli {

// Returns the exit code: 0, 1 when the cluster cannot be reached, 2 for bad configuration.
int RunClusterCommand(SubmitOptions& options);

}  // namespace tony::cli
