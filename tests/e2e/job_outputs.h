#pragma once
// What a job left in its output directory (tony.application.output-dir), as the end-to-end tests
// look at it: a local path, or an hdfs:// URI on the mini cluster's HDFS.

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <regex>
#include <string>

#include "hadoop/test_cluster.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::testing {

struct OutputEntry {
  int mode = 0;  // permission bits
  int64_t size = 0;
  bool is_directory = false;
};

// The file or directory `where` names (a local path, or an hdfs:// URI read through `cluster`'s
// WebHDFS); nullopt if it is missing.
inline std::optional<OutputEntry> StatOutput(const std::string& where, const TestCluster* cluster) {
  if (where.starts_with("hdfs://")) {
    if (cluster == nullptr) return std::nullopt;
    absl::StatusOr<hadoop::YarnUrl> url = hadoop::YarnUrl::Parse(where);
    absl::StatusOr<hadoop::WebHdfsClient> hdfs = cluster->Hdfs();
    if (!url.ok() || !hdfs.ok()) return std::nullopt;
    absl::StatusOr<hadoop::FileStatus> status = hdfs->GetFileStatus(url->file);
    if (!status.ok()) return std::nullopt;
    return OutputEntry{status->permission & 0777, status->length, status->is_directory};
  }
  struct stat info {};
  if (stat(where.c_str(), &info) != 0) return std::nullopt;
  return OutputEntry{static_cast<int>(info.st_mode & 0777), static_cast<int64_t>(info.st_size),
                     S_ISDIR(info.st_mode)};
}

// Where the client's summary says the job's outputs are ("outputs: <where>"); "" if it does not.
inline std::string SummaryOutputs(const std::string& out) {
  std::smatch match;
  if (!std::regex_search(out, match, std::regex(R"((?:^|\n)outputs: (\S+)\n)"))) return "";
  return match[1].str();
}

}  // namespace tony::testing
