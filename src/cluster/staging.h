#pragma once
// Where a job's files are staged and how `tony.<t>.resources` entries are written
// (`path[::name][#archive]`). Shared by the client, which stages, and the AM, which localizes.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/container_allocator.h"

namespace tony::cluster {

inline constexpr char kFinalConfFile[] = "tony-final.xml";
inline constexpr char kSecretFile[] = "secret";
inline constexpr char kSrcZip[] = "src.zip";
inline constexpr char kVenvZip[] = "venv.zip";
inline constexpr char kVenvDir[] = "venv";
inline constexpr char kResourcesDir[] = "resources";

struct ResourceSpec {
  std::string path;  // as the user wrote it
  std::string name;  // name in the container's working directory
  bool is_archive = false;
};

// Parses `path[::name][#archive]`; the name defaults to the path's last component.
absl::StatusOr<ResourceSpec> ParseResourceSpec(const std::string& text);

// The staged copy of a resource inside a job's staging directory.
std::string StagedResourcePath(const std::string& staging_dir, const ResourceSpec& resource);

// Every file a container of a job type gets, from the staged job: the source zip unpacked into
// the working directory, the venv zip into ./venv, and the job type's resources.
std::vector<LocalResource> ContainerResources(const std::string& staging_dir, bool has_src,
                                              bool has_venv,
                                              const std::vector<std::string>& resource_specs);

}  // namespace tony::cluster
