#pragma once
// `tony submit`: checks the job's inputs, stages it, starts the AM through the backend, follows
// the job live and exits with its result. Ctrl-C (SIGINT) or SIGTERM kills the job.
//
// Threads: Submit() on the main thread, which must have blocked SIGINT and SIGTERM first
// (BlockInterruptSignals) so that a signal thread can turn them into a job kill.

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "client/job_follower.h"
#include "client/line_sink.h"
#include "cluster/cluster_client.h"
#include "common/signal_thread.h"
#include "config/config_loader.h"
#include "config/job_spec.h"
#include "history/history_format.h"
#include "rpc/job_credentials.h"

namespace tony::client {

struct SubmitContext {
  std::string working_dir;
  std::string executable;  // the tony binary, shipped to the AM and executors
  // --tee: every task's output is printed as it comes, each line with its task ("[worker:1] "),
  // from the job's history in this store.
  std::optional<history::HistoryStore> tee = std::nullopt;
  // --output json: where the job's JSON lines go (job_json.h's SubmittedJson and EndedJson);
  // null for none.
  std::ostream* json_out = nullptr;
};

// Exit codes of `tony submit`.
inline constexpr int kExitSucceeded = 0;
inline constexpr int kExitJobFailed = 1;
inline constexpr int kExitBadInput = 2;

// The exit code of a submission the cluster refused, as the output directory's creation or the
// AM's submission: kExitBadInput where the user can fix it or nothing could take the job,
// kExitJobFailed otherwise. One rule for both, since nothing has started in either.
int RefusedSubmissionExitCode(const absl::Status& refused);
inline constexpr int kExitInterrupted = 130;

void BlockInterruptSignals();
// After BlockInterruptSignals: waits for SIGINT or SIGTERM; returns which.
int WaitForInterrupt();

class TonyClient {
 public:
  TonyClient(cluster::ClusterClient* cluster, std::ostream& out, std::ostream& err);

  int Submit(const config::ResolvedConfig& resolved, const config::JobSpec& spec,
             const SubmitContext& context);

 private:
  void OnInterrupt(int sig);

  cluster::ClusterClient* const cluster_;
  // stdout and stderr, a whole line at a time: the --tee thread writes to them too, through
  // writers of its own.
  LineSink out_lines_;
  LineSink err_lines_;
  LineWriter out_;  // the main thread's (its own lines and the follower's)
  LineWriter err_;
  std::unique_ptr<JobFollower> follower_;  // made before signals_, which calls it
  std::unique_ptr<SignalThread> signals_;  // last: destroyed first, before what it uses
};

}  // namespace tony::client
