#include "cluster/yarn/hdfs_job_files.h"

#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <vector>

#include "common/strings.h"
#include "hadoop/hdfs/viewfs.h"

namespace tony::cluster {
namespace {

// A file of the cache is named by its content and never changes under that name, so every
// NodeManager keeps one copy for the user across jobs (PRIVATE) instead of one per application:
// a later job's containers find the binary and the configuration there, with no download.
hadoop::LocalResource Reusable(hadoop::LocalResource resource) {
  resource.visibility = hadoop::LocalResourceVisibility::kPrivate;
  return resource;
}

constexpr int64_t kDayMs = int64_t{24} * 3600 * 1000;
// How long a cached file stays after it was uploaded.
constexpr int64_t kCacheRetentionDays = 30;
// The names of the cache's entries: the tony binary's, the zipped Hadoop configuration's.
constexpr char kBinaryPrefix[] = "tony-";
constexpr char kHadoopConfPrefix[] = "hadoop-conf-";

// The SHA-256 of the file's content, in hex.
absl::StatusOr<std::string> FileSha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read ", path));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (ctx == nullptr || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return absl::InternalError("SHA-256 is not available");
  }
  std::vector<char> buffer(1 << 20);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace

absl::StatusOr<TonyHome> LocateTonyHome(const hadoop::HadoopConf& conf, const std::string& user) {
  TonyHome home{conf.DefaultFs(), StrCat("/user/", user, "/.tony")};
  if (!hadoop::IsViewFs(home.fs)) return home;
  const auto bad = [&conf](const absl::Status& status) {
    return absl::InvalidArgumentError(
        StrCat("fs.defaultFS (", conf.DefaultFs(), "): ", ToStd(status.message())));
  };
  absl::StatusOr<hadoop::MountTable> table = hadoop::LoadMountTable(conf, home.fs);
  if (!table.ok()) return bad(table.status());
  absl::StatusOr<std::string> resolved =
      table->Resolve(StrCat(table->homedir, "/", user, "/.tony"));
  if (!resolved.ok()) return bad(resolved.status());
  absl::StatusOr<hadoop::YarnUrl> url = hadoop::YarnUrl::Parse(*resolved);
  if (!url.ok() || url->scheme != "hdfs") {
    return bad(absl::InvalidArgumentError(StrCat("tony's directory ", table->homedir, "/", user,
                                                 "/.tony is ", *resolved,
                                                 " through the mount table, not on HDFS")));
  }
  home.root = url->file;
  url->file.clear();
  home.fs = url->ToString();
  return home;
}

HdfsJobFiles::HdfsJobFiles(hadoop::WebHdfsClient* hdfs, std::string fs, std::string root)
    : hdfs_(hdfs), fs_(std::move(fs)), root_(std::move(root)) {}

std::string HdfsJobFiles::StagingDir(const std::string& app_id) const {
  return StrCat(root_, "/", app_id);
}

absl::StatusOr<hadoop::LocalResource> HdfsJobFiles::Upload(const std::string& local,
                                                           const std::string& path,
                                                           int permission) {
  if (absl::Status s = hdfs_->CreateFromFile(path, local, /*overwrite=*/true, permission);
      !s.ok()) {
    return s;
  }
  return Describe(path);
}

absl::StatusOr<hadoop::LocalResource> HdfsJobFiles::CachedBinary(const std::string& executable,
                                                                 const std::string& app_id,
                                                                 bool* uploaded) {
  // 0755: executable once localized; no other user reaches it, the cache being the user's 0700
  // directory, and it holds no secret (the job's credentials travel apart).
  return Cached(executable, kBinaryPrefix, "", 0755, app_id, uploaded);
}

absl::StatusOr<hadoop::LocalResource> HdfsJobFiles::CachedHadoopConf(const std::string& zip,
                                                                     const std::string& app_id,
                                                                     bool* uploaded) {
  return Cached(zip, kHadoopConfPrefix, ".zip", 0600, app_id, uploaded);
}

absl::StatusOr<hadoop::LocalResource> HdfsJobFiles::Cached(
    const std::string& local, const std::string& prefix, const std::string& suffix, int permission,
    const std::string& app_id, bool* uploaded) {
  *uploaded = false;
  absl::StatusOr<std::string> digest = FileSha256(local);
  if (!digest.ok()) return digest.status();
  const std::string dir = StrCat(root_, "/cache");
  const std::string path = StrCat(dir, "/", prefix, digest->substr(0, 32), suffix);
  absl::StatusOr<hadoop::LocalResource> cached = Describe(path);
  if (cached.ok()) return Reusable(*std::move(cached));
  if (cached.status().code() != absl::StatusCode::kNotFound) return cached;
  if (absl::Status s = hdfs_->Mkdirs(dir, 0700); !s.ok()) return s;
  const std::string partial = StrCat(path, ".", app_id, ".partial");
  // The cache is the user's 0700 directory; the binary is 0755 for the NodeManager to run it.
  absl::StatusOr<hadoop::LocalResource> sent = Upload(local, partial, permission);
  if (!sent.ok()) return sent.status();
  if (absl::Status renamed = hdfs_->Rename(partial, path); !renamed.ok()) {
    (void)hdfs_->Delete(partial, /*recursive=*/false);  // another job put the same file there
  }
  *uploaded = true;
  absl::StatusOr<hadoop::LocalResource> described = Describe(path);
  if (!described.ok()) return described;
  return Reusable(*std::move(described));
}

void HdfsJobFiles::RemoveOldCacheEntries(const std::vector<std::string>& in_use) {
  const std::string dir = StrCat(root_, "/cache");
  absl::StatusOr<std::vector<hadoop::FileStatus>> entries = hdfs_->ListStatus(dir);
  if (!entries.ok()) return;
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  for (const hadoop::FileStatus& entry : *entries) {
    const std::string& name = entry.path_suffix;
    const std::string path = StrCat(dir, "/", name);
    const int64_t age_ms = now_ms - entry.modification_time_ms;
    const bool old =
        name.ends_with(".partial") ? age_ms > kDayMs : age_ms > kCacheRetentionDays * kDayMs;
    const bool ours = name.starts_with(kBinaryPrefix) || name.starts_with(kHadoopConfPrefix);
    if (ours && old && std::find(in_use.begin(), in_use.end(), path) == in_use.end()) {
      (void)hdfs_->Delete(path, /*recursive=*/false);
    }
  }
}

absl::StatusOr<hadoop::LocalResource> HdfsJobFiles::Describe(const std::string& path) {
  // YARN checks the exact length and modification time when it localizes the file.
  absl::StatusOr<hadoop::FileStatus> status = hdfs_->GetFileStatus(path);
  if (!status.ok()) return status.status();
  absl::StatusOr<hadoop::YarnUrl> url = hadoop::YarnUrl::Parse(fs_);
  if (!url.ok()) return url.status();
  hadoop::LocalResource resource;
  resource.url = *url;
  resource.url.file = path;
  resource.size = status->length;
  resource.timestamp_ms = status->modification_time_ms;
  return resource;
}

}  // namespace tony::cluster
