// ferrite/compiler/program_node_bindings.h — resolve every node of a program.
//
// Contract (spec §11.7): `resolve_program_nodes` builds, for each program node
// in order, its physical bindings (inputs in ordinal order, then outputs) from
// the inferred tensors and the given value storages — weights bind as Weights
// with their execution-schema contract, states as State, everything else as
// Activations; inputs never alias, outputs carry their contract's alias policy
// — and calls resolve_node with the node's requested capabilities and
// preferred provider from the options. The compiler calls it once per
// placement (probe, each alignment round, each activation packing round).
//
// `previous`, when given, is the result of an earlier call in the SAME
// compilation (same context and options; the compiler passes the probe's
// result to every alignment round and the unpacked resolution to every
// packing round): a node whose bindings, requested
// capabilities and preferred provider equal its previous resolution's takes
// that resolution as it is instead of being resolved again. resolve_node is a
// function of exactly (context, node, bindings, capabilities, preferred
// provider) — its estimator input fingerprint is built from them and the
// context — so the result is the one resolving again would give. A weight
// binding's contract is the context's precomputed one
// (NodeResolutionContext::weight_contracts) when it has it.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto resolutions,
//                            resolve_program_nodes(context, options, tensors, storages));
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "ferrite/catalog/value_storage.h"
#include "ferrite/compiler/compile_options.h"
#include "ferrite/compiler/node_resolution.h"
#include "ferrite/compiler/tensor_inference.h"

namespace ferrite {

// One compilation's weight contracts: ResolvedWeightBinding::from_schema for
// every program weight the schema can bind (a weight it cannot, or whose
// contract breaks its own rules, is left out, so resolution reports it at its
// node), each shared with its canonical bytes and the evidence that it passed
// its own rules (SharedWeightContract): what
// NodeResolutionContext::weight_contracts points at. Each contract is checked
// once here, where it lives; the bindings of every round that point at it
// skip that check (ResolvedValueBinding::create).
// Derived once per compilation and shared (ProgramResolution keeps it for the
// packing rounds).
struct ProgramWeightContracts {
  static std::shared_ptr<const ProgramWeightContracts> derive(const ModelProgram& program,
                                                              const WeightSchema& schema);
  WeightContracts contracts;
};

// When a node's estimator-input digest is computed (it is the same digest
// either way). kWhenRead: by its first reader (usually the plan build, for
// the chosen provider only). kSoleCandidateNow: a node resolved in this call
// with exactly one candidate — whose digest the plan will read if this is
// the last round — has it computed right after its resolution, on the
// resolving thread, while the bindings it encodes are in cache; read at the
// plan build of a large program they are cold (measured: 2.4 µs of a
// 100,001-node chain's 33 µs per node went to that).
enum class InputDigests : uint8_t { kWhenRead, kSoleCandidateNow };

Result<std::vector<PlanNodeResolution>> resolve_program_nodes(
    const NodeResolutionContext& context, const ProgramPlanCompileOptions& options,
    const ValueTensors& tensors, const ValueStorages& storages,
    const std::vector<PlanNodeResolution>* previous = nullptr,
    InputDigests digests = InputDigests::kWhenRead);

}  // namespace ferrite
