#pragma once
// The job's history on HDFS, through WebHDFS (history::HistoryFs). Directories are made 0700;
// files inherit that privacy from them.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "hadoop/hdfs/webhdfs.h"
#include "history/history_format.h"
#include "history/history_fs.h"

namespace tony::cluster {

std::shared_ptr<history::HistoryFs> HdfsHistoryFs(std::shared_ptr<hadoop::WebHdfsClient> client,
                                                  std::string default_fs);

// The history directories on HDFS from tony.history.location, .intermediate and .finished: each a
// path or an hdfs:// URI on `default_fs`; location "" is `default_root` (the user's
// .tony/history directory). Errors name the key.
absl::StatusOr<history::HistoryDirs> HdfsHistoryDirs(const std::string& location,
                                                     const std::string& intermediate,
                                                     const std::string& finished,
                                                     const std::string& default_fs,
                                                     const std::string& default_root);

}  // namespace tony::cluster
