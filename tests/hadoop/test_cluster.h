#pragma once
// The mini cluster an integration test runs against: the directory TONY_TEST_HADOOP_CONF_DIR
// names (scripts/hadoop-minicluster start DIR [--secure]), Kerberized or not. On a Kerberized
// one, tony processes get the cluster's krb5.conf and an empty ticket cache of their own, and log
// in from the test user's keytab (tony.kerberos.*); the test process's own clients log in from
// the same keytab.

#include <stdlib.h>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hadoop/hadoop_conf.h"
#include "hadoop/kerberos.h"
#include "hadoop/webhdfs.h"
#include "hadoop/yarn_client.h"

namespace tony::testing {

class TestCluster {
 public:
  // The cluster TONY_TEST_HADOOP_CONF_DIR names; nullopt when it is unset.
  static std::optional<TestCluster> FromEnvironment() {
    const char* dir = std::getenv("TONY_TEST_HADOOP_CONF_DIR");
    if (dir == nullptr || *dir == '\0') return std::nullopt;
    TestCluster cluster;
    cluster.conf_dir_ = dir;
    std::ifstream in(cluster.conf_dir_ + "/minicluster.env");
    for (std::string line; std::getline(in, line);) {
      size_t eq = line.find('=');
      if (eq != std::string::npos) cluster.env_[line.substr(0, eq)] = line.substr(eq + 1);
    }
    if (cluster.secure()) {
      // MIT Kerberos reads KRB5_CONFIG when a context is made: this process's clients use it.
      setenv("KRB5_CONFIG", cluster.Value("MINICLUSTER_KRB5_CONF").c_str(), 1);
    }
    return cluster;
  }

  const std::string& conf_dir() const { return conf_dir_; }
  bool secure() const { return Value("MINICLUSTER_SECURE") == "true"; }
  // A key of minicluster.env, or "".
  std::string Value(const std::string& key) const {
    auto it = env_.find(key);
    return it == env_.end() ? "" : it->second;
  }
  std::string user() const {
    return secure() ? hadoop::SplitPrincipal(Value("MINICLUSTER_USER_PRINCIPAL")).service
                    : hadoop::HadoopUser();
  }

  // The environment of a tony process: HADOOP_CONF_DIR and, when Kerberized, KRB5_CONFIG and a
  // ticket cache under `work_dir` that holds nothing (so only the keytab can log in).
  std::map<std::string, std::string> ProcessEnv(const std::string& work_dir) const {
    std::map<std::string, std::string> env = {{"HADOOP_CONF_DIR", conf_dir_}};
    if (secure()) {
      env["KRB5_CONFIG"] = Value("MINICLUSTER_KRB5_CONF");
      env["KRB5CCNAME"] = "FILE:" + work_dir + "/krb5cc-empty";
    }
    return env;
  }
  // tony submit's --conf values for this cluster: the keytab login when Kerberized.
  std::vector<std::string> SubmitConf() const {
    if (!secure()) return {};
    return {"tony.kerberos.principal=" + Value("MINICLUSTER_USER_PRINCIPAL"),
            "tony.kerberos.keytab=" + Value("MINICLUSTER_USER_KEYTAB")};
  }

  // The test user's login for in-process clients; null on a cluster without Kerberos.
  absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> Login() const {
    if (!secure()) return std::shared_ptr<const hadoop::KerberosCredentials>();
    absl::StatusOr<std::shared_ptr<hadoop::KerberosCredentials>> login =
        hadoop::KerberosCredentials::Acquire(
            {Value("MINICLUSTER_USER_PRINCIPAL"), Value("MINICLUSTER_USER_KEYTAB")});
    if (!login.ok()) return login.status();
    return std::shared_ptr<const hadoop::KerberosCredentials>(*std::move(login));
  }
  absl::StatusOr<hadoop::HadoopConf> Conf() const { return hadoop::HadoopConf::Load({conf_dir_}); }
  absl::StatusOr<std::unique_ptr<hadoop::YarnClient>> Yarn() const {
    absl::StatusOr<hadoop::HadoopConf> conf = Conf();
    if (!conf.ok()) return conf.status();
    absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> login = Login();
    if (!login.ok()) return login.status();
    return hadoop::YarnClient::Connect(*conf, user(), *login);
  }
  absl::StatusOr<hadoop::WebHdfsClient> Hdfs() const {
    absl::StatusOr<hadoop::HadoopConf> conf = Conf();
    if (!conf.ok()) return conf.status();
    absl::StatusOr<hadoop::HostPort> http = conf->NameNodeHttpAddress();
    if (!http.ok()) return http.status();
    absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> login = Login();
    if (!login.ok()) return login.status();
    return hadoop::WebHdfsClient(http->ToString(),
                                 hadoop::WebHdfsAuth{user(), *login, std::nullopt});
  }

 private:
  std::string conf_dir_;
  std::map<std::string, std::string> env_;
};

}  // namespace tony::testing
