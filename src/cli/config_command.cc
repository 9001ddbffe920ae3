#include "cli/config_command.h"

#include <iostream>

#include "config/key_catalog.h"

namespace tony::cli {

std::optional<ValidatedJob> ResolveAndValidate(const SubmitOptions& options) {
  absl::StatusOr<config::ResolvedConfig> resolved = config::ResolveConfiguration(options.request);
  if (!resolved.ok()) {
    std::cerr << "tony: error: " << resolved.status().message() << "\n";
    return std::nullopt;
  }
  for (const std::string& warning : resolved->warnings) {
    std::cerr << "tony: warning: " << warning << "\n";
  }
  absl::StatusOr<config::JobSpec> spec = config::BuildJobSpec(resolved->conf);
  if (!spec.ok()) {
    std::cerr << "tony: error: " << spec.status().message() << "\n";
    return std::nullopt;
  }
  return ValidatedJob{*std::move(resolved), *std::move(spec)};
}

int RunConfigCommand(const SubmitOptions& options) {
  std::optional<ValidatedJob> job = ResolveAndValidate(options);
  if (!job) return 2;
  const config::Configuration& conf = job->resolved.conf;
  if (options.xml) {
    std::cout << conf.ToXml();
    return 0;
  }
  size_t width = 0;
  for (const auto& [key, entry] : conf.entries()) {
    width = std::max(width, key.size() + entry.value.size() + 1);
  }
  for (const auto& [key, entry] : conf.entries()) {
    std::string line = key + "=" + entry.value;
    if (options.explain) {
      line.resize(std::max(line.size(), width), ' ');
      line += "  # " + entry.source.ToString();
      for (auto it = entry.appended.rbegin(); it != entry.appended.rend(); ++it) {
        line += ", " + it->ToString();
      }
    }
    std::cout << line << "\n";
  }
  return 0;
}

}  // namespace tony::cli
