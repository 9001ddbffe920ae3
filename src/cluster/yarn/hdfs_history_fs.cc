#include "cluster/yarn/hdfs_history_fs.h"

#include "common/strings.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::cluster {
namespace {

class HdfsFs final : public history::HistoryFs {
 public:
  HdfsFs(std::shared_ptr<hadoop::WebHdfsClient> client, std::string default_fs)
      : client_(std::move(client)), default_fs_(std::move(default_fs)) {}

  absl::Status MakeDirs(const std::string& path) override { return client_->Mkdirs(path, 0700); }

  absl::Status Write(const std::string& path, std::string_view data) override {
    return client_->Create(path, data, /*overwrite=*/true);
  }

  absl::Status Append(const std::string& path, std::string_view data) override {
    absl::Status appended = client_->Append(path, data);
    if (absl::IsNotFound(appended)) return client_->Create(path, data, /*overwrite=*/false);
    return appended;
  }

  absl::Status Rename(const std::string& from, const std::string& to) override {
    return client_->Rename(from, to);
  }

  absl::StatusOr<std::vector<history::HistoryEntry>> List(const std::string& dir) override {
    absl::StatusOr<std::vector<hadoop::FileStatus>> listed = client_->ListStatus(dir);
    if (!listed.ok()) return listed.status();
    std::vector<history::HistoryEntry> entries;
    for (const hadoop::FileStatus& status : *listed) {
      entries.push_back(
          {status.path_suffix, status.is_directory, status.length, status.modification_time_ms});
    }
    return entries;
  }

  absl::StatusOr<std::string> Read(const std::string& path, int64_t offset,
                                   int64_t length) override {
    return client_->Open(path, offset, length);
  }

  absl::StatusOr<history::HistoryEntry> Stat(const std::string& path) override {
    absl::StatusOr<hadoop::FileStatus> status = client_->GetFileStatus(path);
    if (!status.ok()) return status.status();
    const size_t slash = path.rfind('/');
    return history::HistoryEntry{slash == std::string::npos ? path : path.substr(slash + 1),
                                 status->is_directory, status->length,
                                 status->modification_time_ms};
  }

  absl::Status Remove(const std::string& path) override {
    absl::Status deleted = client_->Delete(path, /*recursive=*/true);
    return absl::IsNotFound(deleted) ? absl::OkStatus() : deleted;
  }

  std::string Describe(const std::string& path) const override { return StrCat(default_fs_, path); }

 private:
  std::shared_ptr<hadoop::WebHdfsClient> client_;
  std::string default_fs_;
};

}  // namespace

std::shared_ptr<history::HistoryFs> HdfsHistoryFs(std::shared_ptr<hadoop::WebHdfsClient> client,
                                                  std::string default_fs) {
  while (default_fs.ends_with('/')) default_fs.pop_back();
  return std::make_shared<HdfsFs>(std::move(client), std::move(default_fs));
}

namespace {

absl::StatusOr<std::string> HistoryPathOnHdfs(const std::string& key, const std::string& value,
                                              const std::string& default_fs) {
  if (value.empty()) return value;
  if (value.starts_with("/")) return value;
  absl::StatusOr<hadoop::YarnUrl> url = hadoop::ResolveOnDefaultFs(value, default_fs);
  if (!url.ok()) {
    return absl::InvalidArgumentError(StrCat(key, ": ", ToStd(url.status().message())));
  }
  return url->file;
}

}  // namespace

absl::StatusOr<history::HistoryDirs> HdfsHistoryDirs(const std::string& location,
                                                     const std::string& intermediate,
                                                     const std::string& finished,
                                                     const std::string& default_fs,
                                                     const std::string& default_root) {
  absl::StatusOr<std::string> root =
      HistoryPathOnHdfs("tony.history.location", location, default_fs);
  absl::StatusOr<std::string> running =
      HistoryPathOnHdfs("tony.history.intermediate", intermediate, default_fs);
  absl::StatusOr<std::string> ended =
      HistoryPathOnHdfs("tony.history.finished", finished, default_fs);
  for (const absl::StatusOr<std::string>* path : {&root, &running, &ended}) {
    if (!path->ok()) return path->status();
  }
  return history::DirsAt(root->empty() ? default_root : *root, *running, *ended);
}

}  // namespace tony::cluster
