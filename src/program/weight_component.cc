#include "ferrite/program/weight_component.h"

#include <numeric>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/enum_names.h"
#include "ferrite/core/overloaded.h"

namespace ferrite {
namespace {

bool is_float_type(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBf16 || type == ElementType::kF32;
}

bool is_integer_index_type(ElementType type) {
  return type == ElementType::kU8 || type == ElementType::kU32 || type == ElementType::kI8 ||
         type == ElementType::kI32;
}

std::optional<std::string> rational_problem(std::string_view what, const AffineRational& value) {
  if (value.denominator == 0) {
    return fmt::format("affine {} {}/0 has a zero denominator", what, value.numerator);
  }
  if (!value.is_canonical()) {
    return fmt::format("affine {} {}/{} is not in lowest terms", what, value.numerator,
                       value.denominator);
  }
  return std::nullopt;
}

}  // namespace

constexpr EnumNames<WeightComponentRole, 8> kWeightComponentRoleNames{
    "weight component role",
    {{{WeightComponentRole::kValues, "values"},
      {WeightComponentRole::kPackedValues, "packed_values"},
      {WeightComponentRole::kScales, "scales"},
      {WeightComponentRole::kZeroPoints, "zero_points"},
      {WeightComponentRole::kIndices, "indices"},
      {WeightComponentRole::kPermutation, "permutation"},
      {WeightComponentRole::kCodebook, "codebook"},
      {WeightComponentRole::kMetadata, "metadata"}}},
    EnumListStyle::kOneOf};
FERRITE_ENUM_NAME_FUNCTIONS(kWeightComponentRoleNames, WeightComponentRole::kMetadata,
                            weight_component_role_name, parse_weight_component_role)

constexpr EnumNames<QuantizationPacking, 3> kQuantizationPackingNames{
    "quantization packing",
    {{{QuantizationPacking::kLinear, "linear"},
      {QuantizationPacking::kInterleaved, "interleaved"},
      {QuantizationPacking::kTiled, "tiled"}}},
    EnumListStyle::kOneOf};
FERRITE_ENUM_NAME_FUNCTIONS(kQuantizationPackingNames, QuantizationPacking::kTiled,
                            quantization_packing_name, parse_quantization_packing)

bool AffineRational::is_canonical() const {
  if (denominator == 0) return false;
  // |numerator| as u64 without overflowing on INT64_MIN.
  const uint64_t magnitude = numerator < 0 ? uint64_t{0} - static_cast<uint64_t>(numerator)
                                           : static_cast<uint64_t>(numerator);
  return std::gcd(magnitude, denominator) == 1;
}

std::string_view weight_encoding_kind(const WeightEncoding& encoding) {
  return std::visit(Overloaded{
                        [](const DenseEncoding&) { return std::string_view("dense"); },
                        [](const DenseAffineEncoding&) { return std::string_view("dense_affine"); },
                        [](const QuantizedEncoding&) { return std::string_view("quantized"); },
                        [](const BlockQuantizedEncoding&) {
                          return std::string_view("block_quantized");
                        },
                    },
                    encoding);
}

ElementType weight_encoding_physical_element_type(const WeightEncoding& encoding) {
  if (const auto* dense = std::get_if<DenseEncoding>(&encoding)) return dense->element_type;
  if (const auto* affine = std::get_if<DenseAffineEncoding>(&encoding)) {
    return affine->element_type;
  }
  return ElementType::kU8;
}

std::optional<QuantizationFormatId> weight_encoding_quantization_format(
    const WeightEncoding& encoding) {
  if (const auto* quantized = std::get_if<QuantizedEncoding>(&encoding)) {
    return quantized->spec.format_id;
  }
  if (const auto* block = std::get_if<BlockQuantizedEncoding>(&encoding)) return block->format_id;
  return std::nullopt;
}

bool is_quantized_encoding(const WeightEncoding& encoding) {
  return std::holds_alternative<QuantizedEncoding>(encoding) ||
         std::holds_alternative<BlockQuantizedEncoding>(encoding);
}

std::optional<std::string> weight_encoding_problem(const WeightEncoding& encoding) {
  return std::visit(
      Overloaded{
          [](const DenseEncoding&) -> std::optional<std::string> { return std::nullopt; },
          [](const DenseAffineEncoding& affine) -> std::optional<std::string> {
            if (!is_float_type(affine.element_type)) {
              return fmt::format("dense affine encoding requires F16, BF16 or F32, got {}",
                                 element_type_debug_name(affine.element_type));
            }
            if (auto problem = rational_problem("scale", affine.scale)) return problem;
            return rational_problem("bias", affine.bias);
          },
          [](const QuantizedEncoding& quantized) -> std::optional<std::string> {
            const QuantizationSpec& spec = quantized.spec;
            if (spec.bits_per_weight < 1 || spec.bits_per_weight > 8) {
              return fmt::format("quantization format `{}` bits_per_weight {} is outside 1..=8",
                                 spec.format_id.str(), spec.bits_per_weight);
            }
            if (!is_power_of_two(spec.group_size)) {
              return fmt::format(
                  "quantization format `{}` group_size {} is not a power of two greater than 0",
                  spec.format_id.str(), spec.group_size);
            }
            if (!is_float_type(spec.scale_type)) {
              return fmt::format(
                  "quantization format `{}` scale_type must be F16, BF16 or F32, got {}",
                  spec.format_id.str(), element_type_debug_name(spec.scale_type));
            }
            if (spec.zero_point_type && !is_integer_index_type(*spec.zero_point_type)) {
              return fmt::format(
                  "quantization format `{}` zero_point_type must be U8, U32, I8 or I32, got {}",
                  spec.format_id.str(), element_type_debug_name(*spec.zero_point_type));
            }
            return std::nullopt;
          },
          [](const BlockQuantizedEncoding& block) -> std::optional<std::string> {
            if (block.logical_values_per_block == 0) {
              return fmt::format(
                  "block quantization format `{}` logical_values_per_block must be greater than 0",
                  block.format_id.str());
            }
            if (block.bytes_per_block == 0) {
              return fmt::format(
                  "block quantization format `{}` bytes_per_block must be greater than 0",
                  block.format_id.str());
            }
            return std::nullopt;
          },
      },
      encoding);
}

std::optional<std::string> weight_role_encoding_problem(WeightComponentRole role,
                                                        const WeightEncoding& encoding) {
  const bool dense = std::holds_alternative<DenseEncoding>(encoding);
  const std::string_view role_name = weight_component_role_name(role);
  const std::string_view kind = weight_encoding_kind(encoding);
  switch (role) {
    case WeightComponentRole::kValues:
      if (dense || std::holds_alternative<DenseAffineEncoding>(encoding)) return std::nullopt;
      return fmt::format("role `{}` requires a dense or dense_affine encoding, got `{}`",
                         role_name, kind);
    case WeightComponentRole::kPackedValues:
      if (is_quantized_encoding(encoding)) return std::nullopt;
      return fmt::format("role `{}` requires a quantized or block_quantized encoding, got `{}`",
                         role_name, kind);
    case WeightComponentRole::kScales:
      if (dense && is_float_type(std::get<DenseEncoding>(encoding).element_type)) {
        return std::nullopt;
      }
      if (dense) {
        return fmt::format("role `{}` requires dense F16, BF16 or F32 elements, got {}",
                           role_name,
                           element_type_debug_name(std::get<DenseEncoding>(encoding).element_type));
      }
      return fmt::format("role `{}` requires a dense encoding, got `{}`", role_name, kind);
    case WeightComponentRole::kZeroPoints:
    case WeightComponentRole::kIndices:
    case WeightComponentRole::kPermutation:
      if (dense && is_integer_index_type(std::get<DenseEncoding>(encoding).element_type)) {
        return std::nullopt;
      }
      if (dense) {
        return fmt::format("role `{}` requires dense U8, U32, I8 or I32 elements, got {}",
                           role_name,
                           element_type_debug_name(std::get<DenseEncoding>(encoding).element_type));
      }
      return fmt::format("role `{}` requires a dense encoding, got `{}`", role_name, kind);
    case WeightComponentRole::kCodebook:
    case WeightComponentRole::kMetadata:
      if (dense) return std::nullopt;
      return fmt::format("role `{}` requires a dense encoding, got `{}`", role_name, kind);
  }
  return fmt::format("unknown role for encoding `{}`", kind);
}

std::optional<uint64_t> checked_weight_physical_bytes(std::span<const uint64_t> dimensions,
                                                      const WeightEncoding& encoding) {
  auto count = checked_product(dimensions);
  if (!count) return std::nullopt;
  if (std::holds_alternative<QuantizedEncoding>(encoding)) return count;
  if (const auto* block = std::get_if<BlockQuantizedEncoding>(&encoding)) {
    return checked_mul(*count, block->bytes_per_block);
  }
  return checked_mul(*count,
                     element_type_size_bytes(weight_encoding_physical_element_type(encoding)));
}

Result<uint64_t> WeightComponentSpec::physical_bytes() const {
  auto bytes = checked_weight_physical_bytes(dimensions, encoding);
  if (!bytes) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "weight component `{}` physical byte size overflows u64", id.str());
  }
  return *bytes;
}

}  // namespace ferrite
