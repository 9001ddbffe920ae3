#include "cluster/yarn/yarn_asks.h"

#include <set>

#include "common/strings.h"
#include "rpc/launch_contract.h"

namespace tony::cluster {

std::string FormatNodeHints(const std::vector<NodeHint>& hints) {
  std::vector<std::string> entries;
  entries.reserve(hints.size());
  for (const NodeHint& hint : hints) entries.push_back(StrCat(hint.host, "@", hint.rack));
  return Join(entries, ",");
}

absl::StatusOr<std::vector<NodeHint>> ParseNodeHints(std::string_view text) {
  std::vector<NodeHint> hints;
  if (StripWhitespace(text).empty()) return hints;
  for (std::string_view entry : Split(text, ',')) {
    const size_t at = entry.find('@');
    if (at == std::string_view::npos || at == 0 || at + 1 == entry.size() ||
        entry.find('@', at + 1) != std::string_view::npos) {
      return absl::InvalidArgumentError(
          StrCat(rpc::kEnvYarnNodes, ": '", entry, "' is not host@rack"));
    }
    hints.push_back({std::string(entry.substr(0, at)), std::string(entry.substr(at + 1))});
  }
  return hints;
}

std::vector<hadoop::ContainerRequest> AsksForType(const hadoop::Resource& capability,
                                                  int32_t priority, int32_t outstanding,
                                                  const std::string& node_label,
                                                  const std::vector<NodeHint>& hints) {
  std::vector<hadoop::ContainerRequest> rows;
  hadoop::ContainerRequest any;
  any.capability = capability;
  any.num_containers = outstanding;
  any.priority = priority;
  any.node_label_expression = node_label;
  rows.push_back(any);
  if (!node_label.empty()) return rows;
  std::set<std::string> hosts, racks;
  for (const NodeHint& hint : hints) {
    if (!hosts.insert(hint.host).second) continue;  // several NodeManagers on one host
    hadoop::ContainerRequest host = any;
    host.resource_name = hint.host;
    rows.push_back(host);
    racks.insert(hint.rack);
  }
  for (const std::string& rack : racks) {
    hadoop::ContainerRequest row = any;
    row.resource_name = rack;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace tony::cluster
