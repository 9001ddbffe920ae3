#pragma once
// ViewFS (fs.defaultFS=viewfs://<table>/): a client-side mount table over other file systems, as
// Hadoop's ViewFileSystem reads it from the client's configuration.
//
// - fs.viewfs.mounttable.<table>.link.<path> = <target URI>: <path> (absolute) and everything
//   below it is <target URI> and the same below it. A path goes to the link with the longest
//   matching prefix, by whole path components.
// - fs.viewfs.mounttable.<table>.linkFallback = <target URI>: where a path under no link goes
//   (the same path below the target). Links do not nest (Hadoop refuses a link under another).
// - fs.viewfs.mounttable.<table>.homedir: the parent of users' home directories (/user).
// - viewfs:/// (no table) is the table fs.viewfs.mounttable.default.name.key names ("default").
// linkMerge, linkMergeSlash, linkNfly and linkRegex are not read: a table that has one is refused,
// naming the key. tony resolves every ViewFS path it uses to its target, so what it stages,
// localizes and writes is on the target file system, and it fetches a delegation token of each
// target NameNode.
//
// Threads: pure functions of the configuration.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hadoop/common/hadoop_conf.h"

namespace tony::hadoop {

struct MountTable {
  struct Link {
    std::string path;    // "/user", "/data/logs": absolute, no trailing slash
    std::string target;  // "hdfs://ns1/user", without a trailing slash
  };
  std::string name;
  std::vector<Link> links;
  std::string fallback;  // the linkFallback's target, or ""
  std::string homedir = "/user";

  // The target URI of an absolute path of this table ("/user/alice/x" ->
  // "hdfs://ns1/user/alice/x"). kNotFound, naming the table, for a path under no link without a
  // fallback.
  absl::StatusOr<std::string> Resolve(std::string_view path) const;
  // The distinct file systems the table names ("hdfs://ns1", "hdfs://nn2:8020"), the links' in
  // order, then the fallback's: the ones a job's tokens must cover.
  std::vector<std::string> TargetFileSystems() const;
  // "viewfs://<name>", for messages.
  std::string Uri() const { return "viewfs://" + name; }
};

// Whether `uri` is a viewfs:// URI.
bool IsViewFs(std::string_view uri);

// The mount table a viewfs:// URI names. kInvalidArgument, naming the key, for a table with no
// links and no fallback, a link whose path is not absolute or whose target is not a URI, or a
// kind of link tony does not read.
absl::StatusOr<MountTable> LoadMountTable(const HadoopConf& conf, std::string_view viewfs_uri);

// The hdfs:// (or other) URI a viewfs:// URI names, through its mount table; any other URI is
// returned as it is.
absl::StatusOr<std::string> ResolveViewFs(const HadoopConf& conf, std::string_view uri);

// The URI an absolute path of fs.defaultFS (a viewfs:// one) names, through its mount table.
absl::StatusOr<std::string> ResolveDefaultFsPath(const HadoopConf& conf, std::string_view path);

// "/a//b/" -> "/a/b" ("/" stays "/"), as ViewFS compares paths.
std::string NormalizePath(std::string_view path);

}  // namespace tony::hadoop
