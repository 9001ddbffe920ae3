#pragma once
// The TonyAM: turns the job into container requests, launches an executor in every granted
// container, runs the gang barrier (SpecBarrier), watches heartbeats and exits, applies the failure
// policy through JobStateMachine, and ends the application with one final status. What it launches,
// tells its watchers, renders, records and hosts for Horovod are parts of their own
// (TaskLauncher, SpecBarrier, WatcherRegistry, StatusPublisher, HistoryRecorder, RendezvousHost),
// which it drives from the state machine's actions.
//
// Threads: Run() drives the event loop on the calling thread; everything below runs there, the
// parts too. gRPC threads and the allocator's thread only post into the loop.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "am/am_service.h"
#include "am/history_recorder.h"
#include "am/job_recovery.h"
#include "am/job_state.h"
#include "am/page_renderer.h"
#include "am/rendezvous_host.h"
#include "am/result_replies.h"
#include "am/spec_barrier.h"
#include "am/status_page.h"
#include "am/status_publisher.h"
#include "am/task_launcher.h"
#include "am/watcher_registry.h"
#include "cluster/container_allocator.h"
#include "common/clock.h"
#include "common/event_loop.h"
#include "history/history_writer.h"
#include "rpc/job_credentials.h"

namespace grpc {
class Server;
}

namespace tony::am {

struct AmOptions {
  std::string app_id;
  std::string staging_dir;          // where the client staged the job's files
  std::string checkpoint_dir;       // every task's TONY_CHECKPOINT_DIR; "": none
  std::string conf_file;            // tony-final.xml, as executors should read it
  rpc::JobCredentials credentials;  // the secret, and the TLS key unless TLS is off
  // The address the control plane and the status page listen on: the host executors reach
  // (loopback locally, the NodeManager's host on YARN), or tony.am.bind-host.
  std::string bind_host;
  // YARN: the web proxy's addresses (IP literals) and its URL of this application; only the proxy
  // sees the status page, others are redirected to it. Empty: serve whoever reaches the page.
  std::vector<std::string> proxy_addresses;
  std::string proxy_base_url;
  bool status_page = true;  // false: no status page at all (YARN, when the proxy is unknown)
  std::string executable;   // the tony binary executors run
  std::string host;         // this AM's address as executors reach it
  bool has_src = false;
  std::string venv_source;  // the venv zip: staged, or where the user keeps it (hdfs://); "" = none
  int64_t wait_client_ms = 0;  // JobSpec::wait_client_ms
  // What every task container gets besides its job type's files and variables (YARN: the job's
  // Hadoop client configuration, HADOOP_USER_NAME).
  std::vector<cluster::LocalResource> task_resources;
  std::map<std::string, std::string> task_env;
  // The job's history (history/history_format.h); none without a file system.
  std::shared_ptr<history::HistoryFs> history_fs;
  history::HistoryDirs history_dirs;
  std::string user;          // who runs the job
  std::string backend;       // "local" or "yarn"
  int64_t submitted_ms = 0;  // when the client submitted it (wall clock); 0: unknown
  int am_attempt = 1;
  // Where each AM attempt writes its address when a later attempt adopts the running tasks
  // (tony.am.retry-count above 0, on a backend that keeps containers across attempts); "": the
  // running tasks die with their AM, and a later attempt runs the job again.
  std::string am_address_file;
  // YARN: am_address_file is on HDFS, which executors read through WebHDFS at these NameNodes,
  // with their HDFS token of this service.
  std::string am_address_webhdfs;
  std::string am_address_webhdfs_token;
  // YARN: the authorities executors trust for WebHDFS over HTTPS (the address above, the job's
  // outputs); "": the system's.
  std::string webhdfs_ca;
};

class ApplicationMaster final : public AmRequestHandler {
 public:
  ApplicationMaster(AmOptions options, config::JobSpec spec, cluster::ContainerAllocator* allocator,
                    const Clock* clock);
  ~ApplicationMaster() override;

  // Runs the job to its end. Returns 0 if it succeeded, 1 otherwise.
  int Run();
  // After Run: whether it finished the job, its final status given to the backend (saved or
  // not), its history written and closed, its servers and allocator stopped. Otherwise (stopped
  // without a final status, or it could not start) the destructors still have work: the history's
  // last events, the allocator's containers.
  bool Finished() const;
  // Ends the job as KILLED (a signal to the AM). Any thread.
  void RequestKill(const std::string& reason);
  // Stops the AM without deciding the job (YARN: the container's owner stopped it, and the
  // ResourceManager, not this AM, says how the attempt ended). Any thread.
  void Abandon(const std::string& reason);

  // AmRequestHandler, on the loop.
  void RegisterTask(const rpc::RegisterTaskRequest& request,
                    Reply<rpc::RegisterTaskResponse> reply) override;
  void WaitClusterSpec(const rpc::WaitClusterSpecRequest& request,
                       Reply<rpc::WaitClusterSpecResponse> reply) override;
  void Heartbeat(const rpc::HeartbeatRequest& request,
                 Reply<rpc::HeartbeatResponse> reply) override;
  void ReportResult(const rpc::ReportResultRequest& request,
                    Reply<rpc::ReportResultResponse> reply) override;
  void AppendOutput(const rpc::AppendOutputRequest& request,
                    Reply<rpc::AppendOutputResponse> reply) override;
  void RegisterTensorBoardUrl(const rpc::RegisterTensorBoardUrlRequest& request,
                              Reply<rpc::RegisterTensorBoardUrlResponse> reply) override;
  void PublishRendezvous(const rpc::PublishRendezvousRequest& request,
                         Reply<rpc::PublishRendezvousResponse> reply) override;
  void GetJobStatus(const rpc::GetJobStatusRequest& request, Reply<rpc::JobStatus> reply) override;
  void WatchJob(const rpc::WatchJobRequest& request, Reply<rpc::JobStatus> reply) override;
  void KillJob(const rpc::KillJobRequest& request, Reply<rpc::KillJobResponse> reply) override;
  void AcknowledgeFinal(const rpc::AcknowledgeFinalRequest& request,
                        Reply<rpc::AcknowledgeFinalResponse> reply) override;

 private:
  // Starts the control plane's gRPC server on `bind` (service_, port_); false if it
  // did not start.
  bool StartServer(const std::string& bind);
  // After the loop stopped: answers every call a part still holds (after the finisher, the
  // watchers), then stops the server.
  void StopServer();
  void Execute(const Actions& actions);
  // Writes what the state machine's tasks went through into the history, in order.
  void RecordTaskChanges();
  void Launch(const TaskRef& task);
  // Answers the job watches that are due, or (all) every one.
  void AnswerWatchers(bool all);
  void OnTick();
  void OnContainerAllocated(const cluster::Container& container);
  void OnContainerCompleted(const cluster::ContainerExit& exit);
  // The cluster no longer counts this AM's attempt, or stops it: stop, claiming nothing.
  void StopWithoutFinalStatus(const std::string& reason);
  // The job is decided and its containers are gone: records the final status with the backend
  // on a thread of its own (unregistering may take the resource manager seconds), then, back on
  // the loop, marks the job complete. Once only.
  void Complete();
  void OnFinalStatusRecorded(const absl::Status& recorded);
  // job.json as it is now (HistoryRecorder::JobJson).
  std::string HistoryJobJson() const;

  const AmOptions options_;
  cluster::ContainerAllocator* const allocator_;
  const Clock* const clock_;
  JobStateMachine job_;
  EventLoop loop_;
  std::unique_ptr<AmService> service_;
  int port_ = 0;
  StatusPage status_page_;
  std::unique_ptr<PageRenderer> renderer_;  // renders status_page_; none without a page
  HistoryRecorder history_;
  StatusPublisher status_;
  RendezvousHost rendezvous_;
  TaskLauncher launcher_;
  SpecBarrier barrier_;
  ResultReplies results_;

  WatcherRegistry watchers_;
  // The newest credentials for running tasks from the allocator, and how many times they came.
  std::string task_tokens_;
  int64_t task_tokens_version_ = 0;
  std::optional<int64_t> decided_at_ms_;
  bool finishing_ = false;  // Complete ran: the final status is being recorded
  std::thread finisher_;    // records it; joined by Run
  std::optional<int64_t> completed_at_ms_;
  bool acknowledged_ = false;
  bool abandoned_ = false;  // StopWithoutFinalStatus ran
  // The job has started (or been taken up): executors' calls are answered. Before, an executor of
  // an earlier attempt that found this one is told to try again.
  bool job_started_ = false;
  // What the cluster refused before the job started (on_refused): the job fails at its start.
  std::string refused_before_start_;
  // The job as an earlier attempt's history left it, when this attempt adopts its running tasks.
  std::optional<RecoveredJob> recovery_;
  // Containers of earlier attempts that could not be taken up: the job starts once they ended.
  std::set<std::string> previous_to_end_;
  // Starts the job: from the beginning, or where recovery_ and the containers of earlier attempts
  // that still run (id -> log directory) say it is.
  void StartJob(const std::map<std::string, std::string>& previous_containers);
};

}  // namespace tony::am
