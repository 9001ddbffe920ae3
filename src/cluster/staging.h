#pragma once
// Where a job's files are staged and how `tony.<t>.resources` entries are written
// (`path[::name][#archive]`). Shared by the client, which stages, and the AM, which localizes.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/container_allocator.h"

namespace tony::cluster {

inline constexpr char kFinalConfFile[] = "tony-final.xml";
// YARN: the entry of the AM's and the executors' container credentials that carries
// kFinalConfFile's text, rather than a file staged on HDFS (not a secret: it rides with them so
// that a job starts without waiting for a NameNode to close a file). Its "tony." prefix takes it
// out of the credentials file the user's process can read, like tony's other entries there.
inline constexpr char kFinalConfSecret[] = "tony.final-conf";
inline constexpr char kSrcZip[] = "src.zip";
inline constexpr char kVenvZip[] = "venv.zip";
inline constexpr char kVenvDir[] = "venv";
inline constexpr char kResourcesDir[] = "resources";
// The default output directory (tony.application.output-dir) inside the job's directory (local)
// or its staging directory (YARN); it stays when the rest of the job's files go.
inline constexpr char kOutputsDir[] = "outputs";
// Local backend: the job's shared resources (the venv), unpacked once, read-only.
inline constexpr char kSharedDir[] = "shared";
// YARN: the client's Hadoop configuration (its *-site.xml files), shipped with the job and
// unpacked into every task container as ./hadoop-conf, the tasks' HADOOP_CONF_DIR.
inline constexpr char kHadoopConfZip[] = "hadoop-conf.zip";
inline constexpr char kHadoopConfDir[] = "hadoop-conf";
// The user's keytab, for the AM alone (YarnClusterOptions::am_keytab).
inline constexpr char kAmKeytabFile[] = "tony.keytab";
// With WebHDFS over HTTPS: the authorities the client trusts (its ssl-client.xml truststore, as
// PEM), for the AM's own WebHDFS calls; absent when the client trusts the system's.
inline constexpr char kWebHdfsCaFile[] = "webhdfs-ca.pem";

struct ResourceSpec {
  std::string path;  // as the user wrote it
  std::string name;  // name in the container's working directory
  bool is_archive = false;
};

// Parses `path[::name][#archive]`; the name defaults to the path's last component.
absl::StatusOr<ResourceSpec> ParseResourceSpec(const std::string& text);

// A path on the cluster's file system (hdfs://...), which is localized from where it is rather
// than staged; only the YARN backend reads those.
bool IsRemotePath(std::string_view path);

// The staged copy of a resource inside a job's staging directory.
std::string StagedResourcePath(const std::string& staging_dir, const ResourceSpec& resource);

// Every file a container of a job type gets: the staged source zip unpacked into the working
// directory, the venv zip (`venv_source`: staged or remote; "" for none) into ./venv, shared by
// every task (LocalResource::shared), and the job type's resources (staged, or remote as given).
std::vector<LocalResource> ContainerResources(const std::string& staging_dir, bool has_src,
                                              const std::string& venv_source,
                                              const std::vector<std::string>& resource_specs);

}  // namespace tony::cluster
