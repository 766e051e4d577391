// ferrite/compiler/tensor_inference.h — option checks and tensor inference.
//
// Contract (spec §11.4–11.5): before anything physical is decided the compiler
//   1. validates the compile options against the program, failing in this
//      order: "program compile options reference an unknown node", "program
//      compile options contain an unknown semantic value", "completion retention
//      must reference a semantic node output", "every program input requires an
//      explicit canonical tensor capacity";
//   2. infers every value's concrete tensor by unification:
//      * option tensors first; then weights' and states' program tensors (an
//        option that states a different tensor for them is an error);
//      * per node in program order, with FRESH per-node symbol tables, and
//        dimension symbols separate from stride symbols: unify each input with
//        its contract, then each output that already has an explicit tensor,
//        then infer the remaining outputs;
//      * a zero extent never binds a symbol; ranges are inclusive;
//      * an output whose dtype, range, symbol or layout is ambiguous is an error
//        that asks for an explicit tensor; blocked outputs get Exact padding when
//        every extent divides its block, else ZeroFill.
//   The tensors come back by the values' ranks (`ValueTensors`); an option
//   tensor of a value the program does not define is the "unknown semantic
//   value" error here too, for a caller that skipped step 1.
// Errors name the node, role, ordinal, value and axis, e.g.
//   node `n` input[0] `value.input` rank or dtype differs from its operation
//   contract: actual rank=1 dtype=U32, expected rank=1 dtypes={F32}
//
// Example:
//   FERRITE_RETURN_IF_ERROR(validate_compile_options(family, options));
//   FERRITE_ASSIGN_OR_RETURN(auto tensors, infer_value_tensors(family, operations, options));
//   tensors.find(ProgramValueId::literal("value.logits"))->to_string();  // "f32[32,512]"
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include <absl/container/inlined_vector.h>

#include "ferrite/catalog/operation_catalog.h"
#include "ferrite/compiler/compile_options.h"
#include "ferrite/core/tensor_contract.h"
#include "ferrite/core/tensor_spec.h"
#include "ferrite/program/prepared_model_family.h"
#include "ferrite/program/value_table.h"

namespace ferrite {

// One namespace of a node's symbol bindings, name → value. A node binds a
// handful of symbols, so the table is a linear scan over an inline array: no
// allocation until more than kInline names are bound (unification runs for
// every binding of every node in every resolution round).
// HAZARD: names are borrowed from the tensor contracts they were bound
// from, which must outlive the table (the compiler's tables live for one
// node's unification; its contracts belong to the catalog).
class SymbolTable {
 public:
  static constexpr size_t kInline = 8;

  // Binds `name` to `value`, or checks its binding: true when it was unbound
  // (and is now `value`) or was already `value`.
  bool bind(std::string_view name, uint64_t value) {
    if (const uint64_t* bound = find(name)) return *bound == value;
    entries_.emplace_back(name, value);
    return true;
  }
  // The value bound to `name`; null when it is unbound.
  const uint64_t* find(std::string_view name) const {
    for (const auto& [bound, value] : entries_) {
      if (bound == name) return &value;
    }
    return nullptr;
  }
  size_t size() const { return entries_.size(); }

 private:
  absl::InlinedVector<std::pair<std::string_view, uint64_t>, kInline> entries_;
};

// Per-node symbol tables. Two namespaces: a dimension symbol never constrains a
// stride symbol of the same name.
struct TensorSymbols {
  SymbolTable dimensions;
  SymbolTable strides;
};

// Every value's concrete tensor, by the value's rank in its program
// (program/value_table.h).
using ValueTensors = ValueTable<ResolvedTensorSpec>;

Result<void> validate_compile_options(const PreparedModelFamily& family,
                                      const ProgramPlanCompileOptions& options);

// Unifies `tensor` with `contract`, committing dimension bindings as they
// happen and stride bindings only for the layout alternative that matches.
// `role` is "input" or "output".
Result<void> unify_tensor(const TensorContract& contract, const ResolvedTensorSpec& tensor,
                          TensorSymbols& symbols, const NodeId& node_id, std::string_view role,
                          size_t ordinal, const ProgramValueId& value_id);

// Infers an output tensor from its contract and the bound symbols.
Result<ResolvedTensorSpec> infer_tensor(const TensorContract& contract,
                                        const TensorSymbols& symbols, const NodeId& node_id);

Result<ValueTensors> infer_value_tensors(const PreparedModelFamily& family,
                                         const OperationCatalog& operations,
                                         const ProgramPlanCompileOptions& options);

}  // namespace ferrite
