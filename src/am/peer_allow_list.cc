#include "am/peer_allow_list.h"

#include <optional>

namespace tony::am {

void PeerAllowList::Allow(const std::string& host) {
  MutexLock lock(mu_);
  if (std::optional<IpAddress> literal = ParseIpAddress(host)) {
    allowed_.insert(*literal);
  } else if (!host.empty()) {
    unresolved_.push_back(host);
  }
}

bool PeerAllowList::Admits(const sockaddr* peer) {
  std::optional<IpAddress> address = IpAddressOf(peer);
  if (!address) return false;
  std::vector<std::string> names;
  {
    MutexLock lock(mu_);
    if (allowed_.contains(*address)) return true;
    names.swap(unresolved_);
  }
  // Names given since the last unknown peer; resolved outside the lock.
  std::set<IpAddress> resolved;
  for (const std::string& name : names) {
    for (const IpAddress& ip : ResolveIpAddresses(name)) resolved.insert(ip);
  }
  MutexLock lock(mu_);
  allowed_.insert(resolved.begin(), resolved.end());
  return allowed_.contains(*address);
}

}  // namespace tony::am
