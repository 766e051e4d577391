// ferrite/plan/plan_node_builder.h — turn one resolved node into a PlanNode.
//
// Contract (spec §8.4): `build_plan_node` is called once per program node in
// program order. It re-runs provider compatibility, requires the jointly
// chosen provider to be a compatible resolution candidate, records the typed
// selection evidence (compatibility rejections as Incompatible, NotRegistered
// for an unknown preferred provider, the joint storage rejection; a preferred
// provider that lost MUST appear: "fallback lacks typed rejection evidence";
// then every resolution-time StorageIncompatible rejection not already there,
// so each provider that could not run the node is listed with its reason),
// emits exact aliases (MustAlias without equal storage is an error; an aliased
// input must be a non-output Activations value whose last consumer is this
// node), state effects (union of accesses per state, sorted) and dependencies
// (producers of inputs ∪ RAW/WAR/WAW state hazards, sorted). `StateHazards`
// carries the per-state history between calls. A node's invocation-scoped
// scratch workspace is `kSharedScratchResourceId`, one arena every node shares
// (nodes run one at a time; the memory summary sizes it by the largest
// node's scratch); binding and persistent workspaces keep per-node ids.
//
// Example:
//   StateHazards hazards;
//   for (size_t i = 0; i < nodes.size(); ++i) {
//     FERRITE_ASSIGN_OR_RETURN(auto node, build_plan_node(context, i, hazards));
//   }
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "ferrite/catalog/capability_catalog.h"
#include "ferrite/compiler/joint_selection.h"
#include "ferrite/compiler/node_resolution.h"
#include "ferrite/core/identity.h"
#include "ferrite/plan/plan_node.h"
#include "ferrite/program/prepared_model_family.h"

namespace ferrite {

inline constexpr std::string_view kSharedScratchResourceId = "resource/scratch/shared";

// Per-state access history: the last writer and the readers since it.
class StateHazards {
 public:
  // Node indices this access must wait for; then records the access.
  std::set<size_t> record(const StateId& state, size_t node_index, TensorAccess access);

 private:
  struct History {
    std::optional<size_t> last_writer;
    std::set<size_t> readers_since_write;
  };
  std::map<StateId, History> states_;
};

// Each program value's first producing node and last consuming node (their
// positions in ModelProgram::nodes()), at the value's
// ModelProgram::ValueInfo::rank: read by position, with no look-up (at
// 100,000 nodes a hashed look-up per binding is a cache miss).
struct ValueNodes {
  static constexpr uint32_t kNone = UINT32_MAX;  // no node produces / reads it
  std::vector<uint32_t> producer;
  std::vector<uint32_t> last_consumer;
};
// Refuses a program of kNone nodes or more.
Result<ValueNodes> value_nodes(const ModelProgram& program);

struct PlanNodeBuildContext {
  const PreparedModelFamily& family;
  const CapabilityCatalog& catalog;
  const JointProviderSelection& selection;
  const std::vector<const ProgramNode*>& program_nodes;        // program order
  const ValueNodes& value_nodes;  // of family.program()
};

Result<PlanNode> build_plan_node(const PlanNodeBuildContext& context, size_t node_index,
                                 const PlanNodeResolution& resolution, StateHazards& hazards);

// build_plan_node in two steps, for building nodes on several threads:
// `build_plan_node_alone` reads nothing but the context and the node (its
// dependencies are its inputs' producers only), so nodes may be built in any
// order and at once; `add_state_dependencies` must then be called for every
// node in program order (it records the node's state accesses in `hazards`
// and adds the nodes it must wait for, keeping dependencies sorted).
Result<PlanNode> build_plan_node_alone(const PlanNodeBuildContext& context, size_t node_index,
                                       const PlanNodeResolution& resolution);
void add_state_dependencies(const PlanNodeBuildContext& context, size_t node_index,
                            PlanNode& node, StateHazards& hazards);

}  // namespace ferrite
