#pragma once
// The job's history on HDFS, through WebHDFS (history::HistoryFs). Directories are made 0700;
// files inherit that privacy from them.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "hadoop/webhdfs.h"
#include "history/history_fs.h"

namespace tony::cluster {

std::shared_ptr<history::HistoryFs> HdfsHistoryFs(std::shared_ptr<hadoop::WebHdfsClient> client,
                                                  std::string default_fs);

// tony.history.location (and .intermediate, .finished) on YARN as an HDFS path: a path, or an
// hdfs:// URI on the default file system. "" stays "".
absl::StatusOr<std::string> HistoryPathOnHdfs(const std::string& key, const std::string& value,
                                              const std::string& default_fs);

}  // namespace tony::cluster
