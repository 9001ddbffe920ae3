#include "cluster/yarn/hdfs_outputs.h"

#include <filesystem>

#include "common/strings.h"
#include "hadoop/hdfs/namenode_client.h"
#include "hadoop/hdfs/nameservice.h"
#include "hadoop/ipc/failover.h"

namespace tony::cluster {

namespace fs = std::filesystem;

absl::StatusOr<UploadedTree> UploadTree(hadoop::WebHdfsClient& hdfs, const std::string& local_dir,
                                        const std::string& remote_dir) {
  UploadedTree uploaded;
  std::error_code ec;
  // Nothing written, nothing to do: not even the directory, which the client has made, and may
  // have removed again as the job ended (an executor that ends after its job must not bring the
  // job's staging directory back).
  if (fs::is_empty(local_dir, ec) || ec) return uploaded;
  if (absl::Status made = hdfs.Mkdirs(remote_dir, 0700); !made.ok()) return made;
  fs::recursive_directory_iterator it(local_dir, fs::directory_options::none, ec);
  if (ec) return absl::NotFoundError(StrCat("cannot read ", local_dir, ": ", ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return absl::InternalError(StrCat("cannot read ", local_dir, ": ", ec.message()));
    const std::string relative = fs::relative(it->path(), local_dir, ec).generic_string();
    const std::string remote = StrCat(remote_dir, "/", relative);
    const fs::file_status status = it->symlink_status(ec);
    if (fs::is_directory(status)) {
      if (absl::Status made = hdfs.Mkdirs(remote, 0700); !made.ok()) return made;
    } else if (fs::is_regular_file(status)) {
      if (absl::Status copied =
              hdfs.CreateFromFile(remote, it->path().string(), /*overwrite=*/true, 0600);
          !copied.ok()) {
        return copied;
      }
      ++uploaded.files;
      uploaded.bytes += static_cast<int64_t>(it->file_size(ec));
    } else {
      uploaded.skipped.push_back(relative);
    }
  }
  return uploaded;
}

absl::StatusOr<std::unique_ptr<hadoop::WebHdfsClient>> TaskHdfsClient(
    const hadoop::HadoopConf& conf, const std::string& uri,
    const std::vector<hadoop::Token>& tokens, const std::string& user,
    const hadoop::http::Tls& tls) {
  absl::StatusOr<hadoop::NameService> namenode = hadoop::ResolveNameService(conf, uri);
  if (!namenode.ok()) {
    return absl::Status(namenode.status().code(),
                        StrCat(uri, ": ", ToStd(namenode.status().message())));
  }
  hadoop::WebHdfsAuth auth{user, nullptr, std::nullopt};
  const std::string service = namenode->TokenService();
  for (const hadoop::Token& token : tokens) {
    if (token.kind == hadoop::kHdfsDelegationTokenKind && token.service == service) {
      auth.delegation = token;
    }
  }
  auto client = std::make_unique<hadoop::WebHdfsClient>(namenode->WebHdfsServers(), auth);
  client->SetFailoverPolicy(hadoop::NameNodeFailoverPolicy(conf, namenode->namenodes.size()));
  client->SetTls(tls);
  return client;
}

}  // namespace tony::cluster
