#pragma once
// The hosts whose connections a store without credentials (Horovod's Gloo rendezvous, PyTorch's
// c10d store) accepts: the addresses of the job's containers. Names are resolved lazily, on the
// first connection from a peer that is not yet known, outside the lock.
//
// Threads: any; Allow and Admits may run concurrently.

#include <set>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/net.h"

struct sockaddr;

namespace tony::am {

class PeerAllowList {
 public:
  // Admits every address `host` (a literal or a name) stands for.
  void Allow(const std::string& host);
  // Whether `peer` (an AF_INET or AF_INET6 address) is one of the allowed hosts'.
  bool Admits(const sockaddr* peer);

 private:
  Mutex mu_;
  std::set<IpAddress> allowed_ TONY_GUARDED_BY(mu_);
  std::vector<std::string> unresolved_ TONY_GUARDED_BY(mu_);
};

}  // namespace tony::am
