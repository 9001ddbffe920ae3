#include "cli/container_credentials.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "cluster/staging.h"
#include "cluster/yarn/job_tokens.h"
#include "common/files.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "rpc/job_credentials.h"
#include "rpc/launch_contract.h"

namespace tony::cli {

namespace fs = std::filesystem;

absl::StatusOr<hadoop::Credentials> ContainerCredentials() {
  const char* path = std::getenv("HADOOP_TOKEN_FILE_LOCATION");
  if (path == nullptr || *path == '\0') {
    return absl::NotFoundError("HADOOP_TOKEN_FILE_LOCATION is not set");
  }
  return hadoop::Credentials::ReadFile(path);
}

absl::StatusOr<std::map<std::string, std::string>> TakeContainerSecrets() {
  std::map<std::string, std::string> secrets;
  if (const char* path = std::getenv(rpc::kEnvContainerSecrets); path && *path) {
    absl::StatusOr<std::string> text = rpc::ReadPrivateFile(path);
    if (!text.ok()) return text.status();
    (void)unlink(path);
    nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) return absl::InvalidArgumentError(StrCat(path, " is not a JSON object"));
    for (const auto& [alias, value] : json.items()) {
      if (value.is_string()) secrets[alias] = value.get<std::string>();
    }
    return secrets;
  }
  const char* path = std::getenv("HADOOP_TOKEN_FILE_LOCATION");
  absl::StatusOr<hadoop::Credentials> credentials = ContainerCredentials();
  if (!credentials.ok()) {
    return absl::InvalidArgumentError(StrCat("no credentials: neither ", rpc::kEnvContainerSecrets,
                                             " nor the container's credentials (",
                                             ToStd(credentials.status().message()), ")"));
  }
  hadoop::Credentials kept;
  for (const auto& [alias, token] : credentials->tokens()) kept.AddToken(alias, token);
  for (const auto& [alias, secret] : credentials->secrets()) {
    if (alias.starts_with("tony.")) {
      secrets[alias] = secret;
    } else {
      kept.AddSecret(alias, secret);
    }
  }
  // Hadoop 2's readers know only the Writable layout.
  if (absl::Status s = kept.WriteFile(path, hadoop::Credentials::Format::kWritable); !s.ok()) {
    return absl::Status(
        s.code(), StrCat("cannot remove tony's credentials from ", path, ": ", ToStd(s.message())));
  }
  return secrets;
}

absl::Status WriteFinalConf(const std::string& path, const std::string& text) {
  return WriteFile(path, text, 0600);
}

absl::Status WriteFinalConfFromContainer(const std::string& path) {
  absl::StatusOr<hadoop::Credentials> credentials = ContainerCredentials();
  if (!credentials.ok()) return credentials.status();
  const std::string* text = credentials->FindSecret(cluster::kFinalConfSecret);
  if (text == nullptr) {
    return absl::NotFoundError(
        StrCat("the container's credentials carry no ", cluster::kFinalConfSecret));
  }
  return WriteFinalConf(path, *text);
}

absl::Status MergeTokensIntoFile(const std::string& path, const std::string& fresh) {
  absl::StatusOr<hadoop::Credentials> update =
      hadoop::Credentials::Parse(fresh, "fresh credentials from the AM");
  if (!update.ok()) return update.status();
  absl::StatusOr<hadoop::Credentials> current = hadoop::Credentials::ReadFile(path);
  if (!current.ok()) return current.status();
  for (const auto& [alias, token] : update->tokens()) current->AddToken(alias, token);
  return current->WriteFile(path, hadoop::Credentials::Format::kWritable);
}

absl::StatusOr<cluster::TokenRefreshOptions> TokenRefreshFromContainer(
    const std::string& keytab, const std::string& default_fs,
    const config::SecuritySpec& security) {
  cluster::TokenRefreshOptions refresh;
  refresh.login = {security.principal, fs::absolute(keytab).string()};
  absl::StatusOr<hadoop::HadoopConf> conf =
      hadoop::HadoopConf::Load({fs::absolute(cluster::kHadoopConfDir).string()});
  if (!conf.ok()) return conf.status();
  refresh.conf = *std::move(conf);
  // The same NameNodes and key servers as the client's tokens were of (job_tokens.h).
  absl::StatusOr<cluster::JobTokens> tokens =
      cluster::JobTokens::Resolve(refresh.conf, default_fs, security.other_namenodes);
  if (!tokens.ok()) return tokens.status();
  refresh.namenodes = tokens->namenodes();
  refresh.key_servers = tokens->key_servers();
  return refresh;
}

}  // namespace tony::cli
