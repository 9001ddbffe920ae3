#pragma once
// YARN placement constraints on the wire: a job type's constraint (config/placement_constraint.h;
// the config joins the application's to it, JobTypeSpec::placement) as the SchedulingRequest that
// asks for its containers.
//
// The application's constraint travels in each request, not in the AM's registration (where YARN
// would apply it to the type's tag the same way): an RM whose placement handler is disabled
// records such a registration and then refuses it, so the AM can neither register again nor
// unregister with the reason; refused in an allocate, the job fails saying why.
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

#include "config/placement_constraint.h"
#include "hadoop/yarn/am_rm_client.h"
#include "hadoop/yarn/yarn_am.pb.h"

namespace tony::cluster {

hadoop::proto::PlacementConstraint PlacementToProto(const config::PlacementConstraint& constraint);

// The SchedulingRequest for one job type wanting `outstanding` more containers (an absolute count:
// the scheduler replaces its own; 0 withdraws it), tagged `tag`, under `constraint`.
hadoop::proto::SchedulingRequest SchedulingRequestFor(
    const std::string& tag, int32_t priority, const hadoop::Resource& capability,
    int32_t outstanding, const hadoop::proto::PlacementConstraint& constraint);

}  // namespace tony::cluster
