#pragma once
// YARN placement constraints on the wire: a job type's constraint (config/placement_constraint.h),
// and the application's, as the SchedulingRequest that asks for its containers.
//
// The application's constraint goes into each request, joined to the type's with AND, which is
// how the RM applies one registered for the type's tag. Not at registration: an RM whose placement
// handler is disabled records the registration and then refuses it, so the AM can neither
// register again nor unregister with the reason; refused in an allocate, the job fails saying why.
//
// Why every constrained type asks with SchedulingRequests and the rest with ResourceRequests:
// only containers granted for a SchedulingRequest carry allocation tags (each type's is its name),
// so `notin,node,worker` sees them; a SchedulingRequest carries no node label and no locality,
// which the other types keep. The CapacityScheduler skips the SchedulingRequests of an allocate
// call whose ResourceRequests changed anything, so the allocator never sends both in one call.
//
// Pure functions.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "config/placement_constraint.h"
#include "hadoop/am_rm_client.h"
#include "hadoop/yarn_am.pb.h"

namespace tony::cluster {

hadoop::proto::PlacementConstraint PlacementToProto(const config::PlacementConstraint& constraint);

// What a constraint-free type of a job with an application-wide constraint sends: every node may
// hold any number of its containers (the RM compares a resent request's constraint, so there must
// be one).
config::PlacementConstraint Unconstrained(const std::string& tag);

// The SchedulingRequest for one job type wanting `outstanding` more containers (an absolute count:
// the scheduler replaces its own; 0 withdraws it), tagged `tag`, under `constraint`.
hadoop::proto::SchedulingRequest SchedulingRequestFor(
    const std::string& tag, int32_t priority, const hadoop::Resource& capability,
    int32_t outstanding, const hadoop::proto::PlacementConstraint& constraint);

// What a job type's containers must meet: its own constraint and the application's (either may be
// ""; not both). An error when one does not parse (the client checked them already).
absl::StatusOr<config::PlacementConstraint> CombinedPlacement(const std::string& type,
                                                              const std::string& application);

}  // namespace tony::cluster
