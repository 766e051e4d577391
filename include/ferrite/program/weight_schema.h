// ferrite/program/weight_schema.h — a model family's weights: stored and logical.
//
// Contract (spec §3.4): a `WeightSchema` lists the stored components
// (weight_component.h) and the logical tensors a program sees; each tensor maps
// onto components through a PhysicalWeightLayout tree (weight_layout.h).
//
// `validate(family_id)` checks, in this order (first failure wins):
//   1. version major ≠ 0, ≥ 1 component, ≥ 1 tensor — else UnknownWeightLayout;
//   2. per component (declaration order): unique id; ≥ 1 external name, each
//      non-blank (not only whitespace) and unique across the schema; ≥ 1
//      dimension, none zero; encoding parameters valid
//      (weight_encoding_problem); role/encoding compatible
//      (weight_role_encoding_problem); physical_bytes fits u64; one
//      quantization format id ↔ exactly one encoding across components;
//   3. per tensor (declaration order): unique id; ≥ 1 dimension, none zero;
//      element count fits u64; the layout tree within the depth/node limits
//      and valid against the tensor's dims D (rank r, N = Π D) and dtype:
//      * Dense: a Values component, dense element type == dtype, element
//        count (Π component dims) == N;
//      * Quantized: packed_values has role PackedValues and a Quantized
//        encoding q; scales has role Scales and dense type q.scale_type;
//        zero_points present ⇔ q.zero_point_type present, role ZeroPoints and
//        dense type q.zero_point_type; group_axis < r;
//        packed bytes (Π packed dims) == ceil(N × q.bits_per_weight / 8);
//        scale count (Π scale dims) == (N / D[group_axis]) ×
//        ceil(D[group_axis] / q.group_size)  (one scale per group and row);
//      * BlockQuantized: role PackedValues with a BlockQuantized encoding b;
//        block_axis < r; D[block_axis] % b.logical_values_per_block == 0;
//        (Π block grid dims) × b.logical_values_per_block == N;
//      * Composite: ≥ 1 part; each part has r offsets and r extents, extents
//        > 0, offset + extent ≤ D per axis; the part volumes sum to N and the
//        boxes are pairwise disjoint (so they tile the tensor exactly); each
//        part's tree is validated against its extents and the same dtype;
//      every layout leaf must name a declared component;
//   4. each component is bound at most once across all tensors (and trees);
//   5. every `required` component is bound by some tensor.
// Errors other than (1) are InvalidModelConfig with a field such as
// `weight_schema.components[weight.wq].dimensions` or
// `weight_schema.tensors[weight.wq].physical_layout`; messages name the
// component or tensor id.
//
// `normalize()` sorts components and tensors by id and composite parts by
// (logical_offsets, extents), recursively; validation is order-independent.
//
// JSON (`to_json`, always of the normalized form; `fingerprint()` is
// canonical_fingerprint(to_json()), so it ignores declaration order):
//   {"format_id": "...", "layout_id": "...",
//    "version": {"major": 1, "minor": 0},
//    "components": [{"id": "...", "role": "values",
//                    "external_names": ["..."], "dimensions": [64, 64],
//                    "encoding": ENCODING, "required": true}, ...],
//    "tensors": [{"id": "...", "dimensions": [64, 64],
//                 "logical_element_type": "f16", "physical_layout": LAYOUT,
//                 "required": true}, ...]}
//   ENCODING is one of
//     {"kind": "dense", "element_type": "f32"}
//     {"kind": "dense_affine", "element_type": "f16",
//      "scale": {"numerator": 1, "denominator": 2},
//      "bias": {"numerator": 0, "denominator": 1}}
//     {"kind": "quantized", "format_id": "...", "bits_per_weight": 4,
//      "group_size": 128, "packing": "linear" | "interleaved" | "tiled",
//      "scale_type": "f16", "zero_point_type": "u8" | null}
//     {"kind": "block_quantized", "format_id": "...",
//      "logical_values_per_block": 32, "bytes_per_block": 18}
//   LAYOUT is one of
//     {"kind": "dense", "component_id": "..."}
//     {"kind": "quantized", "packed_values": "...", "scales": "...",
//      "zero_points": "..." | null, "group_axis": 1}
//     {"kind": "block_quantized", "blocks": "...", "block_axis": 1}
//     {"kind": "composite", "parts": [{"layout": LAYOUT,
//      "logical_offsets": [0, 0], "extents": [32, 64]}, ...]}
//   Every key is always present (optional values are null). Roles, packings
//   and element types use their wire names; ids are bare strings.
//
// Example:
//   WeightSchema schema{WeightFormatId::literal("format.safetensors"),
//                       WeightLayoutId::literal("layout.llama"), {1, 0},
//                       {wq_component}, {wq_tensor}};
//   FERRITE_RETURN_IF_ERROR(schema.validate(family_id));
//   schema.normalize();
//   FERRITE_ASSIGN_OR_RETURN(uint64_t bytes, schema.physical_bytes(wq_tensor.id));
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/contract_version.h"
#include "ferrite/core/element_type.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"
#include "ferrite/program/weight_component.h"
#include "ferrite/program/weight_layout.h"
#include "ferrite/program/weight_reference.h"

namespace ferrite {

// One logical weight as the program sees it.
struct WeightTensorSpec {
  WeightId id;
  std::vector<uint64_t> dimensions;
  ElementType logical_element_type = ElementType::kF32;
  PhysicalWeightLayout physical_layout;
  bool required = true;

  friend bool operator==(const WeightTensorSpec&, const WeightTensorSpec&) = default;
};

struct WeightSchema {
  WeightFormatId format_id;
  WeightLayoutId layout_id;
  ContractVersion version;
  std::vector<WeightComponentSpec> components;
  std::vector<WeightTensorSpec> tensors;

  Result<void> validate(const ModelFamilyId& family_id) const;
  void normalize();

  // The components `tensor_id`'s layout references, in schema order (id order
  // once normalized). InvalidExecutionPlan "unknown logical weight `x`" when
  // the tensor is missing; an error naming the id when a reference is unknown
  // or the tree exceeds the depth/node limits.
  Result<std::vector<const WeightComponentSpec*>> physical_component_refs(
      const WeightId& tensor_id) const;
  // Σ physical_bytes of those components (checked).
  Result<uint64_t> physical_bytes(const WeightId& tensor_id) const;
  // Format ids of every Quantized / BlockQuantized component.
  std::set<QuantizationFormatId> quantization_formats() const;

  // Every reference names a schema tensor; every `required` tensor is
  // referenced; each reference's dimensions and element type equal the
  // tensor's logical ones (layouts are not compared). InvalidModelConfig
  // errors naming the weight id (field `program.weights[x]...` or
  // `weight_schema.tensors[x]`).
  Result<void> validate_program_references(const ModelFamilyId& family_id,
                                           std::span<const WeightReference> references) const;

  nlohmann::json to_json() const;
  std::string fingerprint() const;

  const WeightComponentSpec* find_component(const WeightId& id) const;
  const WeightTensorSpec* find_tensor(const WeightId& id) const;

  friend bool operator==(const WeightSchema&, const WeightSchema&) = default;
};

// JSON renderings shared with ResolvedWeightBinding (shapes documented above).
nlohmann::json weight_encoding_to_json(const WeightEncoding& encoding);
nlohmann::json physical_layout_to_json(const PhysicalWeightLayout& layout);
// Their canonical encodings (the bytes out.json(...) of them writes), written
// straight to `out` with no document built.
void encode_weight_encoding(const WeightEncoding& encoding, CanonicalEncoder& out);
void encode_physical_layout(const PhysicalWeightLayout& layout, CanonicalEncoder& out);

}  // namespace ferrite
