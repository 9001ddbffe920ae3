#include "rpc/cluster_pack.h"

#include <zlib.h>

#include <algorithm>
#include <new>

#include "common/strings.h"

namespace tony::rpc {

PackedCluster PackCluster(const std::map<std::string, std::vector<std::string>>& cluster) {
  ClusterAddresses addresses;
  for (const auto& [type, list] : cluster) {
    AddressList& out = (*addresses.mutable_cluster())[type];
    for (const std::string& address : list) out.add_addresses(address);
  }
  const std::string serialized = addresses.SerializeAsString();
  PackedCluster packed;
  packed.size = static_cast<int64_t>(serialized.size());
  uLongf length = compressBound(serialized.size());
  packed.bytes.resize(length);
  // zlib's fastest level: within a few percent of its default on addresses, at a fraction of
  // the time, which counts where the cluster changes with every registration (FCFS).
  const int rc =
      compress2(reinterpret_cast<Bytef*>(packed.bytes.data()), &length,
                reinterpret_cast<const Bytef*>(serialized.data()), serialized.size(), Z_BEST_SPEED);
  // compressBound makes room for any input, so only memory can fail (Z_MEM_ERROR), as an
  // allocation would.
  if (rc != Z_OK) throw std::bad_alloc();
  packed.bytes.resize(length);
  return packed;
}

void SetPackedCluster(const PackedCluster& packed, WaitClusterSpecResponse* response) {
  response->set_packed_cluster(packed.bytes);
  response->set_cluster_bytes(packed.size);
}

absl::Status UnpackCluster(WaitClusterSpecResponse* response) {
  if (response->packed_cluster().empty() && response->cluster_bytes() == 0) {
    return absl::OkStatus();  // nothing packed: the cluster is as sent
  }
  const int64_t size = response->cluster_bytes();
  // Deflate never shrinks more than about 1032 to 1: a larger claim is refused before the
  // allocation it asks for.
  const int64_t limit = std::min(
      kMaxClusterBytes, (static_cast<int64_t>(response->packed_cluster().size()) + 1) * 1032);
  if (size < 0 || size > limit) {
    return absl::DataLossError(
        StrCat("the cluster spec's size, ", size, " bytes, is not between 0 and ", limit));
  }
  std::string serialized(static_cast<size_t>(size), '\0');
  auto length = static_cast<uLongf>(size);
  uLong consumed = response->packed_cluster().size();
  const int rc =
      uncompress2(reinterpret_cast<Bytef*>(serialized.data()), &length,
                  reinterpret_cast<const Bytef*>(response->packed_cluster().data()), &consumed);
  if (rc != Z_OK || static_cast<int64_t>(length) != size ||
      consumed != response->packed_cluster().size()) {
    return absl::DataLossError(
        StrCat("the packed cluster spec does not inflate to its ", size,
               " bytes (zlib: ", rc == Z_OK ? "the size differs" : zError(rc), ")"));
  }
  ClusterAddresses addresses;
  if (!addresses.ParseFromString(serialized)) {
    return absl::DataLossError("the cluster spec does not parse");
  }
  response->mutable_cluster()->swap(*addresses.mutable_cluster());
  response->clear_packed_cluster();
  response->clear_cluster_bytes();
  return absl::OkStatus();
}

}  // namespace tony::rpc
