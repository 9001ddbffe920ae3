#pragma once
// The cluster spec on the wire: the AM packs every task's address once (a serialized
// ClusterAddresses, deflated with zlib) and answers each executor's WaitClusterSpec with the same
// bytes; the executor's link unpacks them into WaitClusterSpecResponse.cluster. With 4,096 tasks
// the cluster is about 64 KB, which zlib takes to a fifth to a third (by how alike the host names
// are); a map copied into each answer cost the AM O(tasks) allocations per task.

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "rpc/tony.pb.h"

namespace tony::rpc {

// The most an unpacked cluster may hold: far above 100,000 tasks' addresses, and a bound on what a
// damaged or hostile answer can make the executor allocate (so is what deflate can expand:
// about 1032 times the packed size).
inline constexpr int64_t kMaxClusterBytes = int64_t{64} << 20;

// The addresses by job type, each list by task index ("" for a task without one), as packed bytes
// and their unpacked size.
struct PackedCluster {
  std::string bytes;
  int64_t size = 0;
};
PackedCluster PackCluster(const std::map<std::string, std::vector<std::string>>& cluster);

// Sets the packed cluster on `response`.
void SetPackedCluster(const PackedCluster& packed, WaitClusterSpecResponse* response);

// Fills response->cluster() from its packed_cluster, which it clears; an answer with nothing packed
// keeps its cluster as it is. An error names what is wrong
// (a size out of bounds, bytes that do not inflate to that size, or do not parse).
absl::Status UnpackCluster(WaitClusterSpecResponse* response);

}  // namespace tony::rpc
