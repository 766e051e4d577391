// JSON rendering of weight schemas (shape documented in weight_schema.h).
#include <string>

#include "ferrite/program/weight_schema.h"

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

}  // namespace ferrite
