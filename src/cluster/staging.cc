#include "cluster/staging.h"

#include "common/strings.h"

namespace tony::cluster {

absl::StatusOr<ResourceSpec> ParseResourceSpec(const std::string& text) {
  ResourceSpec spec;
  std::string rest = text;
  if (const size_t hash = rest.rfind('#'); hash != std::string::npos) {
    const std::string flag = rest.substr(hash + 1);
    if (flag != "archive") {
      return absl::InvalidArgumentError(
          StrCat("resource \"", text, "\": unknown suffix #", flag, " (expected #archive)"));
    }
    spec.is_archive = true;
    rest.resize(hash);
  }
  if (const size_t sep = rest.find("::"); sep != std::string::npos) {
    spec.name = rest.substr(sep + 2);
    rest.resize(sep);
  }
  spec.path = rest;
  if (spec.path.empty()) {
    return absl::InvalidArgumentError(StrCat("resource \"", text, "\": no path"));
  }
  if (spec.name.empty()) {
    std::string trimmed = spec.path;
    while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
    const size_t slash = trimmed.rfind('/');
    spec.name = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  }
  if (spec.name.empty() || spec.name == "." || spec.name == ".." ||
      spec.name.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(
        StrCat("resource \"", text, "\": invalid name \"", spec.name, "\""));
  }
  return spec;
}

bool IsRemotePath(std::string_view path) { return path.starts_with("hdfs://"); }

std::string StagedResourcePath(const std::string& staging_dir, const ResourceSpec& resource) {
  return StrCat(staging_dir, "/", kResourcesDir, "/", resource.name);
}

std::vector<LocalResource> ContainerResources(const std::string& staging_dir, bool has_src,
                                              const std::string& venv_source,
                                              const std::vector<std::string>& resource_specs) {
  std::vector<LocalResource> resources;
  if (has_src) resources.push_back({StrCat(staging_dir, "/", kSrcZip), "", true});
  if (!venv_source.empty()) resources.push_back({venv_source, kVenvDir, true, /*shared=*/true});
  for (const std::string& text : resource_specs) {
    absl::StatusOr<ResourceSpec> spec = ParseResourceSpec(text);
    if (!spec.ok()) continue;  // validated by the client before staging
    resources.push_back(
        {IsRemotePath(spec->path) ? spec->path : StagedResourcePath(staging_dir, *spec), spec->name,
         spec->is_archive});
  }
  return resources;
}

}  // namespace tony::cluster
