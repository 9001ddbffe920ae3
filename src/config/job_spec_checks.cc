#include "config/job_spec_checks.h"

#include <optional>
#include <tuple>
#include <utility>

#include "common/strings.h"
#include "config/key_names.h"
#include "config/placement_constraint.h"
#include "re2/re2.h"

namespace tony::config {

namespace {

// Whether `command` runs torchrun (`torchrun` or `python -m torch.distributed.run`).
bool RunsTorchrun(const std::string& command) {
  static const re2::RE2 kTorchrun(
      R"((?:^|[\s/;&|('"])(?:torchrun|torch\.distributed\.run)(?:\s|$))");
  return re2::RE2::PartialMatch(command, kTorchrun);
}

// MIN and MAX of torchrun's --nnodes=MIN:MAX (or `--nnodes MIN:MAX`) where `command` runs torchrun;
// nullopt where it does not name such a range.
std::optional<std::pair<int, int>> TorchrunNodeRange(const std::string& command) {
  static const re2::RE2 kRange(R"(--nnodes(?:=|\s+)["']?(\d{1,6}):(\d{1,6}))");
  if (!RunsTorchrun(command)) return std::nullopt;
  int min = 0;
  int max = 0;
  if (!re2::RE2::PartialMatch(command, kRange, &min, &max)) return std::nullopt;
  return std::make_pair(min, max);
}

}  // namespace

absl::Status ReadElastic(const Reader& reader, JobSpec* spec) {
  for (auto& [name, type] : spec->job_types) {
    const std::string key = StrCat("tony.", name, ".min-instances");
    int64_t min = 0;
    TONY_ASSIGN_OR_RETURN(min, reader.JobTypeInt(name, "min-instances", 0));
    type.runs_torchrun = RunsTorchrun(type.command);
    const std::optional<std::pair<int, int>> range = TorchrunNodeRange(type.command);
    if (range) {
      const std::string nnodes = StrCat("--nnodes=", range->first, ":", range->second);
      if (range->first < 1 || range->first > range->second) {
        return absl::InvalidArgumentError(StrCat("tony.", name, ".command runs torchrun with ",
                                                 nnodes,
                                                 ": MIN must be at least 1 and at most MAX"));
      }
      if (min > 0 && min != range->first) {
        return reader.Error(key, StrCat("tony.", name, ".command runs torchrun with ", nnodes));
      }
      if (type.instances > range->second) {
        return reader.Error(StrCat("tony.", name, ".instances"),
                            StrCat("torchrun's ", nnodes, " in tony.", name,
                                   ".command admits at most ", range->second));
      }
      min = range->first;
    }
    if (min == 0) continue;
    if (spec->framework != "pytorch") {
      return reader.Error(key, StrCat("an elastic job is PyTorch's (torchrun's rendezvous); "
                                      "tony.application.framework is ",
                                      spec->framework));
    }
    if (name != "worker" || spec->job_types.contains("chief")) {
      return reader.Error(key,
                          "the workers of an elastic PyTorch job are its only ranks: set it "
                          "for worker, in a job without a chief");
    }
    if (min > type.instances) {
      return reader.Error(key, StrCat("more than tony.", name, ".instances = ", type.instances));
    }
    // An elastic job goes on without a lost worker: TonY's rules that end it at one contradict it.
    if (type.stop_on_failure) {
      return reader.Error("tony.application.stop-on-failure-jobtypes",
                          StrCat("names ", name, ", whose workers are elastic (", key,
                                 "): the job goes on without a lost one"));
    }
    if (spec->fail_on_worker_failure) {
      return reader.Error("tony.application.fail-on-worker-failure-enabled",
                          StrCat("an elastic job (", key, ") goes on without a lost worker"));
    }
    type.min_instances = static_cast<int>(min);
  }
  return absl::OkStatus();
}

absl::Status ReadRestartPolicies(const Reader& reader, JobSpec* spec) {
  // Collective jobs: one member's failure breaks every member's communicator. TensorFlow's are
  // not told apart from independent workers (MultiWorkerMirroredStrategy and a job of evaluators
  // look alike), and TonY's rules for them must hold: they choose gang themselves.
  const bool collective =
      spec->framework == "pytorch" || spec->framework == "horovod" || spec->framework == "jax";
  // An elastic job has no gang: its workers re-form their group by themselves, and restarting a
  // gang would clear the rendezvous they meet in.
  const bool elastic = spec->ElasticType() != nullptr;
  for (auto& [name, type] : spec->job_types) {
    const std::string key = StrCat("tony.", name, ".restart-policy");
    const std::string value(StripWhitespace(reader.JobTypeValue(name, "restart-policy")));
    // Under FCFS each task gets the cluster spec as it registers: no gang meets again together.
    const bool gang_mode = spec->mode == DistributedMode::kGang;
    if (elastic && value == "gang") {
      return reader.Error(key, StrCat("an elastic job (tony.", spec->ElasticType()->name,
                                      ".min-instances) replaces a lost task alone while the "
                                      "others go on: its restart policy is task"));
    }
    if (value.empty()) {
      type.restart_policy =
          collective && gang_mode && type.role == JobTypeRole::kTracked && !elastic
              ? RestartPolicy::kGang
              : RestartPolicy::kTask;
    } else if (value == "task") {
      type.restart_policy = RestartPolicy::kTask;
    } else if (value == "gang") {
      if (type.role == JobTypeRole::kSidecar || name == kHorovodDriverType) {
        return reader.Error(key,
                            StrCat("a ", type.role == JobTypeRole::kSidecar ? "sidecar" : "driver",
                                   " is not part of the gang; its restart policy is task"));
      }
      if (!gang_mode) {
        return reader.Error(key,
                            "a gang restarts together only with tony.application.distributed-mode "
                            "GANG, not FCFS");
      }
      type.restart_policy = RestartPolicy::kGang;
    } else {
      return reader.Error(key, "expected task or gang");
    }
  }
  return absl::OkStatus();
}

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

absl::Status ReadPlacement(const Reader& reader, JobSpec* spec) {
  auto check = [&](const std::string& key, const std::string& text) -> absl::Status {
    if (absl::StatusOr<PlacementConstraint> parsed = ParsePlacementConstraint(text); !parsed.ok()) {
      return reader.Error(key, ToStd(parsed.status().message()));
    }
    return absl::OkStatus();
  };
  const std::string app_key = "tony.application.placement-spec";
  spec->application_placement = std::string(StripWhitespace(reader.String(app_key)));
  if (!spec->application_placement.empty()) {
    if (absl::Status s = check(app_key, spec->application_placement); !s.ok()) return s;
  }
  const std::string common_key = "tony.containers.placement-spec";
  const std::string common(StripWhitespace(reader.String(common_key)));
  if (!common.empty()) {
    if (absl::Status s = check(common_key, common); !s.ok()) return s;
  }
  for (auto& [name, type] : spec->job_types) {
    const std::string key = StrCat("tony.", name, ".placement-spec");
    std::string own(StripWhitespace(reader.JobTypeValue(name, "placement-spec")));
    if (!own.empty()) {
      if (absl::Status s = check(key, own); !s.ok()) return s;
    }
    // The preprocessing job runs in the AM's stead (TonY: in its container), which the job's
    // other constraints do not bind: only its own key does.
    const bool alone = spec->preprocess && name == kPreprocessType;
    const std::string& which = !own.empty() ? key : !common.empty() ? common_key : app_key;
    if (own.empty() && !alone) own = common;
    type.placement = own;
    if (!alone && !spec->application_placement.empty()) {
      // The application's constraint binds every type: YARN gets both in one request.
      type.placement = own.empty() ? spec->application_placement
                                   : StrCat("and(", own, ":", spec->application_placement, ")");
      if (absl::Status s = check(which, type.placement); !s.ok()) return s;
    }
    if (type.node_label.empty() || type.placement.empty()) continue;
    return reader.Error(
        which, StrCat("job type ", name, " has a node label (", type.node_label,
                      "): YARN takes a placement constraint only in a SchedulingRequest, which "
                      "carries no node label; drop one of them"));
  }
  return absl::OkStatus();
}

}  // namespace tony::config
