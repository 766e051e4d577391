// JSON rendering of weight schemas (shape documented in weight_schema.h).
#include <string>

#include "ferrite/core/canonical_encoder.h"
#include "ferrite/program/weight_schema.h"
#include "weight_schema_canonical.h"

namespace ferrite {
namespace {

using nlohmann::json;

json rational_to_json(const AffineRational& value) {
  return json{{"numerator", value.numerator}, {"denominator", value.denominator}};
}

json version_to_json(const ContractVersion& version) {
  return json{{"major", version.major}, {"minor", version.minor}};
}

json element_type_json(ElementType type) { return std::string(element_type_name(type)); }

json component_to_json(const WeightComponentSpec& component) {
  return json{{"id", component.id.str()},
              {"role", std::string(weight_component_role_name(component.role))},
              {"external_names", component.external_names},
              {"dimensions", component.dimensions},
              {"encoding", weight_encoding_to_json(component.encoding)},
              {"required", component.required}};
}

json tensor_to_json(const WeightTensorSpec& tensor) {
  return json{{"id", tensor.id.str()},
              {"dimensions", tensor.dimensions},
              {"logical_element_type", element_type_json(tensor.logical_element_type)},
              {"physical_layout", physical_layout_to_json(tensor.physical_layout)},
              {"required", tensor.required}};
}

}  // namespace

json weight_encoding_to_json(const WeightEncoding& encoding) {
  json out{{"kind", std::string(weight_encoding_kind(encoding))}};
  if (const auto* dense = std::get_if<DenseEncoding>(&encoding)) {
    out["element_type"] = element_type_json(dense->element_type);
  } else if (const auto* affine = std::get_if<DenseAffineEncoding>(&encoding)) {
    out["element_type"] = element_type_json(affine->element_type);
    out["scale"] = rational_to_json(affine->scale);
    out["bias"] = rational_to_json(affine->bias);
  } else if (const auto* quantized = std::get_if<QuantizedEncoding>(&encoding)) {
    const QuantizationSpec& spec = quantized->spec;
    out["format_id"] = spec.format_id.str();
    out["bits_per_weight"] = spec.bits_per_weight;
    out["group_size"] = spec.group_size;
    out["packing"] = std::string(quantization_packing_name(spec.packing));
    out["scale_type"] = element_type_json(spec.scale_type);
    out["zero_point_type"] =
        spec.zero_point_type ? element_type_json(*spec.zero_point_type) : json(nullptr);
  } else {
    const auto& block = std::get<BlockQuantizedEncoding>(encoding);
    out["format_id"] = block.format_id.str();
    out["logical_values_per_block"] = block.logical_values_per_block;
    out["bytes_per_block"] = block.bytes_per_block;
  }
  return out;
}

json physical_layout_to_json(const PhysicalWeightLayout& layout) {
  json out{{"kind", std::string(physical_layout_kind(layout))}};
  if (const auto* dense = std::get_if<DenseLayout>(&layout.node)) {
    out["component_id"] = dense->component_id.str();
  } else if (const auto* quantized = std::get_if<QuantizedLayout>(&layout.node)) {
    out["packed_values"] = quantized->packed_values.str();
    out["scales"] = quantized->scales.str();
    out["zero_points"] = quantized->zero_points ? json(quantized->zero_points->str()) : json(nullptr);
    out["group_axis"] = quantized->group_axis;
  } else if (const auto* block = std::get_if<BlockQuantizedLayout>(&layout.node)) {
    out["blocks"] = block->blocks.str();
    out["block_axis"] = block->block_axis;
  } else {
    json parts = json::array();
    for (const CompositePart& part : std::get<CompositeLayout>(layout.node).parts) {
      parts.push_back(json{{"layout", physical_layout_to_json(*part.layout)},
                           {"logical_offsets", part.logical_offsets},
                           {"extents", part.extents}});
    }
    out["parts"] = std::move(parts);
  }
  return out;
}

json WeightSchema::to_json() const {
  WeightSchema normalized = *this;
  normalized.normalize();
  json components_json = json::array();
  for (const WeightComponentSpec& component : normalized.components) {
    components_json.push_back(component_to_json(component));
  }
  json tensors_json = json::array();
  for (const WeightTensorSpec& tensor : normalized.tensors) {
    tensors_json.push_back(tensor_to_json(tensor));
  }
  return json{{"format_id", format_id.str()},
              {"layout_id", layout_id.str()},
              {"version", version_to_json(version)},
              {"components", std::move(components_json)},
              {"tensors", std::move(tensors_json)}};
}


// ---- the canonical text, streamed (weight_schema_canonical.h, and
// encode_weight_encoding / encode_physical_layout in weight_schema.h) --------
// Every object's keys in byte order, as canonical_json sorts to_json()'s.
namespace {

void encode_rational(const AffineRational& value, CanonicalEncoder& out) {
  out.begin_object();
  out.key("denominator");
  out.unsigned_integer(value.denominator);
  out.key("numerator");
  out.integer(value.numerator);
  out.end_object();
}

void encode_extents(const std::vector<uint64_t>& values, CanonicalEncoder& out) {
  out.begin_array();
  for (uint64_t v : values) out.unsigned_integer(v);
  out.end_array();
}

}  // namespace

void encode_weight_encoding(const WeightEncoding& encoding, CanonicalEncoder& out) {
  const std::string_view kind = weight_encoding_kind(encoding);
  out.begin_object();
  if (const auto* dense = std::get_if<DenseEncoding>(&encoding)) {
    out.key("element_type");
    out.string(element_type_name(dense->element_type));
    out.key("kind");
    out.string(kind);
  } else if (const auto* affine = std::get_if<DenseAffineEncoding>(&encoding)) {
    out.key("bias");
    encode_rational(affine->bias, out);
    out.key("element_type");
    out.string(element_type_name(affine->element_type));
    out.key("kind");
    out.string(kind);
    out.key("scale");
    encode_rational(affine->scale, out);
  } else if (const auto* quantized = std::get_if<QuantizedEncoding>(&encoding)) {
    const QuantizationSpec& spec = quantized->spec;
    out.key("bits_per_weight");
    out.unsigned_integer(spec.bits_per_weight);
    out.key("format_id");
    out.string(spec.format_id);
    out.key("group_size");
    out.unsigned_integer(spec.group_size);
    out.key("kind");
    out.string(kind);
    out.key("packing");
    out.string(quantization_packing_name(spec.packing));
    out.key("scale_type");
    out.string(element_type_name(spec.scale_type));
    out.key("zero_point_type");
    if (spec.zero_point_type) {
      out.string(element_type_name(*spec.zero_point_type));
    } else {
      out.null();
    }
  } else {
    const auto& block = std::get<BlockQuantizedEncoding>(encoding);
    out.key("bytes_per_block");
    out.unsigned_integer(block.bytes_per_block);
    out.key("format_id");
    out.string(block.format_id);
    out.key("kind");
    out.string(kind);
    out.key("logical_values_per_block");
    out.unsigned_integer(block.logical_values_per_block);
  }
  out.end_object();
}

void encode_physical_layout(const PhysicalWeightLayout& layout, CanonicalEncoder& out) {
  const std::string_view kind = physical_layout_kind(layout);
  out.begin_object();
  if (const auto* dense = std::get_if<DenseLayout>(&layout.node)) {
    out.key("component_id");
    out.string(dense->component_id);
    out.key("kind");
    out.string(kind);
  } else if (const auto* quantized = std::get_if<QuantizedLayout>(&layout.node)) {
    out.key("group_axis");
    out.unsigned_integer(quantized->group_axis);
    out.key("kind");
    out.string(kind);
    out.key("packed_values");
    out.string(quantized->packed_values);
    out.key("scales");
    out.string(quantized->scales);
    out.key("zero_points");
    if (quantized->zero_points) {
      out.string(quantized->zero_points->str());
    } else {
      out.null();
    }
  } else if (const auto* block = std::get_if<BlockQuantizedLayout>(&layout.node)) {
    out.key("block_axis");
    out.unsigned_integer(block->block_axis);
    out.key("blocks");
    out.string(block->blocks);
    out.key("kind");
    out.string(kind);
  } else {
    out.key("kind");
    out.string(kind);
    out.key("parts");
    out.begin_array();
    for (const CompositePart& part : std::get<CompositeLayout>(layout.node).parts) {
      out.begin_object();
      out.key("extents");
      encode_extents(part.extents, out);
      out.key("layout");
      encode_physical_layout(*part.layout, out);
      out.key("logical_offsets");
      encode_extents(part.logical_offsets, out);
      out.end_object();
    }
    out.end_array();
  }
  out.end_object();
}

void encode_weight_schema_canonical(const WeightSchema& normalized, CanonicalEncoder& out) {
  out.begin_object();
  out.key("components");
  out.begin_array();
  for (const WeightComponentSpec& component : normalized.components) {
    out.begin_object();
    out.key("dimensions");
    encode_extents(component.dimensions, out);
    out.key("encoding");
    encode_weight_encoding(component.encoding, out);
    out.key("external_names");
    out.begin_array();
    for (const std::string& name : component.external_names) out.string(name);
    out.end_array();
    out.key("id");
    out.string(component.id);
    out.key("required");
    out.boolean(component.required);
    out.key("role");
    out.string(weight_component_role_name(component.role));
    out.end_object();
  }
  out.end_array();
  out.key("format_id");
  out.string(normalized.format_id);
  out.key("layout_id");
  out.string(normalized.layout_id);
  out.key("tensors");
  out.begin_array();
  for (const WeightTensorSpec& tensor : normalized.tensors) {
    out.begin_object();
    out.key("dimensions");
    encode_extents(tensor.dimensions, out);
    out.key("id");
    out.string(tensor.id);
    out.key("logical_element_type");
    out.string(element_type_name(tensor.logical_element_type));
    out.key("physical_layout");
    encode_physical_layout(tensor.physical_layout, out);
    out.key("required");
    out.boolean(tensor.required);
    out.end_object();
  }
  out.end_array();
  out.key("version");
  out.begin_object();
  out.key("major");
  out.unsigned_integer(normalized.version.major);
  out.key("minor");
  out.unsigned_integer(normalized.version.minor);
  out.end_object();
  out.end_object();
}

std::string weight_schema_canonical_text(const WeightSchema& normalized) {
  CanonicalText text;
  encode_weight_schema_canonical(normalized, text);
  return text.release();
}

}  // namespace ferrite
