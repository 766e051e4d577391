#include "ferrite/format/weight_schema_reader.h"

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ferrite/format/tensor_reader.h"

namespace ferrite {
namespace {

// Reads "kind" of a discriminated object before its keys are checked.
Result<std::string> read_kind(const JsonCursor& cursor, std::string_view expected) {
  if (!cursor.is_object()) return cursor.type_error(expected);
  const auto& object = cursor.json();
  auto it = object.find("kind");
  if (it == object.end()) {
    const std::string child = json_child_path(cursor.path(), "kind");
    return make_error(ErrorCode::kSerialization, "missing required field `{}`", child)
        .with_field("path", child);
  }
  return JsonCursor(*it, json_child_path(cursor.path(), "kind")).string();
}

Result<AffineRational> read_affine_rational(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object({"numerator", "denominator"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor numerator, object.required("numerator"));
  FERRITE_ASSIGN_OR_RETURN(int64_t n, numerator.i64());
  FERRITE_ASSIGN_OR_RETURN(uint64_t d, object.required_u64("denominator"));
  return AffineRational{n, d};
}

Result<WeightComponentRole> read_role(const JsonCursor& cursor) {
  return cursor.parsed_string(parse_weight_component_role, "component role");
}

Result<QuantizationPacking> read_packing(const JsonCursor& cursor) {
  return cursor.parsed_string(parse_quantization_packing, "quantization packing");
}

Result<PhysicalWeightLayout> read_layout_at_depth(const JsonCursor& cursor, size_t depth) {
  if (depth > kMaxJsonDepth) {
    return cursor.error("nests weight layouts deeper than the limit of {}", kMaxJsonDepth);
  }
  constexpr std::string_view kKinds = "`dense`, `quantized`, `block_quantized`, `composite`";
  FERRITE_ASSIGN_OR_RETURN(std::string kind, read_kind(cursor, "a weight layout object"));
  if (kind == "dense") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object({"kind", "component_id"}));
    FERRITE_ASSIGN_OR_RETURN(WeightId component, object.required_identity<WeightId>("component_id"));
    return DenseLayout{std::move(component)};
  }
  if (kind == "quantized") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                             cursor.object({"kind", "packed_values", "scales", "zero_points",
                                            "group_axis"}));
    FERRITE_ASSIGN_OR_RETURN(WeightId packed, object.required_identity<WeightId>("packed_values"));
    FERRITE_ASSIGN_OR_RETURN(WeightId scales, object.required_identity<WeightId>("scales"));
    FERRITE_ASSIGN_OR_RETURN(std::optional<WeightId> zero_points,
                             object.required_nullable_identity<WeightId>("zero_points"));
    FERRITE_ASSIGN_OR_RETURN(uint32_t group_axis, object.required_u32("group_axis"));
    return QuantizedLayout{std::move(packed), std::move(scales),
                                                std::move(zero_points), group_axis};
  }
  if (kind == "block_quantized") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object({"kind", "blocks", "block_axis"}));
    FERRITE_ASSIGN_OR_RETURN(WeightId blocks, object.required_identity<WeightId>("blocks"));
    FERRITE_ASSIGN_OR_RETURN(uint32_t block_axis, object.required_u32("block_axis"));
    return BlockQuantizedLayout{std::move(blocks), block_axis};
  }
  if (kind == "composite") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object({"kind", "parts"}));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor parts_cursor, object.required("parts"));
    FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, parts_cursor.array());
    CompositeLayout composite;
    composite.parts.reserve(items.size());
    for (const JsonCursor& item : items) {
      FERRITE_ASSIGN_OR_RETURN(ObjectReader part,
                               item.object({"layout", "logical_offsets", "extents"}));
      FERRITE_ASSIGN_OR_RETURN(JsonCursor layout_cursor, part.required("layout"));
      FERRITE_ASSIGN_OR_RETURN(PhysicalWeightLayout layout,
                               read_layout_at_depth(layout_cursor, depth + 1));
      FERRITE_ASSIGN_OR_RETURN(JsonCursor offsets_cursor, part.required("logical_offsets"));
      FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> offsets, offsets_cursor.u64_array());
      FERRITE_ASSIGN_OR_RETURN(JsonCursor extents_cursor, part.required("extents"));
      FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> extents, extents_cursor.u64_array());
      composite.parts.push_back(
          CompositePart{Box<PhysicalWeightLayout>(std::move(layout)), std::move(offsets),
                        std::move(extents)});
    }
    return PhysicalWeightLayout(std::move(composite));
  }
  return json_error_at(json_child_path(cursor.path(), "kind"), "must be one of {}, found `{}`",
                       kKinds, kind);
}

}  // namespace

Result<WeightEncoding> read_weight_encoding(const JsonCursor& cursor) {
  constexpr std::string_view kKinds = "`dense`, `dense_affine`, `quantized`, `block_quantized`";
  FERRITE_ASSIGN_OR_RETURN(std::string kind, read_kind(cursor, "a weight encoding object"));
  if (kind == "dense") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object({"kind", "element_type"}));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor type_cursor, object.required("element_type"));
    FERRITE_ASSIGN_OR_RETURN(ElementType type, read_element_type(type_cursor));
    return DenseEncoding{type};
  }
  if (kind == "dense_affine") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                             cursor.object({"kind", "element_type", "scale", "bias"}));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor type_cursor, object.required("element_type"));
    FERRITE_ASSIGN_OR_RETURN(ElementType type, read_element_type(type_cursor));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor scale_cursor, object.required("scale"));
    FERRITE_ASSIGN_OR_RETURN(AffineRational scale, read_affine_rational(scale_cursor));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor bias_cursor, object.required("bias"));
    FERRITE_ASSIGN_OR_RETURN(AffineRational bias, read_affine_rational(bias_cursor));
    return DenseAffineEncoding{type, scale, bias};
  }
  if (kind == "quantized") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                             cursor.object({"kind", "format_id", "bits_per_weight", "group_size",
                                            "packing", "scale_type", "zero_point_type"}));
    FERRITE_ASSIGN_OR_RETURN(QuantizationFormatId format_id,
                             object.required_identity<QuantizationFormatId>("format_id"));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor bits_cursor, object.required("bits_per_weight"));
    FERRITE_ASSIGN_OR_RETURN(uint8_t bits, bits_cursor.u8());
    FERRITE_ASSIGN_OR_RETURN(uint64_t group_size, object.required_u64("group_size"));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor packing_cursor, object.required("packing"));
    FERRITE_ASSIGN_OR_RETURN(QuantizationPacking packing, read_packing(packing_cursor));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor scale_cursor, object.required("scale_type"));
    FERRITE_ASSIGN_OR_RETURN(ElementType scale_type, read_element_type(scale_cursor));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor zero_cursor, object.required("zero_point_type"));
    std::optional<ElementType> zero_point_type;
    if (!zero_cursor.is_null()) {
      FERRITE_ASSIGN_OR_RETURN(ElementType zero_type, read_element_type(zero_cursor));
      zero_point_type = zero_type;
    }
    QuantizationSpec spec{std::move(format_id), bits,       group_size,
                          packing,              scale_type, zero_point_type};
    return QuantizedEncoding{std::move(spec)};
  }
  if (kind == "block_quantized") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                             cursor.object({"kind", "format_id", "logical_values_per_block",
                                            "bytes_per_block"}));
    FERRITE_ASSIGN_OR_RETURN(QuantizationFormatId format_id,
                             object.required_identity<QuantizationFormatId>("format_id"));
    FERRITE_ASSIGN_OR_RETURN(uint64_t values, object.required_u64("logical_values_per_block"));
    FERRITE_ASSIGN_OR_RETURN(uint64_t bytes, object.required_u64("bytes_per_block"));
    return BlockQuantizedEncoding{std::move(format_id), values, bytes};
  }
  return json_error_at(json_child_path(cursor.path(), "kind"), "must be one of {}, found `{}`",
                       kKinds, kind);
}

Result<PhysicalWeightLayout> read_physical_weight_layout(const JsonCursor& cursor) {
  return read_layout_at_depth(cursor, 1);
}

Result<WeightComponentSpec> read_weight_component(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"id", "role", "external_names", "dimensions", "encoding",
                                          "required"}));
  FERRITE_ASSIGN_OR_RETURN(WeightId id, object.required_identity<WeightId>("id"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor role_cursor, object.required("role"));
  FERRITE_ASSIGN_OR_RETURN(WeightComponentRole role, read_role(role_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor names_cursor, object.required("external_names"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<std::string> names, names_cursor.string_array());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor dims_cursor, object.required("dimensions"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> dimensions, dims_cursor.u64_array());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor encoding_cursor, object.required("encoding"));
  FERRITE_ASSIGN_OR_RETURN(WeightEncoding encoding, read_weight_encoding(encoding_cursor));
  FERRITE_ASSIGN_OR_RETURN(bool required, object.required_bool("required"));
  return WeightComponentSpec{std::move(id),         role,
                             std::move(names),      std::move(dimensions),
                             std::move(encoding),   required};
}

Result<WeightTensorSpec> read_weight_tensor_spec(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"id", "dimensions", "logical_element_type",
                                          "physical_layout", "required"}));
  FERRITE_ASSIGN_OR_RETURN(WeightId id, object.required_identity<WeightId>("id"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor dims_cursor, object.required("dimensions"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> dimensions, dims_cursor.u64_array());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor type_cursor, object.required("logical_element_type"));
  FERRITE_ASSIGN_OR_RETURN(ElementType type, read_element_type(type_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor layout_cursor, object.required("physical_layout"));
  FERRITE_ASSIGN_OR_RETURN(PhysicalWeightLayout layout, read_physical_weight_layout(layout_cursor));
  FERRITE_ASSIGN_OR_RETURN(bool required, object.required_bool("required"));
  return WeightTensorSpec{std::move(id), std::move(dimensions), type, std::move(layout), required};
}

Result<WeightSchema> read_weight_schema(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"format_id", "layout_id", "version", "components",
                                          "tensors"}));
  FERRITE_ASSIGN_OR_RETURN(WeightFormatId format_id,
                           object.required_identity<WeightFormatId>("format_id"));
  FERRITE_ASSIGN_OR_RETURN(WeightLayoutId layout_id,
                           object.required_identity<WeightLayoutId>("layout_id"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor version_cursor, object.required("version"));
  FERRITE_ASSIGN_OR_RETURN(ObjectReader version_object, version_cursor.object({"major", "minor"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor major_cursor, version_object.required("major"));
  FERRITE_ASSIGN_OR_RETURN(uint16_t major, major_cursor.u16());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor minor_cursor, version_object.required("minor"));
  FERRITE_ASSIGN_OR_RETURN(uint16_t minor, minor_cursor.u16());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor components_cursor, object.required("components"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> component_items, components_cursor.array());
  std::vector<WeightComponentSpec> components;
  components.reserve(component_items.size());
  for (const JsonCursor& item : component_items) {
    FERRITE_ASSIGN_OR_RETURN(WeightComponentSpec component, read_weight_component(item));
    components.push_back(std::move(component));
  }
  FERRITE_ASSIGN_OR_RETURN(JsonCursor tensors_cursor, object.required("tensors"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> tensor_items, tensors_cursor.array());
  std::vector<WeightTensorSpec> tensors;
  tensors.reserve(tensor_items.size());
  for (const JsonCursor& item : tensor_items) {
    FERRITE_ASSIGN_OR_RETURN(WeightTensorSpec tensor, read_weight_tensor_spec(item));
    tensors.push_back(std::move(tensor));
  }
  return WeightSchema{std::move(format_id), std::move(layout_id), ContractVersion{major, minor},
                      std::move(components), std::move(tensors)};
}

}  // namespace ferrite
