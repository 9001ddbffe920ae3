#pragma once
// A user's tony files on HDFS, as YARN localizes them: the jobs' staging directories and the
// content-addressed cache of the tony binary and of the Hadoop configuration, under one directory
// ("/user/alice/.tony") of one file system (fs.defaultFS's, or with ViewFS the NameNode its mount
// table names for it).
//
// Threads: every method may be called from several threads at once (the client uploads a job's
// files side by side); the WebHdfsClient is shared.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::cluster {

// Where a user's tony files are: the hdfs:// file system and the directory on it.
struct TonyHome {
  std::string fs;    // "hdfs://ns1"
  std::string root;  // "/user/alice/.tony"
};
// fs.defaultFS and /user/<user>/.tony; with ViewFS, <homedir>/<user>/.tony resolved through the
// mount table to its NameNode and path, as MapReduce's client resolves its staging directory.
// Errors (a table tony cannot read, a directory under no link or not on HDFS) name fs.defaultFS.
absl::StatusOr<TonyHome> LocateTonyHome(const hadoop::HadoopConf& conf, const std::string& user);

class HdfsJobFiles {
 public:
  // hdfs: the client of `fs`'s NameNodes, which outlives this; fs: "hdfs://ns1"; root: the
  // directory on it ("/user/alice/.tony").
  HdfsJobFiles(hadoop::WebHdfsClient* hdfs, std::string fs, std::string root);

  // Where a job's files are staged.
  std::string StagingDir(const std::string& app_id) const;
  // Uploads a local file to `path` and describes it. 0644 for the job's files: they lie in the
  // 0700 staging directory, which no other user can enter; the keytab is uploaded 0600 all the
  // same.
  absl::StatusOr<hadoop::LocalResource> Upload(const std::string& local, const std::string& path,
                                               int permission = 0644);
  // The file at `path` as YARN localizes it: its URL, exact length and modification time.
  absl::StatusOr<hadoop::LocalResource> Describe(const std::string& path);
  // `executable` in the cache, as "tony-<digest>" (0755). *uploaded says whether it was not
  // there yet.
  absl::StatusOr<hadoop::LocalResource> CachedBinary(const std::string& executable,
                                                     const std::string& app_id, bool* uploaded);
  // The zipped Hadoop configuration in the cache, as "hadoop-conf-<digest>.zip" (0600; the
  // NodeManager unpacks an archive by its name's extension).
  absl::StatusOr<hadoop::LocalResource> CachedHadoopConf(const std::string& zip,
                                                         const std::string& app_id, bool* uploaded);
  // Removes the cache's entries that were not replaced for 30 days, and partial uploads older
  // than a day, except the paths in `in_use` (what the job being submitted uses, however old).
  // A job still running on a removed entry keeps the containers it has; a container it starts
  // later (a restart) cannot localize the entry any more.
  void RemoveOldCacheEntries(const std::vector<std::string>& in_use);

 private:
  // `local` in the content-addressed cache (<root>/cache/<prefix><digest><suffix>), uploaded if
  // it is not there yet (under a name of the job's own, then renamed into place, so that a cached
  // file is whole).
  absl::StatusOr<hadoop::LocalResource> Cached(const std::string& local, const std::string& prefix,
                                               const std::string& suffix, int permission,
                                               const std::string& app_id, bool* uploaded);

  hadoop::WebHdfsClient* const hdfs_;
  const std::string fs_;
  const std::string root_;
};

}  // namespace tony::cluster
