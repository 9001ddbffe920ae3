#pragma once
// TonY's Horovod debug-driver protocol (tony.horovod.driver.mode.debug), on the executor's side.
// The driver is the user's command: it gets the workers' host list (CLUSTER_WORKER_LIST) and a
// directory (DRIVER_OUTPUT_PATH), starts Horovod's rendezvous, and writes a file named
// "<port>____HOROVOD_RENDEZVOUS_SERVER____" into the directory (its content, Horovod's slot plan,
// is not needed: the AM computes the same plan). The executor finds the file and publishes the port
// to the AM, which then releases the workers.

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace tony::executor {

inline constexpr char kDriverPortFileSuffix[] = "____HOROVOD_RENDEZVOUS_SERVER____";

class HorovodDriverWatch {
 public:
  // Makes `dir` an empty directory only the user can enter (0700).
  [[nodiscard]] static absl::StatusOr<HorovodDriverWatch> Create(std::string dir);

  const std::string& dir() const { return dir_; }
  // The port the driver published: the first well-formed port file in the directory (a port in
  // 1..65535), if one is there yet.
  std::optional<int> FindPort() const;

 private:
  explicit HorovodDriverWatch(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace tony::executor
