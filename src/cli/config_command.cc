#include "cli/config_command.h"

#include <iostream>
#include <string_view>
#include <vector>

#include "cli/roles.h"
#include "cluster/staging.h"
#include "common/strings.h"
#include "config/key_catalog.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/nameservice.h"
#include "hadoop/hdfs/viewfs.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/http/truststore.h"
#include "hadoop/yarn/yarn_client.h"

namespace tony::cli {

namespace {

// A --conf_file on HDFS (TonY's "local or remote" configuration file), read through WebHDFS with
// the cluster's configuration: HADOOP_CONF_DIR / YARN_CONF_DIR, or a
// --conf tony.application.hdfs-conf-path=DIR given with it.
absl::StatusOr<std::string> ReadRemoteConfFile(const config::ConfigRequest& request) {
  std::vector<std::string> dirs = hadoop::HadoopConf::DirsFromEnvironment();
  constexpr std::string_view kConfPathKey = "tony.application.hdfs-conf-path=";
  for (const std::string& pair : request.conf) {
    if (pair.starts_with(kConfPathKey)) dirs.push_back(pair.substr(kConfPathKey.size()));
  }
  if (dirs.empty()) {
    return absl::InvalidArgumentError(
        "an hdfs:// file needs the cluster's configuration: set HADOOP_CONF_DIR (or "
        "tony.application.hdfs-conf-path) to the directory of core-site.xml and hdfs-site.xml");
  }
  absl::StatusOr<hadoop::HadoopConf> conf = hadoop::HadoopConf::Load(dirs);
  if (!conf.ok()) return conf.status();
  // With a ViewFS default file system, hdfs:///<path> is <path> through its mount table; an
  // hdfs://<authority>/ URI names its own NameNodes.
  std::string uri = *request.conf_file;
  const bool viewfs = hadoop::IsViewFs(conf->DefaultFs());
  if (viewfs && uri.starts_with("hdfs:///")) {
    absl::StatusOr<std::string> resolved = hadoop::ResolveDefaultFsPath(
        *conf, std::string_view(uri).substr(std::string_view("hdfs://").size()));
    if (!resolved.ok()) return resolved.status();
    uri = *std::move(resolved);
  }
  absl::StatusOr<hadoop::YarnUrl> url =
      viewfs ? hadoop::YarnUrl::Parse(uri) : hadoop::ResolveOnDefaultFs(uri, conf->DefaultFs());
  if (!url.ok()) return url.status();
  absl::StatusOr<hadoop::NameService> namenodes =
      viewfs ? hadoop::ResolveNameService(*conf, uri) : hadoop::DefaultNameService(*conf);
  if (!namenodes.ok()) return namenodes.status();
  // The job's own Kerberos keys are in the file being read: log in from the ticket cache.
  absl::StatusOr<std::shared_ptr<const hadoop::KerberosCredentials>> kerberos =
      ClusterLogin(*conf, config::SecuritySpec{});
  if (!kerberos.ok()) return kerberos.status();
  hadoop::WebHdfsClient hdfs(namenodes->WebHdfsServers(),
                             hadoop::WebHdfsAuth{hadoop::HadoopUser(), *kerberos, std::nullopt});
  if (namenodes->https) {
    absl::StatusOr<hadoop::http::Tls> tls = hadoop::ClientTls(*conf);
    if (!tls.ok()) return tls.status();
    hdfs.SetTls(*std::move(tls));
  }
  absl::StatusOr<std::string> text = hdfs.Open(url->file);
  if (text.status().code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError("no such file");
  }
  return text;
}

}  // namespace

std::optional<ValidatedJob> ResolveAndValidate(const SubmitOptions& options) {
  config::ConfigRequest request = options.request;
  if (request.conf_file && cluster::IsRemotePath(*request.conf_file)) {
    absl::StatusOr<std::string> text = ReadRemoteConfFile(request);
    if (!text.ok()) {
      std::cerr << "tony: error: --conf_file " << *request.conf_file << ": "
                << text.status().message() << "\n";
      return std::nullopt;
    }
    request.conf_file_text = *std::move(text);
  }
  absl::StatusOr<config::ResolvedConfig> resolved = config::ResolveConfiguration(request);
  if (!resolved.ok()) {
    std::cerr << "tony: error: " << resolved.status().message() << "\n";
    return std::nullopt;
  }
  for (const std::string& warning : resolved->warnings) {
    std::cerr << "tony: warning: " << warning << "\n";
  }
  absl::StatusOr<config::JobSpec> spec = config::BuildJobSpec(resolved->conf);
  if (!spec.ok()) {
    std::cerr << "tony: error: " << spec.status().message() << "\n";
    return std::nullopt;
  }
  return ValidatedJob{*std::move(resolved), *std::move(spec)};
}

int RunConfigCommand(const SubmitOptions& options) {
  std::optional<ValidatedJob> job = ResolveAndValidate(options);
  if (!job) return 2;
  const config::Configuration& conf = job->resolved.conf;
  if (options.xml) {
    std::cout << conf.ToXml();
    return 0;
  }
  // Sources line up in one column, except after lines longer than kMaxWidth: one huge value
  // must not pad every other line to its length (output quadratic in the file's size).
  constexpr size_t kMaxWidth = 100;
  size_t width = 0;
  for (const auto& [key, entry] : conf.entries()) {
    width = std::max(width, std::min(key.size() + entry.value.size() + 1, kMaxWidth));
  }
  for (const auto& [key, entry] : conf.entries()) {
    std::string line = key + "=" + entry.value;
    if (options.explain) {
      line.resize(std::max(line.size(), width), ' ');
      line += "  # " + entry.source.ToString();
      // The latest first.
      for (size_t i = entry.appended.size(); i-- > 0;) {
        line += ", " + entry.appended[i].ToString();
      }
    }
    std::cout << line << "\n";
  }
  return 0;
}

}  // namespace tony::cli
