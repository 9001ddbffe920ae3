#pragma once
// Parsers for configuration values. Pure; errors say what was expected, and callers prefix the
// key and its source.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tony::config {

// "2g", "2048m", "2048" (MiB), case-insensitive suffix; returns MiB. Rejects fractions, other
// suffixes, negative and zero sizes, and values above 1 PiB.
absl::StatusOr<int64_t> ParseMemoryMb(std::string_view text);
// A decimal integer (optional sign) that fits in int64.
absl::StatusOr<int64_t> ParseInt(std::string_view text);
// "true" or "false", case-insensitive.
absl::StatusOr<bool> ParseBool(std::string_view text);
// Comma-separated, trimmed, empty items dropped.
std::vector<std::string> SplitList(std::string_view text);
// "K=V,K2=V2" (as in tony.containers.envs): later keys win. An item without '=' or with an empty
// or invalid variable name is an error naming the item.
absl::StatusOr<std::map<std::string, std::string>> ParseEnvList(std::string_view text);

}  // namespace tony::config
