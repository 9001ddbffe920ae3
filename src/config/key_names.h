#pragma once
// The key families whose names hold user-chosen parts, matched by plain character checks: no
// regular expressions (whose backtracking matchers recurse once per character and overflow the
// stack on long keys), so every match is linear in the key's length.
//
//   tony.<type>.instances                                  <type>:  [a-z][a-z0-9_-]*
//   tony.application.group.<group>                         <group>: [A-Za-z0-9_-]+
//   tony.application.dependency.<type>.timeout.after.<group>
//   tony.docker.<type>.image

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tony::config {

// Job-type names longer than this are refused: a name becomes part of container requests,
// environment values, log directories and file names (at most 255 bytes on Linux).
inline constexpr size_t kMaxJobTypeNameLength = 128;

bool IsJobTypeName(std::string_view name);  // [a-z][a-z0-9_-]*, of any length
bool IsGroupName(std::string_view name);    // [A-Za-z0-9_-]+

// The <type> of "tony.<type>.instances", or nullopt for any other key.
std::optional<std::string_view> JobTypeOfInstancesKey(std::string_view key);
// The <group> of "tony.application.group.<group>", or nullopt.
std::optional<std::string_view> GroupOfGroupKey(std::string_view key);

struct DependencyKey {
  std::string_view type;
  std::string_view group;
};
// The parts of "tony.application.dependency.<type>.timeout.after.<group>", or nullopt.
std::optional<DependencyKey> ParseDependencyKey(std::string_view key);

// A group key, a dependency key (with or without ".ignored") or "tony.docker.<type>.image".
bool IsKnownFamilyKey(std::string_view key);

// `text` for an error message or warning: control characters escaped ("\n", "\x00"), so a message
// stays one line, and cut to about `max_length` characters with the full length noted.
std::string ForMessage(std::string_view text, size_t max_length = 200);

}  // namespace tony::config
