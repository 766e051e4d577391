#include "ferrite/materializers/ggml_block_materializer.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace {

using nlohmann::json;

// The source tensor's component when it is a dense f32 matrix of whole blocks.
const WeightComponentSpec* eligible_component(const WeightSchema& schema,
                                              const WeightTensorSpec& tensor,
                                              const GgmlBlockFormat& format) {
  const auto* dense = std::get_if<DenseLayout>(&tensor.physical_layout.node);
  if (dense == nullptr) return nullptr;
  const WeightComponentSpec* component = schema.find_component(dense->component_id);
  if (component == nullptr || component->role != WeightComponentRole::kValues) return nullptr;
  const auto* encoding = std::get_if<DenseEncoding>(&component->encoding);
  if (encoding == nullptr || encoding->element_type != ElementType::kF32) return nullptr;
  if (component->dimensions.size() != 2 || tensor.dimensions != component->dimensions ||
      component->dimensions[1] % format.values_per_block != 0) {
    return nullptr;
  }
  return component;
}

class GgmlBlockMaterializer final : public WeightMaterializer {
 public:
  explicit GgmlBlockMaterializer(const GgmlBlockFormat& format)
      : format_(format),
        descriptor_{.id = ggml_block_materializer_id(format),
                    .version = {1, 0},
                    .implementation_fingerprint = "",
                    .fidelity = WeightMaterializationFidelity::kApproximate,
                    .required_capabilities = {},
                    .quality_contract = WeightQualityContract{
                        .max_relative_l2 = format.ggml_type == kGgmlQ8_0.ggml_type ? 0.02 : 0.25}} {
    descriptor_.implementation_fingerprint = canonical_fingerprint(
        json{{"id", descriptor_.id.str()},
             {"version", descriptor_.version.to_string()},
             {"contract", "dense f32 matrices of whole 32-value rows -> ggml blocks; "
                          "Q8_0 d = amax/127, q = round(x/d); Q4_0 d = x_m/-8, "
                          "q = min(15, trunc(x/d + 8.5)); f16 scales"},
             {"format", std::string(format.format_id)}});
  }

  const WeightMaterializerDescriptor& descriptor() const override { return descriptor_; }

  Result<WeightSchema> execution_schema(const PreparedModelFamily& family) const override {
    const WeightSchema& source = family.weight_schema();
    WeightSchema out = source;
    bool changed = false;
    for (auto& tensor : out.tensors) {
      const WeightComponentSpec* component = eligible_component(source, tensor, format_);
      if (component == nullptr) continue;
      const WeightId id = component->id;
      auto target = std::find_if(out.components.begin(), out.components.end(),
                                 [&](const WeightComponentSpec& c) { return c.id == id; });
      target->role = WeightComponentRole::kPackedValues;
      target->dimensions = {component->dimensions[0],
                            component->dimensions[1] / format_.values_per_block};
      target->encoding = BlockQuantizedEncoding{
          .format_id = QuantizationFormatId::literal(format_.format_id),
          .logical_values_per_block = format_.values_per_block,
          .bytes_per_block = format_.bytes_per_block};
      tensor.physical_layout = BlockQuantizedLayout{.blocks = id, .block_axis = 1};
      changed = true;
    }
    if (changed) out.format_id = WeightFormatId::literal(kGgmlBlocksWeightFormatId);
    return out;
  }

  Result<void> materialize_component(const WeightComponentSpec& source,
                                     std::span<const std::byte> source_bytes,
                                     const WeightComponentSpec& target,
                                     std::span<std::byte> destination) const override {
    if (source == target) {
      return WeightMaterializer::materialize_component(source, source_bytes, target, destination);
    }
    FERRITE_ASSIGN_OR_RETURN(std::vector<float> values, source_values(source, source_bytes));
    auto blocks = quantize_ggml_blocks(format_, values);
    if (!blocks) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "weight component `{}` cannot be quantized to {}: {}", source.id.str(),
                        format_.name, blocks.error().message());
    }
    if (blocks->size() != destination.size()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "weight component `{}`: {} block bytes for a {} byte slot", target.id.str(),
                        blocks->size(), destination.size());
    }
    std::copy(blocks->begin(), blocks->end(), destination.begin());
    return {};
  }

  Result<ComponentQuality> measure_component(const WeightComponentSpec& source,
                                             std::span<const std::byte> source_bytes,
                                             const WeightComponentSpec& target,
                                             std::span<const std::byte> materialized) const override {
    FERRITE_ASSIGN_OR_RETURN(std::vector<float> exact, source_values(source, source_bytes));
    if (materialized.size() % format_.bytes_per_block != 0 ||
        materialized.size() / format_.bytes_per_block * format_.values_per_block != exact.size()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "weight component `{}`: {} block bytes do not hold {} values",
                        target.id.str(), materialized.size(), exact.size());
    }
    std::vector<float> approximate(exact.size());
    for (size_t b = 0; b * format_.values_per_block < exact.size(); ++b) {
      dequantize_ggml_block(format_, materialized.data() + b * format_.bytes_per_block,
                            approximate.data() + b * format_.values_per_block);
    }
    return compare_component_values(target.id, exact, approximate);
  }

 private:
  Result<std::vector<float>> source_values(const WeightComponentSpec& source,
                                           std::span<const std::byte> bytes) const {
    if (source.physical_element_type() != ElementType::kF32 || bytes.size() % 4 != 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "weight component `{}` is not f32 values",
                        source.id.str());
    }
    std::vector<float> values(bytes.size() / 4);
    std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }

  const GgmlBlockFormat& format_;
  WeightMaterializerDescriptor descriptor_;
};

}  // namespace

WeightMaterializerId ggml_block_materializer_id(const GgmlBlockFormat& format) {
  return WeightMaterializerId::literal(format.ggml_type == kGgmlQ8_0.ggml_type
                                           ? kGgmlQ8_0MaterializerId
                                           : kGgmlQ4_0MaterializerId);
}

const GgmlBlockFormat* ggml_block_format_by_name(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "q8_0") return &kGgmlQ8_0;
  if (lower == "q4_0") return &kGgmlQ4_0;
  return nullptr;
}

std::shared_ptr<const WeightMaterializer> make_ggml_block_materializer(
    const GgmlBlockFormat& format) {
  return std::make_shared<GgmlBlockMaterializer>(format);
}

Result<WeightMaterializerRegistry> default_weight_materializers() {
  return WeightMaterializerRegistry::create(
      {make_ggml_block_materializer(kGgmlQ8_0), make_ggml_block_materializer(kGgmlQ4_0)});
}

}  // namespace ferrite
