// LocalContainerAllocator::Localize: a container's files in its working directory, and the job's
// shared, read-only copies (local_container_allocator.h).

#include <filesystem>
#include <string>
#include <vector>

#include "cluster/local/job_dir_cleanup.h"
#include "cluster/local/local_container_allocator.h"
#include "cluster/staging.h"
#include "common/archive.h"
#include "common/strings.h"

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

// Takes every write permission off `root` and everything below it (not following links).
absl::Status MakeReadOnly(const fs::path& root) {
  constexpr fs::perms kWrite =
      fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write;
  std::error_code ec;
  std::vector<fs::path> dirs = {root};
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec)) continue;
    if (it->is_directory(ec)) {
      dirs.push_back(it->path());  // after their entries: the walk still needs to enter them
    } else {
      fs::permissions(it->path(), kWrite, fs::perm_options::remove, ec);
    }
    if (ec) break;
  }
  for (auto dir = dirs.rbegin(); !ec && dir != dirs.rend(); ++dir) {
    fs::permissions(*dir, kWrite, fs::perm_options::remove, ec);
  }
  if (ec)
    return absl::InternalError(StrCat("cannot make ", root.string(), " read-only: ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

absl::Status LocalContainerAllocator::Localize(const LocalResource& resource,
                                               const std::string& work_dir) {
  const fs::path target =
      resource.name.empty() ? fs::path(work_dir) : fs::path(work_dir) / resource.name;
  std::error_code ec;
  if (resource.shared && resource.is_archive && !resource.name.empty()) {
    // One read-only copy for the whole job (a retried AM finds it too): unpacked beside, then
    // renamed into place, so that a copy that exists is whole. The containers launched at the
    // same time wait for the one that unpacks it.
    const fs::path shared = fs::path(options_.job_dir) / kSharedDir / resource.name;
    MutexLock unpacking(shared_mu_);
    if (!fs::exists(shared, ec)) {
      const fs::path partial = shared.string() + ".partial";
      if (absl::Status removed = RemoveTree(partial.string()); !removed.ok()) return removed;
      if (absl::Status s = ExtractArchive(resource.source, partial.string()); !s.ok()) return s;
      if (absl::Status s = MakeReadOnly(partial); !s.ok()) return s;
      fs::rename(partial, shared, ec);
      if (ec) {
        return absl::InternalError(
            StrCat("cannot move ", partial.string(), " into place: ", ec.message()));
      }
    }
    fs::create_directory_symlink(shared, target, ec);
    if (ec) {
      return absl::InternalError(
          StrCat("cannot link ", target.string(), " to ", shared.string(), ": ", ec.message()));
    }
    return absl::OkStatus();
  }
  if (resource.is_archive) return ExtractArchive(resource.source, target.string());
  if (fs::is_directory(resource.source, ec)) {
    fs::copy(resource.source, target, fs::copy_options::recursive, ec);
  } else {
    fs::copy_file(resource.source, target, fs::copy_options::overwrite_existing, ec);
  }
  if (ec) {
    return absl::FailedPreconditionError(
        StrCat("cannot localize ", resource.source, " as ", target.string(), ": ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace tony::cluster
