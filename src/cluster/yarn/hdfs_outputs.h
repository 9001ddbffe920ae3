#pragma once
// A YARN task's outputs when tony.application.output-dir is on HDFS: the executor gives the task a
// local directory (TONY_OUTPUT_DIR, so that any code can write it with plain file I/O) and, once
// the task's process has ended, copies what it holds to the HDFS directory (TONY_OUTPUT_URI)
// through WebHDFS, with the container's HDFS token of that NameNode.
//
// Threads: one caller at a time; the calls block.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hadoop/common/credentials.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/http/http_transport.h"

namespace tony::cluster {

struct UploadedTree {
  int files = 0;
  int64_t bytes = 0;
  // What is neither a regular file nor a directory (a symbolic link, a socket), relative to the
  // local directory: left out.
  std::vector<std::string> skipped;
};

// Copies every file under `local_dir` to the same relative path under `remote_dir` (an absolute
// HDFS path), making the directories 0700 and the files 0600 and replacing a file that is there.
// An empty or missing `local_dir` copies nothing and touches no HDFS. Errors name the file and
// stop the copy.
[[nodiscard]] absl::StatusOr<UploadedTree> UploadTree(hadoop::WebHdfsClient& hdfs,
                                                      const std::string& local_dir,
                                                      const std::string& remote_dir);

// The WebHDFS client of the NameNodes of `uri` (hdfs://authority/path) as a task reaches them:
// their addresses from the job's configuration `conf`, authenticated with the token in `tokens`
// of that NameNode, else as `user` (a cluster without Kerberos), trusting `tls` for HTTPS.
// Errors name the URI.
[[nodiscard]] absl::StatusOr<std::unique_ptr<hadoop::WebHdfsClient>> TaskHdfsClient(
    const hadoop::HadoopConf& conf, const std::string& uri,
    const std::vector<hadoop::Token>& tokens, const std::string& user,
    const hadoop::http::Tls& tls);

}  // namespace tony::cluster
