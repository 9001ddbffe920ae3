#pragma once
// A YARN job's files on HDFS before its submission: what the client staged locally in the job's
// directory goes to the job's staging directory, and the tony binary and the zipped Hadoop
// configuration to the user's cache (looked up by content, uploaded only when new). Each upload
// waits for the NameNode to close its file (hundreds of ms), so they all run side by side on a
// few threads, however many files the job has.
//
// Not staged: the job directory's logs/, the job's configuration (tony-final.xml: the AM gets it
// in its credentials, and gives it to each task the same way), the Hadoop configuration's zip
// (cached instead) and the files the submission keeps local.
//
// Threads: Stage blocks its caller; HdfsJobFiles is called from the upload threads.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/yarn/hdfs_job_files.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::cluster {

// What staging put on HDFS for the job's AM.
struct StagedJob {
  hadoop::LocalResource binary;                      // tony, in the cache
  std::optional<hadoop::LocalResource> hadoop_conf;  // hadoop-conf-<digest>.zip, if there is one
  // What the AM localizes under these names besides those two: its keytab, WebHDFS's CA.
  std::map<std::string, hadoop::LocalResource> am_files;
};

// Writes the site files the client loaded (`files`: name to path, HadoopConf::files()) into
// job_dir/hadoop-conf.zip; nothing without any. Each file keeps its source's time, so that the
// same configuration zips to the same bytes, which the cache finds by their digest.
absl::Status ZipHadoopConf(const std::map<std::string, std::string>& files,
                           const std::string& job_dir);

// The files of `job_dir` that go to the staging directory, relative to it, in the directory's
// order; `local_only` names more that stay. An error if the directory cannot be read.
absl::StatusOr<std::vector<std::string>> FilesToStage(const std::string& job_dir,
                                                      const std::vector<std::string>& local_only);

class JobStaging {
 public:
  // files: the user's tony files on HDFS, which outlive this; executable: the tony binary to
  // cache; am_keytab: a keytab the AM logs in with ("" for none), staged 0600.
  JobStaging(HdfsJobFiles* files, std::string executable, std::string am_keytab);

  // Stages the job of `app_id`, whose local files are in `job_dir`, into `staging_dir` (which
  // exists). After a new cache entry, removes the cache's old ones, never one this job uses.
  absl::StatusOr<StagedJob> Stage(const std::string& app_id, const std::string& job_dir,
                                  const std::string& staging_dir,
                                  const std::vector<std::string>& local_only);

 private:
  HdfsJobFiles* const files_;
  const std::string executable_;
  const std::string am_keytab_;
};

}  // namespace tony::cluster
