#include "cluster/yarn/yarn_placement.h"

namespace tony::cluster {

namespace proto = hadoop::proto;

proto::PlacementConstraint PlacementToProto(const config::PlacementConstraint& constraint) {
  using Kind = config::PlacementConstraint::Kind;
  proto::PlacementConstraint out;
  if (constraint.kind != Kind::kSimple) {
    proto::CompositePlacementConstraint* composite = out.mutable_composite_constraint();
    composite->set_composite_type(constraint.kind == Kind::kAnd
                                      ? proto::CompositePlacementConstraint::COMPOSITE_AND
                                      : proto::CompositePlacementConstraint::COMPOSITE_OR);
    for (const config::PlacementConstraint& child : constraint.children) {
      *composite->add_child_constraints() = PlacementToProto(child);
    }
    return out;
  }
  proto::SimplePlacementConstraint* simple = out.mutable_simple_constraint();
  simple->set_scope(constraint.scope);
  simple->set_min_cardinality(constraint.min_cardinality);
  simple->set_max_cardinality(constraint.max_cardinality);
  using Op = config::PlacementConstraint::AttributeOp;
  simple->set_attribute_op_code(constraint.op == Op::kEq   ? proto::ATTRIBUTE_EQ
                                : constraint.op == Op::kNe ? proto::ATTRIBUTE_NE
                                                           : proto::ATTRIBUTE_NO_OP);
  for (const config::PlacementTarget& target : constraint.targets) {
    proto::PlacementConstraintTarget* wire = simple->add_target_expressions();
    wire->set_target_type(target.node_attribute
                              ? proto::PlacementConstraintTarget::TARGET_NODE_ATTRIBUTE
                              : proto::PlacementConstraintTarget::TARGET_ALLOCATION_TAG);
    wire->set_target_key(target.key);
    for (const std::string& value : target.values) wire->add_target_values(value);
  }
  return out;
}

proto::SchedulingRequest SchedulingRequestFor(const std::string& tag, int32_t priority,
                                              const hadoop::Resource& capability,
                                              int32_t outstanding,
                                              const proto::PlacementConstraint& constraint) {
  proto::SchedulingRequest request;
  request.set_allocation_request_id(0);  // the priority tells the types apart
  request.mutable_priority()->set_priority(priority);
  request.mutable_execution_type()->set_execution_type(1);  // GUARANTEED
  request.mutable_execution_type()->set_enforce_execution_type(false);
  request.add_allocation_tags(tag);
  request.mutable_resource_sizing()->set_num_allocations(outstanding);
  *request.mutable_resource_sizing()->mutable_resources() = hadoop::ResourceToProto(capability);
  *request.mutable_placement_constraint() = constraint;
  return request;
}

}  // namespace tony::cluster
