// ferrite/models/gguf_writer.h — write GGUF v3 files (for tools and tests).
//
// Contract: `serialize_gguf(file)` returns the bytes of a GGUF v3 file with
// `file.metadata` in the given order (every GgufValue type, nested arrays
// included), then the tensor infos in order, then the data section aligned
// to `file.alignment` (general.alignment is written only when it is not the
// default 32), each tensor's bytes at the next aligned offset. Tensor dims are
// in GGUF order (dims[0] innermost). Checks: a power-of-two alignment, 1..4
// dims per tensor, and bytes equal to the type's size for the dims (F32, F16,
// BF16, Q8_0, Q4_0); errors are InvalidArgument naming the tensor.
// Blocks for Q8_0/Q4_0 tensors come from `quantize_ggml_blocks`
// (models/ggml_blocks.h).
//
// Example:
//   GgufFileSpec spec;
//   spec.metadata.push_back({"general.architecture", GgufValue{std::string("llama")}});
//   spec.tensors.push_back({"output_norm.weight", {64}, kGgmlTypeF32, bytes_of(norm)});
//   FERRITE_ASSIGN_OR_RETURN(std::vector<std::byte> file, serialize_gguf(spec));
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ferrite/models/ggml_blocks.h"
#include "ferrite/models/gguf_reader.h"

namespace ferrite {

struct GgufTensorSpec {
  std::string name;
  std::vector<uint64_t> dims;  // GGUF order
  uint32_t ggml_type = kGgmlTypeF32;
  std::vector<std::byte> bytes;
};

struct GgufFileSpec {
  std::vector<std::pair<std::string, GgufValue>> metadata;
  std::vector<GgufTensorSpec> tensors;
  uint64_t alignment = kGgufDefaultAlignment;
};

Result<std::vector<std::byte>> serialize_gguf(const GgufFileSpec& file);

}  // namespace ferrite
