#pragma once
// The mini cluster an integration test runs against: the directory TONY_TEST_HADOOP_CONF_DIR
// names (scripts/hadoop-minicluster start DIR [--secure]), Kerberized or not. On a Kerberized
// one, tony processes get the cluster's krb5.conf and a ticket cache of their own holding the test
// user's ticket, as `kinit -kt` leaves it; SubmitConf adds the keytab login (tony.kerberos.*) on
// top. The test process's own clients log in from the same keytab.

#include <krb5/krb5.h>
#include <stdlib.h>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/strings.h"
#include "gtest/gtest.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/nameservice.h"
#include "hadoop/hdfs/viewfs.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/http/truststore.h"
#include "hadoop/sasl/kerberos.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::testing {

// $variable if set, else ~/.cache/tony/<name>: where the install scripts cache what tests need.
inline std::string CacheDir(const char* variable, const char* name) {
  if (const char* dir = std::getenv(variable); dir != nullptr && *dir) return dir;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "/root") + "/.cache/tony/" + name;
}
// Where scripts/install-pydeps put the Python packages of the tests (hdfs-native, TensorBoard).
inline std::string PyDepsDir() { return CacheDir("TONY_PYDEPS_DIR", "pydeps"); }
// Where scripts/install-horovod put Horovod.
inline std::string HorovodDir() { return CacheDir("TONY_HOROVOD_DIR", "horovod"); }
// The virtualenv of scripts/install-frameworks (TensorFlow, tf_keras, JAX).
inline std::string FrameworksVenv() { return CacheDir("TONY_FRAMEWORKS_VENV", "frameworks-venv"); }

// A FILE: ticket cache at `path` with the principal's ticket from the keytab, as kinit -kt makes
// it; with `expired`, the ticket's end time is moved into the past, as an old cache holds it.
inline absl::Status WriteTicketCache(const std::string& path, const std::string& principal,
                                     const std::string& keytab, bool expired) {
  krb5_context context = nullptr;
  if (krb5_init_context(&context) != 0) return absl::InternalError("krb5_init_context");
  krb5_principal client = nullptr;
  krb5_keytab kt = nullptr;
  krb5_ccache cache = nullptr;
  krb5_creds creds{};
  krb5_error_code code = krb5_parse_name(context, principal.c_str(), &client);
  if (code == 0) code = krb5_kt_resolve(context, ("FILE:" + keytab).c_str(), &kt);
  if (code == 0) {
    code = krb5_get_init_creds_keytab(context, &creds, client, kt, 0, nullptr, nullptr);
  }
  if (code == 0 && expired) {
    creds.times.starttime = creds.times.authtime = 1000;
    creds.times.endtime = creds.times.renew_till = 2000;
  }
  if (code == 0) code = krb5_cc_resolve(context, ("FILE:" + path).c_str(), &cache);
  if (code == 0) code = krb5_cc_initialize(context, cache, client);
  if (code == 0) code = krb5_cc_store_cred(context, cache, &creds);
  std::string error;
  if (code != 0) {
    const char* text = krb5_get_error_message(context, code);
    error = text;
    krb5_free_error_message(context, text);
  }
  if (cache != nullptr) krb5_cc_close(context, cache);
  if (creds.client != nullptr) krb5_free_cred_contents(context, &creds);
  if (kt != nullptr) krb5_kt_close(context, kt);
  if (client != nullptr) krb5_free_principal(context, client);
  krb5_free_context(context);
  return code == 0 ? absl::OkStatus() : absl::InternalError(StrCat("ticket cache: ", error));
}

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
  // ticket cache under `work_dir` with the test user's ticket (written on the first call).
  std::map<std::string, std::string> ProcessEnv(const std::string& work_dir) const {
    std::map<std::string, std::string> env = {{"HADOOP_CONF_DIR", conf_dir_}};
    if (secure()) {
      const std::string cache = work_dir + "/krb5cc";
      if (!std::ifstream(cache).good()) {
        absl::Status written = WriteTicketCache(cache, Value("MINICLUSTER_USER_PRINCIPAL"),
                                                Value("MINICLUSTER_USER_KEYTAB"), false);
        EXPECT_TRUE(written.ok()) << written;
      }
      env["KRB5_CONFIG"] = Value("MINICLUSTER_KRB5_CONF");
      env["KRB5CCNAME"] = "FILE:" + cache;
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
    // fs.defaultFS's NameNodes: with HA, the client finds the active one; with ViewFS, those of
    // /user (where tony's files are; the paths there are the same on its NameNode).
    absl::StatusOr<hadoop::NameService> namenodes =
        hadoop::IsViewFs(conf->DefaultFs())
            ? ResolveNameService(*conf, hadoop::ResolveViewFs(*conf, conf->DefaultFs() + "user")
                                            .value_or(conf->DefaultFs()))
            : hadoop::DefaultNameService(*conf);
    if (!namenodes.ok()) return namenodes.status();
    absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> login = Login();
    if (!login.ok()) return login.status();
    hadoop::WebHdfsClient client(namenodes->WebHdfsServers(),
                                 hadoop::WebHdfsAuth{user(), *login, std::nullopt});
    if (namenodes->https) {
      // An --https cluster: its CA, from the ssl-client.xml it wrote.
      absl::StatusOr<hadoop::http::Tls> tls = hadoop::ClientTls(*conf);
      if (!tls.ok()) return tls.status();
      client.SetTls(*std::move(tls));
    }
    return client;
  }

 private:
  std::string conf_dir_;
  std::map<std::string, std::string> env_;
};

}  // namespace tony::testing
