// ferrite/materializers/ggml_block_materializer.h — approximate weight
// materializers that re-quantize f32 matrices into ggml Q8_0 / Q4_0 blocks.
//
// Contract: `weight-materializer.ggml_q8_0` and `weight-materializer.ggml_q4_0`
// (version 1.0, Approximate) turn every source component that is a dense f32
// matrix [rows, cols] with cols a multiple of 32, bound by a Dense layout,
// into a `packed_values` component of block grid [rows, cols / 32] with the
// block_quantized encoding of the format, bound by a BlockQuantizedLayout
// along axis 1 — the schema a GGUF file of that type gives (ggml_blocks.h).
// Everything else (norms, vectors, matrices whose rows are not whole blocks,
// components already block-quantized) is kept as is. The execution schema's
// format id becomes `weight-format.ggml_blocks` when at least one component
// changes. F16/BF16 checkpoints arrive as f32 source components (their
// loaders convert exactly), so F16 → Q8_0 is the same path.
//   * materialize_component: quantize_ggml_blocks of the source's f32 values
//     (non-finite values are an error naming the component).
//   * measure_component: dequantizes the blocks exactly and compares
//     (compare_component_values).
//   * Quality contracts: relative L2 ≤ 0.02 (Q8_0), ≤ 0.25 (Q4_0) per
//     component. Gaussian-like weights measure about 0.005 and 0.09; the
//     bounds refuse tensors with outliers that blocks of 32 cannot represent.
// `default_weight_materializers()` is the identity plus both of these: the
// registry the CLI compiles with.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto registry, default_weight_materializers());
//   const WeightMaterializer* q8 = registry.find(ggml_block_materializer_id(kGgmlQ8_0));
//   FERRITE_ASSIGN_OR_RETURN(auto approval, measure_weight_quality(*q8, family, fill));
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "ferrite/compiler/weight_materializer.h"
#include "ferrite/models/ggml_blocks.h"

namespace ferrite {

inline constexpr std::string_view kGgmlQ8_0MaterializerId = "weight-materializer.ggml_q8_0";
inline constexpr std::string_view kGgmlQ4_0MaterializerId = "weight-materializer.ggml_q4_0";

WeightMaterializerId ggml_block_materializer_id(const GgmlBlockFormat& format);
// "q8_0" / "q4_0" (any case) → the format; nullptr otherwise.
const GgmlBlockFormat* ggml_block_format_by_name(std::string_view name);

std::shared_ptr<const WeightMaterializer> make_ggml_block_materializer(const GgmlBlockFormat& format);

// Identity, ggml_q8_0 and ggml_q4_0.
Result<WeightMaterializerRegistry> default_weight_materializers();

}  // namespace ferrite
