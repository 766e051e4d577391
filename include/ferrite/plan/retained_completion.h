// ferrite/plan/retained_completion.h — completion values kept readable.
//
// Contract (spec §9): every retained value must be a node output; exactly one
// plan-node output binding carries it, with usage Activations and exactly one
// storage component; the retained range is [offset, offset + tensor minimum
// bytes); no node at or after the producer (other than the producing binding)
// may write an overlapping range of that resource. Result sorted by value id.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto kept, resolve_retained_completion_values(family, nodes, spec));
//   kept[0].resource_id;
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/compiler/compile_options.h"
#include "ferrite/plan/plan_node.h"

namespace ferrite {

struct RetainedCompletionValue {
  ProgramValueId value_id;
  NodeId producer_node_id;
  uint32_t output_ordinal = 0;
  ResourceId resource_id;
  uint64_t logical_offset_bytes = 0;
  ResolvedTensorSpec tensor;

  nlohmann::json to_json() const;
  friend bool operator==(const RetainedCompletionValue&, const RetainedCompletionValue&) = default;
};

Result<std::vector<RetainedCompletionValue>> resolve_retained_completion_values(
    const PreparedModelFamily& family, const std::vector<PlanNode>& nodes,
    const CompletionRetentionSpec& retention);

}  // namespace ferrite
