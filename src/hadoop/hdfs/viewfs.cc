#include "hadoop/hdfs/viewfs.h"

#include <algorithm>

#include "common/strings.h"

namespace tony::hadoop {
namespace {

constexpr std::string_view kScheme = "viewfs://";
constexpr char kPrefix[] = "fs.viewfs.mounttable.";

std::string WithoutTrailingSlash(std::string target) {
  while (target.size() > 1 && target.ends_with('/') && !target.ends_with("://")) target.pop_back();
  return target;
}

// "scheme://authority" of a URI; "" when it has none.
std::string FileSystemOf(std::string_view uri) {
  const size_t scheme = uri.find("://");
  if (scheme == std::string_view::npos) return "";
  const size_t path = uri.find('/', scheme + 3);
  return std::string(uri.substr(0, path));
}

// Whether `path` is `prefix` or lies below it (whole components).
bool Under(std::string_view path, std::string_view prefix) {
  if (prefix == "/") return true;
  return path == prefix ||
         (path.starts_with(prefix) && path.size() > prefix.size() && path[prefix.size()] == '/');
}

// The path below `prefix` ("/user/a" under "/user" is "/a"; the prefix itself is "").
std::string_view Below(std::string_view path, std::string_view prefix) {
  return prefix == "/" ? path : path.substr(prefix.size());
}

}  // namespace

bool IsViewFs(std::string_view uri) { return uri.starts_with(kScheme); }

std::string NormalizePath(std::string_view path) {
  std::string out;
  for (std::string_view part : Split(path, '/')) {
    if (!part.empty()) out += StrCat("/", part);
  }
  return out.empty() ? "/" : out;
}

absl::StatusOr<std::string> MountTable::Resolve(std::string_view path) const {
  const std::string normal = NormalizePath(path);
  const Link* best = nullptr;
  for (const Link& link : links) {
    if (Under(normal, link.path) && (best == nullptr || link.path.size() > best->path.size())) {
      best = &link;
    }
  }
  if (best != nullptr) {
    const std::string_view rest = Below(normal, best->path);
    if (rest.empty()) return best->target;
    return StrCat(best->target.ends_with('/') ? best->target.substr(0, best->target.size() - 1)
                                              : best->target,
                  rest);
  }
  if (!fallback.empty()) {
    return StrCat(fallback.ends_with('/') ? fallback.substr(0, fallback.size() - 1) : fallback,
                  normal == "/" ? "" : normal);
  }
  return absl::NotFoundError(StrCat(Uri(), normal, ": no mount point of the ViewFS table '", name,
                                    "' holds it, and it has no linkFallback"));
}

std::vector<std::string> MountTable::TargetFileSystems() const {
  std::vector<std::string> out;
  const auto add = [&out](const std::string& target) {
    std::string fs = FileSystemOf(target);
    if (!fs.empty() && std::find(out.begin(), out.end(), fs) == out.end()) out.push_back(fs);
  };
  for (const Link& link : links) add(link.target);
  if (!fallback.empty()) add(fallback);
  return out;
}

absl::StatusOr<MountTable> LoadMountTable(const HadoopConf& conf, std::string_view viewfs_uri) {
  if (!IsViewFs(viewfs_uri)) {
    return absl::InvalidArgumentError(StrCat("'", viewfs_uri, "' is not a viewfs:// URI"));
  }
  std::string_view rest = viewfs_uri.substr(kScheme.size());
  MountTable table;
  table.name = std::string(rest.substr(0, rest.find('/')));
  if (table.name.empty()) {
    table.name = conf.Get("fs.viewfs.mounttable.default.name.key");
    if (table.name.empty()) table.name = "default";
  }
  const std::string prefix = StrCat(kPrefix, table.name, ".");
  for (const auto& [key, entry] : conf.raw().entries()) {
    if (!key.starts_with(prefix)) continue;
    const std::string_view kind = std::string_view(key).substr(prefix.size());
    const std::string value = conf.Get(key);
    if (kind.starts_with("link.")) {
      const std::string_view path = kind.substr(5);
      if (!path.starts_with('/') || FileSystemOf(StripWhitespace(value)).empty()) {
        return absl::InvalidArgumentError(
            StrCat(key, "='", value, "': a ViewFS link maps an absolute path to a URI"));
      }
      if (NormalizePath(path) == "/") {
        return absl::InvalidArgumentError(
            StrCat(key, ": a link of / is linkMergeSlash in Hadoop, which tony does not read"));
      }
      table.links.push_back(
          {NormalizePath(path), WithoutTrailingSlash(std::string(StripWhitespace(value)))});
    } else if (kind == "linkFallback") {
      if (FileSystemOf(StripWhitespace(value)).empty()) {
        return absl::InvalidArgumentError(
            StrCat(key, "='", value, "': a ViewFS linkFallback is a URI"));
      }
      table.fallback = WithoutTrailingSlash(std::string(StripWhitespace(value)));
    } else if (kind == "homedir") {
      table.homedir = NormalizePath(value);
    } else if (kind.starts_with("linkMerge") || kind.starts_with("linkNfly") ||
               kind.starts_with("linkRegex")) {
      return absl::InvalidArgumentError(
          StrCat(key, ": tony reads ViewFS's link, linkFallback and homedir, not ",
                 kind.substr(0, kind.find('.'))));
    }
  }
  // As Hadoop's InodeTree: a link is a leaf, no link lies below another.
  for (const MountTable::Link& outer : table.links) {
    for (const MountTable::Link& inner : table.links) {
      if (&outer != &inner && Under(inner.path, outer.path)) {
        return absl::InvalidArgumentError(StrCat(prefix, "link.", inner.path, " lies under ",
                                                 prefix, "link.", outer.path,
                                                 ": ViewFS links do not nest"));
      }
    }
  }
  if (table.links.empty() && table.fallback.empty()) {
    return absl::InvalidArgumentError(StrCat(viewfs_uri, ": the ViewFS mount table '", table.name,
                                             "' has no links (no ", prefix, "link.* keys)"));
  }
  return table;
}

absl::StatusOr<std::string> ResolveDefaultFsPath(const HadoopConf& conf, std::string_view path) {
  absl::StatusOr<MountTable> table = LoadMountTable(conf, conf.DefaultFs());
  if (!table.ok()) return table.status();
  return table->Resolve(path);
}

absl::StatusOr<std::string> ResolveViewFs(const HadoopConf& conf, std::string_view uri) {
  if (!IsViewFs(uri)) return std::string(uri);
  absl::StatusOr<MountTable> table = LoadMountTable(conf, uri);
  if (!table.ok()) return table.status();
  std::string_view rest = uri.substr(kScheme.size());
  const size_t slash = rest.find('/');
  return table->Resolve(slash == std::string_view::npos ? "/" : rest.substr(slash));
}

}  // namespace tony::hadoop
