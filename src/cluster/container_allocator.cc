#include "cluster/container_allocator.h"

namespace tony::cluster {

std::string_view ToString(FinalStatus status) {
  switch (status) {
    case FinalStatus::kSucceeded:
      return "SUCCEEDED";
    case FinalStatus::kKilled:
      return "KILLED";
    case FinalStatus::kFailed:
      break;
  }
  return "FAILED";
}

}  // namespace tony::cluster
