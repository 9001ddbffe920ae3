#include "hadoop/common/hadoop_conf.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "common/strings.h"
#include "config/value_parsers.h"

namespace tony::hadoop {
namespace {

namespace fs = std::filesystem;

// Hadoop's own defaults (core-default.xml, yarn-default.xml, hdfs-default.xml) for the keys
// tony reads.
const std::map<std::string, std::string>& HadoopDefaults() {
  static const auto* defaults = new std::map<std::string, std::string>{
      {"fs.defaultFS", "file:///"},
      {"yarn.resourcemanager.hostname", "0.0.0.0"},
      {"yarn.resourcemanager.address", "${yarn.resourcemanager.hostname}:8032"},
      {"yarn.resourcemanager.scheduler.address", "${yarn.resourcemanager.hostname}:8030"},
      {"yarn.resourcemanager.webapp.address", "${yarn.resourcemanager.hostname}:8088"},
      {"yarn.resourcemanager.webapp.https.address", "${yarn.resourcemanager.hostname}:8090"},
      {"dfs.namenode.http-address", "0.0.0.0:9870"},
      // Hadoop's own default; a client reads the wildcard as the NameNode's host (nothing binds).
      {"dfs.namenode.https-address", "0.0.0.0:9871"},
      {"dfs.http.policy", "HTTP_ONLY"},
      {"yarn.http.policy", "HTTP_ONLY"},
      {"hadoop.ssl.client.conf", "ssl-client.xml"},
  };
  return *defaults;
}

}  // namespace

std::string HostPort::ToString() const { return StrCat(host, ":", port); }

std::string ServerAddress::Name() const {
  return id.empty() ? address.ToString() : StrCat(id, " (", address.ToString(), ")");
}

absl::StatusOr<HostPort> ParseHostPort(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError(StrCat("\"", text, "\" is not host:port"));
  }
  absl::StatusOr<int64_t> port = config::ParseInt(text.substr(colon + 1));
  if (!port.ok() || *port < 1 || *port > 65535) {
    return absl::InvalidArgumentError(StrCat("\"", text, "\" has no valid port"));
  }
  return HostPort{text.substr(0, colon), static_cast<int>(*port)};
}

std::vector<std::string> HadoopConf::DirsFromEnvironment() {
  std::vector<std::string> dirs;
  const char* hadoop = std::getenv("HADOOP_CONF_DIR");
  const char* yarn = std::getenv("YARN_CONF_DIR");
  if (hadoop != nullptr && *hadoop != '\0') dirs.emplace_back(hadoop);
  if (yarn != nullptr && *yarn != '\0' && (hadoop == nullptr || std::string(hadoop) != yarn)) {
    dirs.emplace_back(yarn);
  }
  return dirs;
}

absl::StatusOr<HadoopConf> HadoopConf::Load(const std::vector<std::string>& dirs) {
  HadoopConf result;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      return absl::NotFoundError(StrCat("Hadoop configuration directory ", dir, " does not exist"));
    }
    for (const char* name : {"core-site.xml", "hdfs-site.xml", "yarn-site.xml"}) {
      const std::string path = StrCat(dir, "/", name);
      if (!fs::exists(path, ec)) continue;
      if (absl::Status s = result.conf_.LoadXmlFile(path, config::SourceKind::kSiteFile); !s.ok()) {
        return s;
      }
      result.files_[name] = path;
    }
    result.dirs_.push_back(dir);
  }
  return result;
}

std::string HadoopConf::FindFile(const std::string& name) const {
  std::error_code ec;
  if (name.empty()) return "";
  if (name.starts_with('/')) return fs::is_regular_file(name, ec) ? name : "";
  for (size_t i = dirs_.size(); i > 0; --i) {
    std::string path = StrCat(dirs_[i - 1], "/", name);
    if (fs::is_regular_file(path, ec)) return path;
  }
  return "";
}

std::string HadoopConf::Get(const std::string& key) const {
  std::string value;
  if (const config::ConfigEntry* entry = conf_.Find(key)) {
    value = entry->value;
  } else if (auto it = HadoopDefaults().find(key); it != HadoopDefaults().end()) {
    value = it->second;
  }
  // Hadoop expands ${name} from the configuration, then from the environment, up to a depth.
  for (int depth = 0; depth < 20; ++depth) {
    const size_t start = value.find("${");
    if (start == std::string::npos) break;
    const size_t end = value.find('}', start);
    if (end == std::string::npos) break;
    const std::string name = value.substr(start + 2, end - start - 2);
    std::string replacement;
    if (conf_.Has(name) || HadoopDefaults().count(name)) {
      replacement = Get(name);
    } else if (const char* env = std::getenv(name.c_str())) {
      replacement = env;
    }
    value.replace(start, end - start + 1, replacement);
  }
  return value;
}

absl::StatusOr<HostPort> HadoopConf::Address(const std::string& key) const {
  absl::StatusOr<HostPort> address = ParseHostPort(Get(key));
  if (!address.ok()) {
    const config::ConfigEntry* entry = conf_.Find(key);
    return absl::InvalidArgumentError(StrCat(key, " (",
                                             entry ? entry->source.ToString() : "default",
                                             "): ", ToStd(address.status().message())));
  }
  return address;
}

absl::StatusOr<std::vector<std::string>> HadoopConf::RmHaIds() const {
  if (ToLower(Get("yarn.resourcemanager.ha.enabled")) != "true") return std::vector<std::string>{};
  std::vector<std::string> ids;
  const std::string listed = Get("yarn.resourcemanager.ha.rm-ids");  // Split's views point here
  for (std::string_view id : Split(listed, ',')) {
    id = StripWhitespace(id);
    if (!id.empty()) ids.emplace_back(id);
  }
  if (ids.size() < 2) {
    return absl::InvalidArgumentError(
        StrCat("yarn.resourcemanager.ha.enabled is true but yarn.resourcemanager.ha.rm-ids (\"",
               Get("yarn.resourcemanager.ha.rm-ids"), "\") names fewer than two ResourceManagers"));
  }
  return ids;
}

absl::StatusOr<std::vector<ServerAddress>> HadoopConf::RmAddresses(const std::string& key) const {
  absl::StatusOr<std::vector<std::string>> ids = RmHaIds();
  if (!ids.ok()) return ids.status();
  if (ids->empty()) {
    absl::StatusOr<HostPort> address = Address(key);
    if (!address.ok()) return address.status();
    return std::vector<ServerAddress>{{"", *std::move(address)}};
  }
  // The key's default port (yarn-default.xml), for an rm-id named by its host only.
  const std::string fallback = HadoopDefaults().count(key) ? HadoopDefaults().at(key) : "";
  const std::string default_port = fallback.substr(fallback.rfind(':') + 1);
  std::vector<ServerAddress> out;
  for (const std::string& id : *ids) {
    const std::string per_id = StrCat(key, ".", id);
    const std::string host_key = StrCat("yarn.resourcemanager.hostname.", id);
    if (!Get(per_id).empty()) {
      absl::StatusOr<HostPort> address = Address(per_id);
      if (!address.ok()) return address.status();
      out.push_back({id, *std::move(address)});
    } else if (!Get(host_key).empty() && !default_port.empty()) {
      absl::StatusOr<HostPort> address = ParseHostPort(StrCat(Get(host_key), ":", default_port));
      if (!address.ok()) {
        return absl::InvalidArgumentError(
            StrCat(host_key, ": ", ToStd(address.status().message())));
      }
      out.push_back({id, *std::move(address)});
    } else {
      return absl::InvalidArgumentError(
          StrCat("ResourceManager HA: neither ", per_id, " nor ", host_key,
                 " is set, but yarn.resourcemanager.ha.rm-ids names ", id));
    }
  }
  return out;
}

absl::StatusOr<HostPort> HadoopConf::ResourceManagerAddress() const {
  return Address("yarn.resourcemanager.address");
}
absl::StatusOr<HostPort> HadoopConf::SchedulerAddress() const {
  return Address("yarn.resourcemanager.scheduler.address");
}
absl::StatusOr<HostPort> HadoopConf::NameNodeHttpAddress() const {
  return Address("dfs.namenode.http-address");
}
absl::StatusOr<HostPort> HadoopConf::WebProxyAddress() const {
  if (!Get("yarn.web-proxy.address").empty()) return Address("yarn.web-proxy.address");
  return Address(RmWebAppKey());
}
bool HadoopConf::YarnHttpsOnly() const {
  return ToUpper(StripWhitespace(Get("yarn.http.policy"))) == "HTTPS_ONLY";
}
std::string HadoopConf::RmWebAppKey() const {
  return YarnHttpsOnly() ? "yarn.resourcemanager.webapp.https.address"
                         : "yarn.resourcemanager.webapp.address";
}
absl::StatusOr<std::vector<ServerAddress>> HadoopConf::WebProxyAddresses() const {
  if (!Get("yarn.web-proxy.address").empty()) {
    absl::StatusOr<HostPort> proxy = Address("yarn.web-proxy.address");
    if (!proxy.ok()) return proxy.status();
    return std::vector<ServerAddress>{{"", *std::move(proxy)}};
  }
  return RmAddresses(RmWebAppKey());
}
bool HadoopConf::SecurityEnabled() const {
  return ToLower(Get("hadoop.security.authentication")) == "kerberos";
}
std::string HadoopConf::DefaultFs() const { return Get("fs.defaultFS"); }

std::string HadoopUser() {
  if (const char* user = std::getenv("HADOOP_USER_NAME"); user != nullptr && *user != '\0') {
    return user;
  }
  if (const passwd* entry = getpwuid(geteuid()); entry != nullptr && entry->pw_name != nullptr) {
    return entry->pw_name;
  }
  return "root";
}

}  // namespace tony::hadoop
