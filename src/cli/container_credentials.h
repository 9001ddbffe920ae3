#pragma once
// What tony's processes take from the credentials their container was started with, and what the
// executor and the AM do with HDFS tokens: the executor keeps tony's secrets from the user's
// process and hands it fresh tokens; the AM reads what it needs to get them.
//
// Threads: plain functions; they read and write files in the container.

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cluster/yarn/hdfs_token_refresher.h"
#include "config/job_spec.h"
#include "hadoop/common/credentials.h"

namespace tony::cli {

// The credentials YARN gives a container ($HADOOP_TOKEN_FILE_LOCATION), if any.
absl::StatusOr<hadoop::Credentials> ContainerCredentials();

// The executor's credentials (LaunchSpec::secrets), taken so that nothing the user's process can
// reach still holds them: the local backend's file is removed; on YARN the tony entries are
// dropped from the container's credentials file, which keeps the rest (HDFS tokens) for the
// user's process, in the Writable layout Hadoop 2's readers know.
absl::StatusOr<std::map<std::string, std::string>> TakeContainerSecrets();

// YARN: writes the job's configuration, which comes in the containers' credentials
// (cluster::kFinalConfSecret), to `path` (mode 0600), where tony reads it and where the task finds
// it, as in TonY's containers.
absl::Status WriteFinalConf(const std::string& path, const std::string& text);
// The AM's: from its container's credentials, which must carry it (the client puts it there).
absl::Status WriteFinalConfFromContainer(const std::string& path);

// Replaces the tokens of the credentials file at `path` (a task's HADOOP_TOKEN_FILE_LOCATION)
// with those of `fresh` by alias, adding new ones; the rest stays. Atomic: a task reading the file
// sees the old or the new whole.
absl::Status MergeTokensIntoFile(const std::string& path, const std::string& fresh);

// What the AM needs to get fresh HDFS tokens: the keytab the client shipped, the job's Hadoop
// configuration (localized as cluster::kHadoopConfDir) and the NameNodes the client got tokens
// from (fs.defaultFS's and tony.other.namenodes).
absl::StatusOr<cluster::TokenRefreshOptions> TokenRefreshFromContainer(
    const std::string& keytab, const std::string& default_fs, const config::SecuritySpec& security);

}  // namespace tony::cli
