#pragma once
// The rows of YARN's ask table for one job type, and the node hints that shape them.
//
// Why hints: CapacityScheduler hands out at most one off-switch container (an ask for "*") per
// NodeManager heartbeat by default (yarn.scheduler.capacity.per-node-heartbeat.
// maximum-offswitch-assignments = 1), so on a small cluster N tasks take N heartbeats. Asks that
// also name the cluster's hosts (and their racks, which the scheduler decrements alongside) are
// node-local wherever they land: the scheduler grants as many as fit in one heartbeat. The "*" row
// keeps relax_locality, so the counts stay exact and any node may still serve the ask. The client
// reads the RUNNING nodes once at submit and hands them to the AM (rpc::AmLaunch::node_hints).
//
// Node labels: YARN accepts a label expression only on the "*" row, and a labelled ask may not
// fit the listed hosts, so a type with a node label gets no hints.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hadoop/yarn/am_rm_client.h"

namespace tony::cluster {

// The hints travel to the AM as "host@rack,host@rack" (rpc::AmLaunch::node_hints).
// Clusters with more NodeManagers than this get no hints: their heartbeats already hand out many
// off-switch containers a second, and the environment stays small.
inline constexpr int kMaxNodeHints = 200;

struct NodeHint {
  std::string host;
  std::string rack;
  friend bool operator==(const NodeHint&, const NodeHint&) = default;
};

std::string FormatNodeHints(const std::vector<NodeHint>& hints);
// The inverse of FormatNodeHints; an error names the malformed entry.
absl::StatusOr<std::vector<NodeHint>> ParseNodeHints(std::string_view text);

// The rows to send for one job type wanting `outstanding` more containers (absolute counts; 0
// withdraws them): "*", and with hints (and no node label) one row per rack and per host.
std::vector<hadoop::ContainerRequest> AsksForType(const hadoop::Resource& capability,
                                                  int32_t priority, int32_t outstanding,
                                                  const std::string& node_label,
                                                  const std::vector<NodeHint>& hints);

}  // namespace tony::cluster
