#include "rpc/cluster_pack.h"

#include <zlib.h>

#include <cstdlib>

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
  // Level 6, zlib's default: the cluster is packed once per release, and every byte saved is
  // sent to every task.
  const int rc = compress2(reinterpret_cast<Bytef*>(packed.bytes.data()), &length,
                           reinterpret_cast<const Bytef*>(serialized.data()), serialized.size(),
                           Z_DEFAULT_COMPRESSION);
  // compressBound makes room for any input; only memory could fail, and then so would the copy.
  if (rc != Z_OK) std::abort();
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
  if (size < 0 || size > kMaxClusterBytes) {
    return absl::DataLossError(StrCat("the cluster spec's size, ", size,
                                      " bytes, is not between 0 and ", kMaxClusterBytes));
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
