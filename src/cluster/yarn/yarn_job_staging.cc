#include "cluster/yarn/yarn_job_staging.h"

#include <algorithm>
#include <filesystem>
#include <future>

#include "cluster/staging.h"
#include "common/archive.h"
#include "common/strings.h"
#include "common/worker_pool.h"

namespace tony::cluster {
namespace {

namespace fs = std::filesystem;

// How many of a job's files go to HDFS at once: each upload is mostly waiting on the NameNode and
// a DataNode, so a few at once hide that, and more only crowd the NameNode.
constexpr int kUploadThreads = 8;

using Upload = std::future<absl::StatusOr<hadoop::LocalResource>>;

}  // namespace

absl::Status ZipHadoopConf(const std::map<std::string, std::string>& files,
                           const std::string& job_dir) {
  if (files.empty()) return absl::OkStatus();
  const fs::path scratch = fs::path(job_dir) / ".hadoop-conf";
  std::error_code ec;
  fs::create_directories(scratch, ec);
  for (const auto& [name, path] : files) {
    if (ec) break;
    fs::copy_file(path, scratch / name, fs::copy_options::overwrite_existing, ec);
    const fs::file_time_type modified = ec ? fs::file_time_type{} : fs::last_write_time(path, ec);
    if (!ec) fs::last_write_time(scratch / name, modified, ec);
  }
  absl::Status zipped =
      ec ? absl::InternalError(StrCat("cannot copy the Hadoop configuration: ", ec.message()))
         : CreateZipFromDirectory(scratch.string(), StrCat(job_dir, "/", kHadoopConfZip));
  fs::remove_all(scratch, ec);
  return zipped;
}

absl::StatusOr<std::vector<std::string>> FilesToStage(const std::string& job_dir,
                                                      const std::vector<std::string>& local_only) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(job_dir, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string relative = fs::relative(it->path(), job_dir).string();
    if (relative.starts_with("logs/") || relative == kFinalConfFile || relative == kHadoopConfZip ||
        std::find(local_only.begin(), local_only.end(), relative) != local_only.end()) {
      continue;
    }
    files.push_back(std::move(relative));
  }
  if (ec) {
    return absl::InternalError(
        StrCat("cannot read the job directory ", job_dir, ": ", ec.message()));
  }
  return files;
}

JobStaging::JobStaging(HdfsJobFiles* files, std::string executable, std::string am_keytab)
    : files_(files), executable_(std::move(executable)), am_keytab_(std::move(am_keytab)) {}

absl::StatusOr<StagedJob> JobStaging::Stage(const std::string& app_id, const std::string& job_dir,
                                            const std::string& staging_dir,
                                            const std::vector<std::string>& local_only) {
  absl::StatusOr<std::vector<std::string>> to_stage = FilesToStage(job_dir, local_only);
  if (!to_stage.ok()) return to_stage.status();
  WorkerPool uploads(kUploadThreads);
  std::vector<std::pair<std::string, Upload>> staged;
  for (const std::string& relative : *to_stage) {
    staged.emplace_back(relative, uploads.Submit([this, local = StrCat(job_dir, "/", relative),
                                                  remote = StrCat(staging_dir, "/", relative)] {
      return files_->Upload(local, remote);
    }));
  }
  if (!am_keytab_.empty()) {
    staged.emplace_back(kAmKeytabFile, uploads.Submit([this, &staging_dir] {
      return files_->Upload(am_keytab_, StrCat(staging_dir, "/", kAmKeytabFile), 0600);
    }));
  }
  bool binary_uploaded = false;
  Upload binary = uploads.Submit([this, &app_id, &binary_uploaded] {
    return files_->CachedBinary(executable_, app_id, &binary_uploaded);
  });
  const std::string conf_zip = StrCat(job_dir, "/", kHadoopConfZip);
  const bool has_conf = fs::exists(conf_zip);
  bool conf_uploaded = false;
  Upload conf;
  if (has_conf) {
    conf = uploads.Submit([this, &conf_zip, &app_id, &conf_uploaded] {
      return files_->CachedHadoopConf(conf_zip, app_id, &conf_uploaded);
    });
  }

  StagedJob job;
  absl::Status failed;
  for (auto& [relative, upload] : staged) {
    absl::StatusOr<hadoop::LocalResource> uploaded = upload.get();
    if (!uploaded.ok()) {
      if (failed.ok()) failed = uploaded.status();
    } else if (relative == kAmKeytabFile || relative == kWebHdfsCaFile) {
      job.am_files[relative] = *uploaded;
    }
  }
  absl::StatusOr<hadoop::LocalResource> cached_binary = binary.get();
  absl::StatusOr<hadoop::LocalResource> cached_conf =
      has_conf ? conf.get() : absl::StatusOr<hadoop::LocalResource>(hadoop::LocalResource{});
  if (!failed.ok()) return failed;
  if (!cached_binary.ok()) return cached_binary.status();
  if (!cached_conf.ok()) return cached_conf.status();
  job.binary = *cached_binary;
  if (has_conf) job.hadoop_conf = *cached_conf;
  // Old entries go when a new one came in, but never one this job uses, however old.
  if (binary_uploaded || conf_uploaded) {
    std::vector<std::string> in_use = {job.binary.url.file};
    if (job.hadoop_conf) in_use.push_back(job.hadoop_conf->url.file);
    files_->RemoveOldCacheEntries(in_use);
  }
  return job;
}

}  // namespace tony::cluster
