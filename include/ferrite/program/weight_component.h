// ferrite/program/weight_component.h — one physically stored weight blob.
//
// Contract (spec §3.4): a `WeightComponentSpec` is one stored array of a
// checkpoint (values, packed quantized values, scales, ...). Its `role` says
// what it holds, its `encoding` how the bytes are interpreted:
//   * DenseEncoding{t}: plain elements of type t;
//   * DenseAffineEncoding{t, scale, bias}: logical = physical × scale + bias,
//     t ∈ {F16, BF16, F32}; scale and bias are exact rationals in lowest terms
//     with a denominator > 0;
//   * QuantizedEncoding{spec}: packed bytes; the component dimensions are
//     already byte dimensions. spec: bits_per_weight 1..=8, group_size a power
//     of two, scale_type ∈ {F16, BF16, F32}, zero_point_type ∈ {U8, U32, I8,
//     I32} or absent;
//   * BlockQuantizedEncoding: the component dimensions are a grid of blocks,
//     each `bytes_per_block` bytes holding `logical_values_per_block` values
//     (both > 0).
// Physical size (checked, nullopt / error on u64 overflow), E = Π dimensions:
//   Dense, DenseAffine → E × element size;  Quantized → E;
//   BlockQuantized → E × bytes_per_block.
// The physical element type is the dense type, else U8.
// Plain data: WeightSchema::validate applies every rule above.
//
// Example:
//   WeightComponentSpec wq{WeightId::literal("weight.wq"), WeightComponentRole::kValues,
//                          {"model.layers.0.attn.wq.weight"}, {64, 64},
//                          DenseEncoding{ElementType::kF16}, true};
//   wq.physical_bytes();  // 8192
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ferrite/core/element_type.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"

namespace ferrite {

enum class WeightComponentRole : uint8_t {
  kValues,
  kPackedValues,
  kScales,
  kZeroPoints,
  kIndices,
  kPermutation,
  kCodebook,
  kMetadata,
};

inline constexpr WeightComponentRole kAllWeightComponentRoles[] = {
    WeightComponentRole::kValues,     WeightComponentRole::kPackedValues,
    WeightComponentRole::kScales,     WeightComponentRole::kZeroPoints,
    WeightComponentRole::kIndices,    WeightComponentRole::kPermutation,
    WeightComponentRole::kCodebook,   WeightComponentRole::kMetadata};

// Wire name: "values", "packed_values", "scales", "zero_points", "indices",
// "permutation", "codebook", "metadata".
std::string_view weight_component_role_name(WeightComponentRole role);
// Parses a wire name; InvalidArgument error otherwise.
Result<WeightComponentRole> parse_weight_component_role(std::string_view name);

enum class QuantizationPacking : uint8_t { kLinear, kInterleaved, kTiled };

// Wire name: "linear", "interleaved", "tiled".
std::string_view quantization_packing_name(QuantizationPacking packing);
Result<QuantizationPacking> parse_quantization_packing(std::string_view name);

// An exact rational for affine encodings: numerator / denominator. Valid iff
// denominator > 0 and gcd(|numerator|, denominator) == 1 (so equal values
// have one representation and one fingerprint).
struct AffineRational {
  int64_t numerator = 0;
  uint64_t denominator = 1;

  bool is_canonical() const;
  friend auto operator<=>(const AffineRational&, const AffineRational&) = default;
};

struct QuantizationSpec {
  QuantizationFormatId format_id;
  uint8_t bits_per_weight = 4;  // 1..=8
  uint64_t group_size = 128;    // power of two > 0
  QuantizationPacking packing = QuantizationPacking::kLinear;
  ElementType scale_type = ElementType::kF16;   // F16 | BF16 | F32
  std::optional<ElementType> zero_point_type;   // U8 | U32 | I8 | I32

  friend auto operator<=>(const QuantizationSpec&, const QuantizationSpec&) = default;
};

struct DenseEncoding {
  ElementType element_type = ElementType::kF32;
  friend auto operator<=>(const DenseEncoding&, const DenseEncoding&) = default;
};
struct DenseAffineEncoding {
  ElementType element_type = ElementType::kF32;
  AffineRational scale;
  AffineRational bias;
  friend auto operator<=>(const DenseAffineEncoding&, const DenseAffineEncoding&) = default;
};
struct QuantizedEncoding {
  QuantizationSpec spec;
  friend auto operator<=>(const QuantizedEncoding&, const QuantizedEncoding&) = default;
};
struct BlockQuantizedEncoding {
  QuantizationFormatId format_id;
  uint64_t logical_values_per_block = 0;  // > 0
  uint64_t bytes_per_block = 0;           // > 0
  friend auto operator<=>(const BlockQuantizedEncoding&, const BlockQuantizedEncoding&) = default;
};

using WeightEncoding =
    std::variant<DenseEncoding, DenseAffineEncoding, QuantizedEncoding, BlockQuantizedEncoding>;

// Wire kind of an encoding: "dense", "dense_affine", "quantized", "block_quantized".
std::string_view weight_encoding_kind(const WeightEncoding& encoding);
// The dense element type (Dense/DenseAffine), else U8.
ElementType weight_encoding_physical_element_type(const WeightEncoding& encoding);
// The quantization format of Quantized/BlockQuantized encodings, else nullopt.
std::optional<QuantizationFormatId> weight_encoding_quantization_format(
    const WeightEncoding& encoding);
bool is_quantized_encoding(const WeightEncoding& encoding);
// Why the encoding's own parameters are invalid (bits, group size, scale /
// zero-point types, block sizes, affine rationals), or nullopt when valid.
std::optional<std::string> weight_encoding_problem(const WeightEncoding& encoding);
// Why `role` cannot carry `encoding`, or nullopt when compatible:
//   Values       ⇒ Dense (any type) or DenseAffine;
//   PackedValues ⇒ Quantized or BlockQuantized;
//   Scales       ⇒ Dense F16/BF16/F32;
//   ZeroPoints, Indices, Permutation ⇒ Dense U8/U32/I8/I32;
//   Codebook, Metadata ⇒ Dense (any type).
std::optional<std::string> weight_role_encoding_problem(WeightComponentRole role,
                                                        const WeightEncoding& encoding);
// Physical byte size of a component with these dimensions (rules above), or
// nullopt on u64 overflow.
std::optional<uint64_t> checked_weight_physical_bytes(std::span<const uint64_t> dimensions,
                                                      const WeightEncoding& encoding);

struct WeightComponentSpec {
  WeightId id;
  WeightComponentRole role = WeightComponentRole::kValues;
  std::vector<std::string> external_names;  // checkpoint names; ≥ 1, non-blank, unique
  std::vector<uint64_t> dimensions;         // ≥ 1 axis, each > 0
  WeightEncoding encoding;
  bool required = true;

  // Checked physical byte size; InvalidExecutionPlan error naming the id on overflow.
  Result<uint64_t> physical_bytes() const;
  ElementType physical_element_type() const {
    return weight_encoding_physical_element_type(encoding);
  }

  friend bool operator==(const WeightComponentSpec&, const WeightComponentSpec&) = default;
};

}  // namespace ferrite
