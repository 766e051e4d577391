// ferrite/catalog/workspace_requirement.h — a provider-declared workspace.
//
// Contract (spec §6.1): a `ProviderWorkspaceRequirement` says how many bytes a
// provider needs as a function of the work it is given, how they must be
// aligned, how long they live (`scope`) and which dynamic storage profiles can
// back them. Size formulas (plain data; `validate` checks them):
//   Fixed{bytes > 0}                          bytes
//   ActualSequences{bytes_per_sequence > 0}   bytes_per_sequence × sequences
//   Tokens{bytes_per_token > 0}               bytes_per_token × tokens
//   Affine{fixed, per_sequence, per_token}    fixed + per_sequence × sequences
//                                             + per_token × tokens;
//                                             ≥ 1 of the two rates > 0
//   Pages{bytes_per_page > 0, maximum_pages > 0, product fits u64}
//                                             bytes_per_page × pages,
//                                             pages ≤ maximum_pages
//   Shape{fixed, terms}                       fixed + Σ term.bytes × Π factors
//                                             (≥ 1 term, every term.bytes > 0)
// A Shape formula depends on the node, not on (sequences, tokens): each
// factor is a dimension of one of the node's bound tensors
// (role, ordinal, axis), the token rows of a bound token-scaled state (role,
// ordinal; 0 for any other value), or an unsigned attribute of the node (by
// its id), each optionally divided by `divisor` rounding up (≥ 1). Only an
// estimator can evaluate it (`resolve_workspace_shape`, against the
// estimate request): a declarative estimator resolves it to Fixed (or to no
// workspace when it comes to 0 bytes), so a plan never holds a Shape formula
// and `bytes_for*` reject one.
// The seed's `BoundedShapeBuckets` formula is deliberately NOT supported.
// Formulas never contain policy ceilings: the plan builder binds them to
// (max active sequences, max scheduled tokens) through `bytes_for`.
//
// `validate()` (InvalidExecutionPlan): the formula rules above; alignment a
// non-zero power of two; Plan scope requires Fixed; Sequence scope forbids
// per-sequence terms (ActualSequences, Affine with per_sequence > 0); the
// storage requirement accepts ≥ 1 profile; `minimum_bytes()` computable.
//
// Evaluation (checked, never wraps; the result is aligned up to
// `alignment_bytes`; a formula that evaluates to 0 bytes is an error):
//   * `bytes_for_shape(s, t, p)` — the formula at s sequences, t tokens and
//     p pages (p > maximum_pages is an error);
//   * `bytes_for(s, t)` — the reservation for s sequences and t tokens: page
//     formulas are independent of (s, t) and reserve `maximum_pages`;
//   * `minimum_bytes()` — `bytes_for_shape(1, 1, 1)`.
//
// JSON (`to_json`; also the declarative catalog shape, see
// declarative_estimator.h):
//   {"formula": FORMULA, "alignment_bytes": 64, "scope": "invocation",
//    "storage": ["linear/contiguous", ...]}
//   FORMULA: {"fixed":{"bytes":N}} | {"actual_sequences":{"bytes_per_sequence":N}} |
//            {"tokens":{"bytes_per_token":N}} |
//            {"affine":{"fixed":N,"per_sequence":N,"per_token":N}} |
//            {"pages":{"bytes_per_page":N,"maximum_pages":N}} |
//            {"shape":{"fixed":N,"terms":[{"bytes":N,"factors":[FACTOR, ...]}, ...]}}
//   FACTOR: {"dimension":{"role":"input"|"output","ordinal":N,"axis":N},"divisor":N} |
//           {"token_rows":{"role":"input"|"output","ordinal":N},"divisor":N} |
//           {"attribute":"n_heads","divisor":N}     ("divisor" 1 for a plain factor)
//
// Example:
//   ProviderWorkspaceRequirement scratch{WorkspaceTokens{256}, 64,
//       ProviderWorkspaceScope::kInvocation, DynamicStorageRequirement::contiguous()};
//   FERRITE_RETURN_IF_ERROR(scratch.validate());
//   scratch.bytes_for(4, 100);  // 25600
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/provider_descriptor.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"
#include "ferrite/program/semantic_value.h"

namespace ferrite {

enum class ProviderWorkspaceScope : uint8_t { kPlan, kRequest, kSequence, kStep, kInvocation };

// "plan", "request", "sequence", "step", "invocation".
std::string_view provider_workspace_scope_name(ProviderWorkspaceScope scope);
// Parses a wire name; InvalidArgument error otherwise.
Result<ProviderWorkspaceScope> parse_provider_workspace_scope(std::string_view name);

struct WorkspaceFixed {
  uint64_t bytes = 0;
  friend auto operator<=>(const WorkspaceFixed&, const WorkspaceFixed&) = default;
};
struct WorkspaceActualSequences {
  uint64_t bytes_per_sequence = 0;
  friend auto operator<=>(const WorkspaceActualSequences&,
                          const WorkspaceActualSequences&) = default;
};
struct WorkspaceTokens {
  uint64_t bytes_per_token = 0;
  friend auto operator<=>(const WorkspaceTokens&, const WorkspaceTokens&) = default;
};
struct WorkspaceAffine {
  uint64_t fixed = 0;
  uint64_t per_sequence = 0;
  uint64_t per_token = 0;
  friend auto operator<=>(const WorkspaceAffine&, const WorkspaceAffine&) = default;
};
struct WorkspacePages {
  uint64_t bytes_per_page = 0;
  uint64_t maximum_pages = 0;
  friend auto operator<=>(const WorkspacePages&, const WorkspacePages&) = default;
};

enum class WorkspaceShapeSource : uint8_t { kDimension, kTokenRows, kAttribute };

// One factor of a Shape term: ceil(x / divisor) where x is the source's value.
struct WorkspaceShapeFactor {
  WorkspaceShapeSource source = WorkspaceShapeSource::kDimension;
  ValueBindingRole role = ValueBindingRole::kInput;  // kDimension, kTokenRows
  uint32_t ordinal = 0;                              // kDimension, kTokenRows
  uint32_t axis = 0;                                 // kDimension
  std::string attribute;                             // kAttribute: the attribute id
  uint64_t divisor = 1;
  friend auto operator<=>(const WorkspaceShapeFactor&, const WorkspaceShapeFactor&) = default;
};
struct WorkspaceShapeTerm {
  uint64_t bytes = 0;
  std::vector<WorkspaceShapeFactor> factors;
  friend auto operator<=>(const WorkspaceShapeTerm&, const WorkspaceShapeTerm&) = default;
};
struct WorkspaceShape {
  uint64_t fixed = 0;
  std::vector<WorkspaceShapeTerm> terms;
  friend auto operator<=>(const WorkspaceShape&, const WorkspaceShape&) = default;
};

using ProviderWorkspaceSizeFormula = std::variant<WorkspaceFixed, WorkspaceActualSequences,
                                                  WorkspaceTokens, WorkspaceAffine,
                                                  WorkspacePages, WorkspaceShape>;

// Wire kind: "fixed", "actual_sequences", "tokens", "affine", "pages", "shape".
std::string_view workspace_formula_kind(const ProviderWorkspaceSizeFormula& formula);
// The formula rules of the contract above.
Result<void> validate_workspace_formula(const ProviderWorkspaceSizeFormula& formula);
nlohmann::json workspace_formula_to_json(const ProviderWorkspaceSizeFormula& formula);

std::string_view workspace_shape_source_name(WorkspaceShapeSource source);  // "dimension", ...
nlohmann::json workspace_shape_factor_to_json(const WorkspaceShapeFactor& factor);

struct ProviderWorkspaceRequirement {
  ProviderWorkspaceSizeFormula formula = WorkspaceFixed{};
  uint64_t alignment_bytes = 1;
  ProviderWorkspaceScope scope = ProviderWorkspaceScope::kInvocation;
  DynamicStorageRequirement storage;

  Result<void> validate() const;
  Result<uint64_t> bytes_for(uint64_t sequences, uint64_t tokens) const;
  Result<uint64_t> bytes_for_shape(uint64_t sequences, uint64_t tokens, uint64_t pages) const;
  Result<uint64_t> minimum_bytes() const;
  nlohmann::json to_json() const;

  friend bool operator==(const ProviderWorkspaceRequirement&,
                         const ProviderWorkspaceRequirement&) = default;
};

class ResolvedValueBinding;

// What a Shape factor may read of one bound slot.
struct WorkspaceShapeSlot {
  ValueBindingRole role = ValueBindingRole::kInput;
  uint32_t ordinal = 0;
  std::vector<uint64_t> dimensions;
  uint64_t token_rows = 0;  // 0 unless a token-scaled state
};

// The bytes of `shape` for one node (before alignment; may be 0); the errors
// of resolve_workspace_shape. Kernel harnesses use it to size scratch exactly
// as a plan would.
Result<uint64_t> evaluate_workspace_shape(const WorkspaceShape& shape, const NodeId& node,
                                          const std::map<AttributeId, SemanticValue>& attributes,
                                          const std::vector<WorkspaceShapeSlot>& slots);

// `workspace` with a Shape formula evaluated for one node: its attributes,
// its bindings (slot order) and the token rows of each binding (0 where it is
// not a token-scaled state; empty means none). The result has a Fixed
// formula of the total bytes, or is nullopt when the total is 0; a
// non-Shape workspace is returned as it is. Errors (InvalidExecutionPlan,
// naming the node): a factor names a slot the node does not bind, an axis
// past the tensor's rank, a missing or non-unsigned attribute; overflow.
Result<std::optional<ProviderWorkspaceRequirement>> resolve_workspace_shape(
    const ProviderWorkspaceRequirement& workspace, const NodeId& node,
    const std::map<AttributeId, SemanticValue>& attributes,
    std::span<const ResolvedValueBinding> values, std::span<const uint64_t> token_rows);

}  // namespace ferrite
