#pragma once
// The Hadoop cluster a client talks to, from the *-site.xml files in HADOOP_CONF_DIR and
// YARN_CONF_DIR (or tony.application.hdfs-conf-path / yarn-conf-path), with Hadoop's defaults
// for the addresses tony needs and Hadoop's ${variable} expansion. Reuses config::Configuration
// for the XML and its provenance. Build on one thread, then share read-only.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "config/configuration.h"

namespace tony::hadoop {

struct HostPort {
  std::string host;
  int port = 0;
  std::string ToString() const;
};

// One server of a group (a ResourceManager among yarn.resourcemanager.ha.rm-ids): its id (empty
// without HA) and one of its addresses.
struct ServerAddress {
  std::string id;
  HostPort address;
  // "rm1 (host:port)", or "host:port" without an id.
  std::string Name() const;
};

class HadoopConf {
 public:
  // Loads core-site.xml, hdfs-site.xml and yarn-site.xml from each directory that has them, in
  // order (later files override earlier ones). A directory that does not exist is an error.
  static absl::StatusOr<HadoopConf> Load(const std::vector<std::string>& dirs);
  // The directories named by the environment: YARN_CONF_DIR, then HADOOP_CONF_DIR (both when
  // set and different); empty when neither is set.
  static std::vector<std::string> DirsFromEnvironment();

  // The value with ${name} references expanded (from this configuration, then the environment),
  // or Hadoop's default for the key, or "".
  std::string Get(const std::string& key) const;
  const config::Configuration& raw() const { return conf_; }
  // The site files loaded, by name (a later directory's file replaces an earlier one's): the
  // client configuration tony ships to task containers.
  const std::map<std::string, std::string>& files() const { return files_; }
  // The path of a further configuration file `name` (ssl-client.xml): `name` itself when it is
  // absolute, else the last of the loaded directories that has it; "" when none has (a name
  // that is empty or not a regular file is none).
  std::string FindFile(const std::string& name) const;
  // hadoop.security.authentication is kerberos.
  bool SecurityEnabled() const;

  // The ResourceManagers' ids when yarn.resourcemanager.ha.enabled is true: the
  // yarn.resourcemanager.ha.rm-ids, at least two; empty without HA.
  absl::StatusOr<std::vector<std::string>> RmHaIds() const;
  // Every ResourceManager's address of `key` (yarn.resourcemanager.address, .scheduler.address,
  // .webapp.address, .webapp.https.address): with HA one per rm-id, from `<key>.<id>`, else
  // yarn.resourcemanager.hostname.<id> with the key's default port, as Hadoop's clients find
  // them; without HA the one address of `key`. Errors name the key that is missing.
  absl::StatusOr<std::vector<ServerAddress>> RmAddresses(const std::string& key) const;

  absl::StatusOr<HostPort> ResourceManagerAddress() const;  // yarn.resourcemanager.address
  absl::StatusOr<HostPort> SchedulerAddress() const;        // ...resourcemanager.scheduler.address
  absl::StatusOr<HostPort> NameNodeHttpAddress() const;     // dfs.namenode.http-address
  // The RM's web app: yarn.resourcemanager.webapp.https.address when yarn.http.policy is
  // HTTPS_ONLY, else yarn.resourcemanager.webapp.address.
  std::string RmWebAppKey() const;
  // yarn.http.policy is HTTPS_ONLY: the RMs' web apps and proxy serve HTTPS.
  bool YarnHttpsOnly() const;
  // YARN's web proxy, through which the RM links to an AM's tracking URL: yarn.web-proxy.address
  // when it runs on its own, else (inside the RM) its web app (RmWebAppKey).
  absl::StatusOr<HostPort> WebProxyAddress() const;
  // The same for every ResourceManager: with HA and no yarn.web-proxy.address, each RM's
  // yarn.resourcemanager.webapp.address.<id>.
  absl::StatusOr<std::vector<ServerAddress>> WebProxyAddresses() const;
  std::string DefaultFs() const;  // fs.defaultFS

 private:
  absl::StatusOr<HostPort> Address(const std::string& key) const;
  config::Configuration conf_;
  std::map<std::string, std::string> files_;
  std::vector<std::string> dirs_;
};

// "host:port" with a port in 1..65535; errors name the key's value.
absl::StatusOr<HostPort> ParseHostPort(const std::string& text);

// The user tony acts as on the cluster: HADOOP_USER_NAME, else the login user.
std::string HadoopUser();

}  // namespace tony::hadoop
