#include "client/job_stager.h"

#include <filesystem>

#include "client/preflight.h"
#include "cluster/staging.h"
#include "common/archive.h"
#include "common/files.h"
#include "common/strings.h"

namespace tony::client {
namespace {

namespace fs = std::filesystem;

absl::Status Copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (fs::is_directory(from, ec)) {
    fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
  } else {
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  }
  if (ec) {
    return absl::InternalError(
        StrCat("cannot stage ", from.string(), " as ", to.string(), ": ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status StageJob(const config::Configuration& conf, const config::JobSpec& spec,
                      const std::string& working_dir, const std::string& job_dir,
                      const rpc::JobCredentials& credentials) {
  std::error_code ec;
  // $TONY_HOME/jobs/<app>: every level private (a TONY_HOME that is a link is followed).
  const fs::path jobs = fs::path(job_dir).parent_path();
  if (absl::Status home = EnsurePrivateDir(jobs.parent_path().string(), /*follow_link=*/true);
      !home.ok()) {
    return home;
  }
  for (const fs::path& dir : {jobs, fs::path(job_dir), fs::path(job_dir) / "logs"}) {
    if (absl::Status made = EnsurePrivateDir(dir.string()); !made.ok()) return made;
  }
  if (absl::Status s = rpc::WriteJobCredentials(job_dir, credentials); !s.ok()) return s;
  if (absl::Status s = WriteFile(StrCat(job_dir, "/", cluster::kFinalConfFile), conf.ToXml(), 0600);
      !s.ok()) {
    return s;
  }
  const std::string& src_dir = spec.src_dir;
  if (!src_dir.empty()) {
    const fs::path src = ResolveInputPath(working_dir, src_dir);
    const std::string target = StrCat(job_dir, "/", cluster::kSrcZip);
    absl::Status staged = fs::is_directory(src, ec) ? CreateZipFromDirectory(src.string(), target)
                                                    : Copy(src, target);
    if (!staged.ok()) return staged;
  }
  const std::string& venv = spec.python_venv;
  if (!venv.empty() && !cluster::IsRemotePath(venv)) {
    if (absl::Status s =
            Copy(ResolveInputPath(working_dir, venv), StrCat(job_dir, "/", cluster::kVenvZip));
        !s.ok()) {
      return s;
    }
  }
  for (const auto& [name, type] : spec.job_types) {
    for (const std::string& text : type.localized_resources) {
      absl::StatusOr<cluster::ResourceSpec> resource = cluster::ParseResourceSpec(text);
      if (!resource.ok()) return resource.status();
      if (cluster::IsRemotePath(resource->path)) continue;  // localized from where it is
      const fs::path staged = cluster::StagedResourcePath(job_dir, *resource);
      fs::create_directories(staged.parent_path(), ec);
      if (fs::exists(staged, ec)) continue;
      if (absl::Status s = Copy(ResolveInputPath(working_dir, resource->path), staged); !s.ok())
        return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace tony::client
