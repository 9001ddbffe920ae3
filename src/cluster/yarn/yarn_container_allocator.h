#pragma once
// The YARN backend's side of the AM: registers with the ResourceManager's scheduler, asks for
// containers (one priority per job type, so that grants map back to types; counts are absolute),
// starts executors on the NodeManagers with their NMTokens, localizing the staged files from HDFS
// with the exact sizes and modification times YARN checks, and reports completed containers with
// YARN's exit statuses (over memory, preempted, lost node, killed by the AM).
//
// Threads: public methods from any thread, and none waits on the network, as with Hadoop's
// NMClientAsync: Launch queues the start for a small pool of launcher threads (the HDFS lookups
// and the NodeManager's StartContainers run there), a NodeManager stop runs on the heartbeat
// thread. Callbacks run on the allocator's own threads: the heartbeat thread, and a launcher
// thread for a start that failed. Only Finish blocks, until the ResourceManager confirms.

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster/container_allocator.h"
#include "cluster/yarn/hdfs_namenodes.h"
#include "cluster/yarn/hdfs_token_refresher.h"
#include "cluster/yarn/yarn_asks.h"
#include "cluster/yarn/yarn_placement.h"
#include "common/mutex.h"
#include "hadoop/hdfs/webhdfs.h"
#include "hadoop/ipc/failover.h"
#include "hadoop/yarn/am_rm_client.h"
#include "hadoop/yarn/nm_client.h"

namespace tony::cluster {

struct YarnAllocatorOptions {
  hadoop::HostPort scheduler;  // yarn.resourcemanager.scheduler.address
  // With ResourceManager HA: every RM's scheduler address (scheduler is the first), among which
  // the AM finds the active one and fails over (hadoop/failover.h).
  std::vector<hadoop::ServerAddress> ha_schedulers;
  hadoop::FailoverPolicy failover;
  std::string default_fs;  // fs.defaultFS, for the URLs of localized files
  // The client's Hadoop configuration (the job's hadoop-conf), for files the user named on
  // other NameNodes (hdfs_namenodes.h); null: only default_fs's.
  std::shared_ptr<const hadoop::HadoopConf> hadoop_conf;
  std::string webhdfs;            // the NameNodes' WebHDFS addresses (WebHdfsClient's form)
  hadoop::http::Tls webhdfs_tls;  // for HTTPS: the authorities to trust (empty: the system's)
  // yarn.http.policy is HTTPS_ONLY: the NodeManagers' pages (the tasks' log links) are https://.
  bool web_https = false;
  std::string user;           // the HDFS user
  hadoop::Token am_rm_token;  // from the AM container's credentials
  // On a Kerberized cluster, the HDFS delegation tokens the client got (from the AM container's
  // credentials): every task container gets them all, and the first (fs.defaultFS's) is the AM's
  // own WebHDFS authentication. Empty: SIMPLE authentication as `user`.
  std::vector<hadoop::Token> hdfs_tokens;
  // The KMS delegation tokens the client got (kms.h): every task container gets them, for files
  // in encryption zones. With token_refresh, fresh ones replace them as the HDFS ones.
  std::vector<hadoop::Token> kms_tokens;
  // Secrets every task container gets as they are: which KMS each file system's files are
  // decrypted by (kms.h's KmsMapAlias).
  std::map<std::string, std::string> task_secrets;
  // With the user's keytab: fresh HDFS tokens before these die (hdfs_token_refresher.h), for the
  // containers launched from then on, the AM's WebHDFS calls and, through
  // Callbacks::on_task_tokens, the running tasks.
  std::optional<TokenRefreshOptions> token_refresh;
  // Files every task container gets besides the job's own (the tony binary, reusable).
  std::vector<LocalResource> common_files;
  // The cluster's NodeManagers, named in every ask so that grants are node-local (yarn_asks.h).
  std::vector<NodeHint> node_hints;
  // How to reach the scheduler; empty: Hadoop RPC authenticated with am_rm_token (tests inject a
  // fake).
  hadoop::RpcConnector scheduler_connector;
  // The application's tracking URL once it has ended (the history's job page), as MapReduce and
  // Spark set theirs; "" keeps the AM's own.
  std::string final_tracking_url;
  // An HDFS path where Start writes the AM's address ("host:port"), for the executors of an
  // earlier attempt that the AM adopts (tony.am.retry-count); "": none.
  std::string am_address_file;
  int64_t fast_heartbeat_ms = 100;   // while containers are outstanding
  int64_t slow_heartbeat_ms = 1000;  // once every ask was granted
};

class YarnContainerAllocator final : public ContainerAllocator {
 public:
  explicit YarnContainerAllocator(YarnAllocatorOptions options);
  ~YarnContainerAllocator() override;

  absl::Status Start(const std::string& am_host, int am_port, const std::string& tracking_url,
                     Callbacks callbacks) override;
  absl::Status CheckFits(const ContainerRequest& request) const override;
  void Request(const ContainerRequest& request) override;
  absl::Status Launch(const Container& container, const LaunchSpec& spec) override;
  void Stop(const std::string& container_id, int64_t grace_ms) override;
  void Release(const std::string& container_id) override;
  void ExpectCompletion(const std::string& container_id) override;
  absl::Status Finish(FinalStatus final_status, const std::string& diagnostics,
                      const std::string& status_json) override;
  int RunningContainers() const override;
  std::vector<Container> PreviousContainers() const override;
  void SetProgress(float progress) override { progress_.store(progress); }
  void Shutdown() override;

 private:
  // The asks of one job type and size: a type's tasks normally share one; a task that asks for more
  // memory (tony.<type>.memory-growth) has one of its own, under another priority.
  struct TypeAsk {
    std::string job_type;
    int32_t priority = 0;
    ResourceAsk resources;
    std::string node_label;
    // Set: asked for with a SchedulingRequest under this constraint (yarn_placement.h).
    std::optional<hadoop::proto::PlacementConstraint> placement;
    int32_t outstanding = 0;  // containers still wanted
    bool changed = false;     // to be sent with the next heartbeat
  };

  // A start that Launch queued for the launcher threads.
  struct PendingLaunch {
    std::string container_id;
    LaunchSpec spec;
  };
  static constexpr int kLauncherThreads = 4;

  void HeartbeatLoop();
  void LauncherLoop();
  // Localizes the task's files and starts its executor through the NodeManager (network calls).
  absl::Status StartOnNode(const hadoop::Container& container, const LaunchSpec& spec);
  void OnFreshTokens(const std::vector<hadoop::Token>& tokens);
  void StopOverdueContainers();
  std::vector<hadoop::ContainerRequest> TakeChangedAsksLocked() TONY_REQUIRES(mu_);
  std::vector<hadoop::proto::SchedulingRequest> TakeChangedSchedulingLocked() TONY_REQUIRES(mu_);
  // The heartbeat loop's steps: what to send (returns the interval until the next heartbeat;
  // changed SchedulingRequests wait for a heartbeat without changed asks), what to send again
  // after a failed allocate, what an answer brings, and the wait.
  int64_t TakeHeartbeatWork(std::vector<hadoop::ContainerRequest>* asks,
                            std::vector<hadoop::proto::SchedulingRequest>* scheduling,
                            std::vector<hadoop::ContainerId>* releases) TONY_EXCLUDES(mu_);
  void OnAllocateFailed(const std::vector<hadoop::ContainerRequest>& asks,
                        const std::vector<hadoop::proto::SchedulingRequest>& scheduling,
                        const std::vector<hadoop::ContainerId>& releases) TONY_EXCLUDES(mu_);
  void OnAllocated(const hadoop::AllocateResult& result) TONY_EXCLUDES(mu_);
  // The RM refuses placement constraints: said once, to on_refused.
  void Refused();
  // The RM no longer counts this attempt (`reason`): said once, to on_ended_by_cluster.
  void EndedByRm(const std::string& reason) TONY_EXCLUDES(mu_);
  void WaitForHeartbeat(int64_t interval_ms) TONY_EXCLUDES(mu_);
  // What `source` is on HDFS, looked up once per job: its URL and, for a file, its status
  // (path_suffix ""), for a directory, the status of each of its files (path_suffix: full path).
  struct SourceFiles {
    hadoop::YarnUrl url;
    std::vector<hadoop::FileStatus> entries;
  };
  absl::StatusOr<SourceFiles> LookUp(const std::string& source);
  // Adds what YARN must download for `source` (a staged path, or an hdfs:// URI the user gave;
  // a directory stands for its files) to `resources`, with the exact sizes and times it checks.
  absl::Status Localize(const LocalResource& file, const std::string& name,
                        std::map<std::string, hadoop::LocalResource>& resources);

  const YarnAllocatorOptions options_;
  Callbacks callbacks_;
  std::unique_ptr<hadoop::AmRmClient> am_rm_;  // used on the heartbeat thread after Start
  hadoop::NmClient nm_;
  hadoop::WebHdfsClient hdfs_;
  HdfsNameNodes namenodes_;  // hdfs_, and the other NameNodes of the user's files
  hadoop::Resource maximum_;

  mutable Mutex mu_;
  CondVar wake_;
  std::map<std::string, TypeAsk> asks_ TONY_GUARDED_BY(mu_);               // by job type
  std::map<std::string, hadoop::Container> granted_ TONY_GUARDED_BY(mu_);  // by container id
  // Launched, or queued to be (the AM counts both as running).
  std::set<std::string> launched_ TONY_GUARDED_BY(mu_);
  std::deque<PendingLaunch> launches_ TONY_GUARDED_BY(mu_);  // not yet taken by a launcher
  CondVar launch_wake_;
  // Containers whose start failed: their end is reported already, and the ResourceManager's
  // report of the released container is not passed on.
  std::set<std::string> failed_starts_ TONY_GUARDED_BY(mu_);
  // Every task of the job localizes the same files: their sizes and times are read once, so all
  // tasks get the same version.
  std::map<std::string, SourceFiles> sources_ TONY_GUARDED_BY(mu_);
  std::vector<hadoop::ContainerId> releases_ TONY_GUARDED_BY(mu_);
  std::vector<hadoop::Token> hdfs_tokens_ TONY_GUARDED_BY(mu_);  // the newest
  std::vector<hadoop::Token> kms_tokens_ TONY_GUARDED_BY(mu_);   // the newest
  std::unique_ptr<HdfsTokenRefresher> refresher_;
  // Containers to stop through their NodeManager once the deadline (steady ms) passes: the
  // executor, told to stop in its heartbeat reply, gets the grace period first.
  std::map<std::string, int64_t> stop_at_ TONY_GUARDED_BY(mu_);
  // Containers whose process ended; their completion is awaited at the fast interval.
  std::set<std::string> expected_ TONY_GUARDED_BY(mu_);
  bool hurry_ TONY_GUARDED_BY(mu_) = false;  // a heartbeat is wanted now
  // Granted containers the RM said it would preempt (on_preemption was called for each).
  std::set<std::string> preemption_warned_ TONY_GUARDED_BY(mu_);
  std::set<int32_t> rejection_warned_ TONY_GUARDED_BY(mu_);  // priorities
  std::atomic<bool> refused_ = false;                        // on_refused was called
  // AM_SHUTDOWN came, or the RM no longer knows the attempt: nothing to unregister.
  bool ended_by_rm_ TONY_GUARDED_BY(mu_) = false;
  bool stopping_ TONY_GUARDED_BY(mu_) = false;
  // The containers of earlier attempts the RM handed over at registration.
  std::vector<Container> previous_ TONY_GUARDED_BY(mu_);
  bool finished_ TONY_GUARDED_BY(mu_) = false;
  std::atomic<float> progress_{0.0f};  // the job's, for the RM (SetProgress)
  std::thread heartbeat_;
  std::vector<std::thread> launchers_;
};

// tony's view of a YARN container exit status: the shell code for a process exit, YARN's own
// negative codes otherwise, with the cause.
ContainerExit ToContainerExit(const hadoop::ContainerStatus& status);

}  // namespace tony::cluster
