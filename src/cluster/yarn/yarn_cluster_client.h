#pragma once
// The client side of the YARN backend: a new application from the ResourceManager, the job's
// files staged on HDFS under /user/<user>/.tony/<app_id>/, and the tony binary itself (so nodes
// need nothing installed) in a cache by its content, /user/<user>/.tony/cache/tony-<sha256>,
// uploaded by the first job that runs that binary and reused by the next ones. The AM submitted
// with the job's secret in its container credentials (never in the environment or the command
// line), reports read from the RM, kill.
//
// On a Kerberized cluster the client authenticates with its Kerberos login and puts HDFS
// delegation tokens, and one from every KMS the configuration names (kms.h), renewer the
// ResourceManager, into the AM's credentials; the AM hands them to every task container.
//
// Threads: one caller at a time.

#include <map>
#include <memory>
#include <string>

#include "cluster/cluster_client.h"
#include "cluster/yarn/hdfs_job_files.h"
#include "cluster/yarn/hdfs_namenodes.h"
#include "cluster/yarn/yarn_asks.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/yarn/yarn_client.h"
#include "history/history_format.h"

namespace tony::cluster {

struct YarnClusterOptions {
  std::string tony_home;      // local job directories (client-side copy of what is staged)
  std::string executable;     // the tony binary to ship
  std::string user;           // with Kerberos: the principal's short name
  bool keep_staging = false;  // tony.application.keep-staging
  // Set on a Kerberized cluster: the client's login, for the RM (GSSAPI), WebHDFS (SPNEGO) and
  // the NameNodes it gets the job's delegation tokens from (fs.defaultFS's and these
  // hdfs://host:port URIs, tony.other.namenodes).
  std::shared_ptr<const hadoop::KerberosCredentials> kerberos;
  std::vector<std::string> other_namenodes;
  // With a keytab login: the keytab, shipped to the AM (staged 0600 in the 0700 staging
  // directory, removed with it) so that it can get fresh HDFS tokens for a job that outlives the
  // first ones. Empty: the tokens live as long as the NameNode lets them (a ticket-cache login).
  std::string am_keytab;
};

class YarnClusterClient final : public ClusterClient {
 public:
  // Connects to the ResourceManager named by `conf`.
  static absl::StatusOr<std::unique_ptr<YarnClusterClient>> Connect(hadoop::HadoopConf conf,
                                                                    YarnClusterOptions options);

  // Checks every job type against the cluster's largest container; the error gives the numbers.
  // Reserves the application id that NewApplicationId() then returns.
  absl::Status CheckFits(const std::map<std::string, ResourceAsk>& asks_by_type);
  // GANG mode: every container of the job at once. An error when even the whole cluster (its
  // RUNNING NodeManagers, other applications aside) could never hold them together.
  absl::Status CheckGangFits(const ResourceAsk& total, int containers);
  // A job with placement constraints: an error (kFailedPrecondition) when the cluster's RM has
  // none (Hadoop 2.x), which would leave the job waiting forever.
  absl::Status CheckPlacementConstraints();

  absl::StatusOr<std::string> NewApplicationId() override;
  std::string JobDir(const std::string& app_id) const override;
  absl::Status Submit(const AmSubmission& submission) override;
  absl::StatusOr<AppReport> GetReport(const std::string& app_id) override;
  absl::Status Kill(const std::string& app_id, bool force) override;
  absl::Status AwaitAmExit(const std::string& app_id, int64_t timeout_ms) override;
  absl::StatusOr<RemoteFileInfo> StatRemote(const std::string& uri) override;
  absl::StatusOr<std::string> OutputDir(const std::string& app_id,
                                        const std::string& requested) override;
  absl::Status MakeOutputDir(const std::string& dir) override;
  absl::StatusOr<std::vector<AppReport>> ListApplications(const std::string& application_type,
                                                          bool include_ended) override;

  // Where the job's files are on HDFS.
  std::string StagingDir(const std::string& app_id) const;
  // The jobs' history on this cluster's HDFS (tony.history.location, .intermediate, .finished),
  // read as this client's user. Errors name the key.
  absl::StatusOr<history::HistoryStore> History(const std::string& location,
                                                const std::string& intermediate,
                                                const std::string& finished) const;

 private:
  // Where the user's tony files are: the hdfs:// file system and the directory on it
  // ("/user/alice/.tony"), fs.defaultFS's or, with ViewFS, its mount table's for that directory.
  struct Home {
    std::string fs;
    std::string root;
    std::string token_service;  // of fs's delegation token (known once its NameNodes are)
    // Why WebHDFS cannot be used (a truststore that cannot be read), or OK.
    absl::Status webhdfs_error;
  };

  // An hdfs:// URI of the user's as the job reaches it (HdfsNameNodes::Resolve); with Kerberos, an
  // error unless the job gets a token of its NameNode (`use` says what could not be done then).
  absl::StatusOr<hadoop::YarnUrl> ResolveForJob(const std::string& uri, std::string_view use);
  // Removes the job's staging directory, all but its outputs/ when that holds anything.
  void RemoveStaging(const std::string& app_id);
  // Submit's work; Submit removes the staging directory when this fails.
  absl::Status StageAndSubmit(const hadoop::ApplicationId& id, const AmSubmission& submission);
  // With Kerberos: the job's delegation tokens (job_tokens.h), renewable by the
  // ResourceManager, added to `credentials`.
  absl::Status AddDelegationTokens(hadoop::Credentials& credentials) const;
  // How long WebHDFS calls look for an active NameNode (dfs.client.failover.*).
  hadoop::FailoverPolicy NameNodePolicy() const;
  YarnClusterClient(hadoop::HadoopConf conf, YarnClusterOptions options,
                    std::unique_ptr<hadoop::YarnClient> yarn, std::string webhdfs,
                    hadoop::http::Tls tls, Home home);
  // The RUNNING NodeManagers for node-local asks (yarn_asks.h); empty when there are too many or
  // the RM does not answer.
  std::vector<NodeHint> NodeHints();
  // The RUNNING NodeManagers, asked once per client (the gang check and the hints share them).
  absl::StatusOr<std::vector<hadoop::NodeReport>> RunningNodes();

  const hadoop::HadoopConf conf_;
  const YarnClusterOptions options_;
  std::unique_ptr<hadoop::YarnClient> yarn_;
  hadoop::WebHdfsClient hdfs_;
  // What WebHDFS over HTTPS trusts (empty: the system's authorities).
  const hadoop::http::Tls tls_;
  const Home home_;
  // The job's files and the binary cache, under home_ (uses hdfs_).
  HdfsJobFiles files_;
  // The NameNodes of the user's hdfs:// files (resources, venvs, --hdfs_classpath): home_.fs's
  // through hdfs_, and any other.
  HdfsNameNodes namenodes_;
  std::optional<hadoop::NewApplication> reserved_;
  std::optional<std::vector<hadoop::NodeReport>> running_nodes_;
};

}  // namespace tony::cluster
