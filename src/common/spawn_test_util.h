#pragma once
// A SpawnOptions that runs `argv` and sets nothing else: the tests of starting a child and of
// waiting for it both begin with one.

#include <string>
#include <utility>
#include <vector>

#include "common/process.h"

namespace tony {

inline SpawnOptions Command(std::vector<std::string> argv) {
  SpawnOptions options;
  options.argv = std::move(argv);
  return options;
}

}  // namespace tony
