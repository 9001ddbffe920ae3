#pragma once
// The checks of a JobSpec that span job types (restart policies, the elastic type), and the
// groups, dependencies and stages that name them: parts of BuildJobSpec (job_spec.cc), each
// answering with Reader::Error's one line.

#include "absl/status/status.h"
#include "config/config_reader.h"
#include "config/configuration.h"
#include "config/job_spec.h"

namespace tony::config {

// Every job type has a command; standalone runs one task; the job keeps within
// tony.task.max-total-{instances,gpus,memory,vcores}.
absl::Status CheckJobSize(const Reader& reader, const JobSpec& spec);

// tony.<type>.min-instances, and torchrun's --nnodes=MIN:MAX in a type's command: which type of a
// PyTorch job is elastic, checked against its instances, the job's framework and types.
absl::Status ReadElastic(const Reader& reader, JobSpec* spec);

// tony.<type>.restart-policy of every job type, once the job's types, its framework and which
// type is elastic are known.
absl::Status ReadRestartPolicies(const Reader& reader, JobSpec* spec);

// tony.application.group.*, the groups' dependency timeouts and the prepare and training stages,
// each naming job types the job has.
absl::Status ReadGroupsAndStages(const Reader& reader, const Configuration& conf, JobSpec* spec);

// tony.application.placement-spec, tony.<type>.placement-spec and tony.containers.placement-spec:
// each a YARN placement constraint, joined into each type's (JobTypeSpec::placement); a job type
// with one has no node label.
absl::Status ReadPlacement(const Reader& reader, JobSpec* spec);

}  // namespace tony::config
