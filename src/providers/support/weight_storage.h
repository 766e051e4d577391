// weight_storage.h — how a CPU kernel learns the stored format of a weight.
//
// Contract: `stored_blocks(node, weight)` is nullptr for a dense f32 weight,
// the ggml block format (models/ggml_blocks.h) for a block-quantized one of
// a matrix [rows, cols] whose rows are whole blocks, and an error naming the
// node for any other encoding. Call it in a kernel factory (bind time).
#pragma once

#include <fmt/format.h>

#include "ferrite/models/ggml_blocks.h"
#include "ferrite/runtime/kernel_attributes.h"

namespace ferrite {

inline Result<const GgmlBlockFormat*> stored_blocks(const KernelNode& node,
                                                    const KernelTensor& weight) {
  if (weight.weight == nullptr) return nullptr;
  if (const auto* dense = std::get_if<DenseEncoding>(&weight.weight->encoding)) {
    if (dense->element_type == ElementType::kF32) return nullptr;
  } else if (const auto* block = std::get_if<BlockQuantizedEncoding>(&weight.weight->encoding)) {
    const GgmlBlockFormat* format = ggml_block_format(block->format_id.str());
    if (format != nullptr && weight.tensor->rank() == 2 &&
        weight.tensor->dimensions()[1] % format->values_per_block == 0) {
      return format;
    }
  }
  return make_error(ErrorCode::kInvalidArgument,
                    "node `{}`: weight component `{}` has an encoding this kernel cannot "
                    "read (`{}`)",
                    node.node_id->str(), weight.weight->id.str(),
                    weight_encoding_kind(weight.weight->encoding))
      .with_field("node_id", node.node_id->str());
}

}  // namespace ferrite
