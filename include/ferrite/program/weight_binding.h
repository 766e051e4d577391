// ferrite/program/weight_binding.h — the provider-visible contract of one weight.
//
// Contract (spec §5.5): a `ResolvedWeightBinding` is what a provider sees of a
// logical weight: the schema's format/layout ids and version, the tensor's
// layout tree and the stored components that tree references (sorted by id,
// with role, physical dimensions and encoding; external names are dropped).
// `from_schema` builds it and checks:
// The layout tree is copied with its composite parts normalized.
//   * structure (`validate`): version major ≠ 0; ≥ 1 component; component ids
//     strictly increasing; the id set equals the ids the tree references;
//     every component has ≥ 1 dimension, none zero, and a physical byte size
//     that fits u64; the tree is within the depth/node limits;
//   * logic (`validate_logical(dims, dtype)`): the component encodings and
//     roles and the layout tree pass the weight-schema rules (weight_schema.h,
//     step 2 without names and step 3) for a tensor of those dims and dtype.
// Errors are InvalidExecutionPlan and name the weight id.
//
// JSON (`to_json`; ENCODING and LAYOUT as in weight_schema.h):
//   {"weight_id": "...", "format_id": "...", "layout_id": "...",
//    "schema_version": {"major": 1, "minor": 0}, "physical_layout": LAYOUT,
//    "components": [{"component_id": "...", "role": "packed_values",
//                    "physical_dimensions": [64, 32], "encoding": ENCODING}, ...]}
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto binding,
//       ResolvedWeightBinding::from_schema(schema, WeightId::literal("weight.wq")));
//   if (binding.has_quantized_components()) formats = binding.quantization_formats();
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/core/contract_version.h"
#include "ferrite/core/element_type.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"
#include "ferrite/program/weight_component.h"
#include "ferrite/program/weight_layout.h"
#include "ferrite/program/weight_schema.h"

namespace ferrite {

struct ResolvedWeightComponentLayout {
  WeightId component_id;
  WeightComponentRole role = WeightComponentRole::kValues;
  std::vector<uint64_t> physical_dimensions;
  WeightEncoding encoding;

  // Checked physical byte size (weight_component.h rules); error names the id.
  Result<uint64_t> physical_bytes() const;
  ElementType physical_element_type() const {
    return weight_encoding_physical_element_type(encoding);
  }

  friend bool operator==(const ResolvedWeightComponentLayout&,
                         const ResolvedWeightComponentLayout&) = default;
};

struct ResolvedWeightBinding {
  WeightId weight_id;
  WeightFormatId format_id;
  WeightLayoutId layout_id;
  ContractVersion schema_version;
  PhysicalWeightLayout physical_layout;
  std::vector<ResolvedWeightComponentLayout> components;  // sorted by component_id

  static Result<ResolvedWeightBinding> from_schema(const WeightSchema& schema,
                                                   const WeightId& tensor_id);
  // from_schema without its two checks (`validate`, `validate_logical`), for
  // a caller that checks the binding where it will live
  // (CheckedWeightBinding::check). Fails only for an unknown weight or
  // component.
  static Result<ResolvedWeightBinding> assemble_from_schema(const WeightSchema& schema,
                                                            const WeightId& tensor_id);

  Result<void> validate() const;
  Result<void> validate_logical(std::span<const uint64_t> dimensions,
                                ElementType logical_element_type) const;

  std::set<QuantizationFormatId> quantization_formats() const;
  bool has_quantized_components() const;
  // Σ component physical bytes (checked).
  Result<uint64_t> physical_bytes() const;

  nlohmann::json to_json() const;

  friend bool operator==(const ResolvedWeightBinding&, const ResolvedWeightBinding&) = default;
};

// Evidence that one immutable ResolvedWeightBinding passed `validate()` and
// `validate_logical(dims, dtype)`: made only by `check`, which runs both. A
// compilation checks each weight's shared contract once and hands the
// evidence to every binding of it (ResolvedValueBinding::create), instead of
// checking the same contract again in every round.
//
// Hazard: the evidence names the contract by address. Keep it beside the
// contract it checked (the same owner, the same lifetime) and never mutate
// that contract; evidence that outlived its contract could vouch for another
// object later allocated at the same address.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto checked,
//       CheckedWeightBinding::check(contract, tensor.dimensions, tensor.logical_element_type));
//   if (checked.vouches_for(contract, dims, dtype)) { /* no second check needed */ }
class CheckedWeightBinding {
 public:
  static Result<CheckedWeightBinding> check(const ResolvedWeightBinding& binding,
                                            std::span<const uint64_t> dimensions,
                                            ElementType logical_element_type);
  // Whether `binding` is the contract checked here, for exactly these
  // logical dimensions and element type.
  bool vouches_for(const ResolvedWeightBinding* binding, std::span<const uint64_t> dimensions,
                   ElementType logical_element_type) const;

 private:
  CheckedWeightBinding() = default;
  const ResolvedWeightBinding* binding_ = nullptr;
  std::vector<uint64_t> dimensions_;
  ElementType element_type_{};
};

}  // namespace ferrite
