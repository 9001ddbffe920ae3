#pragma once
// The rendezvous the AM hosts for its workers: where they meet, and whether a worker must wait
// for it before it gets the cluster spec. A Horovod job's: without a debug driver the AM serves
// the store itself (GlooRendezvous), open only to the job's hosts; with one, the driver task
// serves it and publishes its port, and workers wait until it has. An elastic PyTorch job's
// (tony.worker.min-instances): the AM serves torchrun's c10d store (C10dStore), open only to the
// job's hosts, so that no worker's loss takes it along. Other jobs have none.
//
// Threads: the AM's loop only.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "am/gloo_rendezvous.h"
#include "am/job_state.h"

namespace tony::am {

class RendezvousHost {
 public:
  enum class Kind { kGloo, kC10d };
  using StoreFactory = std::function<std::unique_ptr<RendezvousStore>(Kind)>;

  RendezvousHost(const config::JobSpec* spec, StoreFactory make_store)
      : spec_(spec), make_store_(std::move(make_store)) {}

  // A Horovod job without a debug driver, or an elastic PyTorch job: serves the store on
  // `bind_host`, reached at `advertised_host`. Anything else: nothing. On failure the job cannot
  // run: error() says why.
  void Start(const std::string& bind_host, const std::string& advertised_host);
  void Stop();
  // Why the AM's own store could not start; "" when it did, or is not needed.
  const std::string& error() const { return error_; }
  // host:port of the store, or "" while none is known.
  const std::string& address() const { return address_; }
  // What the store is, for logs: "Horovod's rendezvous" or "the c10d rendezvous".
  std::string_view name() const;

  // Whether `task` must wait for the rendezvous before it gets the cluster spec.
  bool Awaits(const TaskRef& task) const;
  // A host of the job: its tasks may reach the store.
  void AllowHost(const std::string& host);
  // The cluster as the tasks get it: the store learns how many ranks finalize each scope.
  void SizeScopes(const std::map<std::string, std::vector<std::string>>& cluster);
  // The AM's store forgets what the ranks stored (a restarted gang meets afresh); a debug driver's
  // store is the driver's.
  void Clear();
  // The debug driver's store: only driver:0 of a job with a debug driver, from its own
  // container (`record`, the driver's, has its host) on a valid port.
  absl::Status Publish(const TaskRef& task, const TaskRecord* record,
                       const std::string& container_id, int port);

 private:
  const config::JobSpec* const spec_;
  const StoreFactory make_store_;
  std::unique_ptr<RendezvousStore> store_;
  std::string address_;
  std::string error_;
};

}  // namespace tony::am
