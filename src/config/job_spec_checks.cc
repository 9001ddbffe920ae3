#include "config/job_spec_checks.h"

#include <tuple>

#include "common/strings.h"
#include "config/key_names.h"

namespace tony::config {

absl::Status CheckJobSize(const Reader& reader, const JobSpec& spec) {
  for (const auto& [name, type] : spec.job_types) {
    if (type.command.empty()) {
      return absl::InvalidArgumentError(
          StrCat("job type ", name,
                 " has no command: give --executes, or set tony.containers.command or tony.", name,
                 ".command"));
    }
  }
  if (spec.framework == "standalone" && !spec.single_node && spec.TotalTasks() != 1) {
    return absl::InvalidArgumentError(StrCat(
        "tony.application.framework = standalone runs exactly one task, but the job has ",
        spec.TotalTasks(), " (",
        [&] {
          std::vector<std::string> parts;
          for (const auto& [name, type] : spec.job_types) {
            parts.push_back(StrCat("tony.", name, ".instances = ", type.instances));
          }
          return Join(parts, ", ");
        }(),
        ")"));
  }
  int64_t value = 0;
  TONY_ASSIGN_OR_RETURN(value, reader.Int("tony.task.max-total-instances", -1));
  if (value >= 0 && spec.TotalTasks() > value) {
    return reader.Error("tony.task.max-total-instances",
                        StrCat("the job asks for ", spec.TotalTasks(), " tasks"));
  }
  int64_t total_gpus = 0, total_memory = 0, total_vcores = 0;
  for (const auto& [name, type] : spec.job_types) {
    total_gpus += int64_t{type.instances} * type.resources.gpus;
    total_memory += int64_t{type.instances} * type.resources.memory_mb;
    total_vcores += int64_t{type.instances} * type.resources.vcores;
  }
  for (auto [key, total, unit] :
       {std::tuple{"tony.task.max-total-gpus", total_gpus, " GPUs"},
        std::tuple{"tony.task.max-total-memory", total_memory, " MiB"},
        std::tuple{"tony.task.max-total-vcores", total_vcores, " vcores"}}) {
    TONY_ASSIGN_OR_RETURN(value, reader.Int(key, -1));
    if (value >= 0 && total > value) {
      return reader.Error(key, StrCat("the job asks for ", total, unit));
    }
  }

  return absl::OkStatus();
}

absl::Status ReadGroupsAndStages(const Reader& reader, const Configuration& conf, JobSpec* spec) {
  // Groups, dependency timeouts and stages name job types; each must exist.
  auto check_types = [&](const std::string& key,
                         const std::vector<std::string>& types) -> absl::Status {
    for (const std::string& type : types) {
      if (!spec->job_types.count(type)) {
        return reader.Error(
            key, StrCat("names job type ", ForMessage(type), ", which the job does not have"));
      }
    }
    return absl::OkStatus();
  };
  for (const auto& [key, entry] : conf.entries()) {
    if (std::optional<std::string_view> group = GroupOfGroupKey(key)) {
      std::vector<std::string> types = SplitList(entry.value);
      if (absl::Status s = check_types(key, types); !s.ok()) return s;
      spec->groups[std::string(*group)] = types;
    }
  }
  for (const auto& [key, entry] : conf.entries()) {
    std::optional<DependencyKey> parts = ParseDependencyKey(key);
    if (!parts) continue;
    GroupDependency dependency{std::string(parts->type), std::string(parts->group), 0, false};
    if (absl::Status s = check_types(key, {dependency.type}); !s.ok()) return s;
    if (!spec->groups.count(dependency.group)) {
      return reader.Error(
          key, StrCat("names group ", ForMessage(dependency.group), ", but tony.application.group.",
                      ForMessage(dependency.group), " is not set"));
    }
    TONY_ASSIGN_OR_RETURN(dependency.timeout_ms, reader.SecondsAsMs(key));
    const std::string ignored_key = key + ".ignored";
    if (conf.Has(ignored_key)) {
      TONY_ASSIGN_OR_RETURN(dependency.ignored, reader.Bool(ignored_key));
    }
    spec->dependencies.push_back(dependency);
  }
  spec->prepare_stage = SplitList(reader.String("tony.application.prepare-stage"));
  spec->training_stage = SplitList(reader.String("tony.application.training-stage"));
  if (absl::Status s = check_types("tony.application.prepare-stage", spec->prepare_stage);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = check_types("tony.application.training-stage", spec->training_stage);
      !s.ok()) {
    return s;
  }
  if (spec->prepare_stage.empty() != spec->training_stage.empty()) {
    return reader.Error(spec->prepare_stage.empty() ? "tony.application.training-stage"
                                                    : "tony.application.prepare-stage",
                        "set both tony.application.prepare-stage and "
                        "tony.application.training-stage, or neither");
  }

  return absl::OkStatus();
}

}  // namespace tony::config
