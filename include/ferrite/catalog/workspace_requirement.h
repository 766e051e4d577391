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
//            {"pages":{"bytes_per_page":N,"maximum_pages":N}}
//
// Example:
//   ProviderWorkspaceRequirement scratch{WorkspaceTokens{256}, 64,
//       ProviderWorkspaceScope::kInvocation, DynamicStorageRequirement::contiguous()};
//   FERRITE_RETURN_IF_ERROR(scratch.validate());
//   scratch.bytes_for(4, 100);  // 25600
#pragma once

#include <compare>
#include <cstdint>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/provider_descriptor.h"
#include "ferrite/core/status.h"

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

using ProviderWorkspaceSizeFormula = std::variant<WorkspaceFixed, WorkspaceActualSequences,
                                                  WorkspaceTokens, WorkspaceAffine,
                                                  WorkspacePages>;

// Wire kind: "fixed", "actual_sequences", "tokens", "affine", "pages".
std::string_view workspace_formula_kind(const ProviderWorkspaceSizeFormula& formula);
// The formula rules of the contract above.
Result<void> validate_workspace_formula(const ProviderWorkspaceSizeFormula& formula);
nlohmann::json workspace_formula_to_json(const ProviderWorkspaceSizeFormula& formula);

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

}  // namespace ferrite
