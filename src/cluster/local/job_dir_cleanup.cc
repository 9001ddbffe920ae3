#include "cluster/local/job_dir_cleanup.h"

#include <filesystem>

#include "cluster/staging.h"
#include "common/strings.h"

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

// Gives the owner write and search permission on every directory below `path` (and on it), so
// that their entries can be removed. Errors are left to the removal that follows.
void MakeDirectoriesWritable(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(path, ec))) return;
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec) && !it->is_symlink(type_ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, type_ec);
    }
  }
}

}  // namespace

absl::Status RemoveTree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    MakeDirectoriesWritable(path);
    ec.clear();
    fs::remove_all(path, ec);
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return absl::InternalError(StrCat("cannot remove ", path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

std::vector<absl::Status> RemoveJobWorkFiles(const std::string& job_dir, bool staged_files) {
  std::vector<std::string> paths = {StrCat(job_dir, "/containers"), StrCat(job_dir, "/secrets"),
                                    StrCat(job_dir, "/", kSharedDir)};
  if (staged_files) {
    for (const char* name : {kSrcZip, kVenvZip, kResourcesDir}) {
      paths.push_back(StrCat(job_dir, "/", name));
    }
  }
  std::vector<absl::Status> errors;
  for (const std::string& path : paths) {
    if (absl::Status removed = RemoveTree(path); !removed.ok()) errors.push_back(removed);
  }
  return errors;
}

}  // namespace tony::cluster
