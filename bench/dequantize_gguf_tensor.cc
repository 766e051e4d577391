// dequantize_gguf_tensor: one tensor of a GGUF file as raw little-endian f32,
// dequantized by Ferrite (models/ggml_blocks.h); for the llama.cpp oracle
// (scripts/oracle/compare_quantized.sh), which compares it with llama.cpp's
// to_float of the same bytes.
//   ./build/bench/dequantize_gguf_tensor MODEL.gguf TENSOR OUT.f32
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "ferrite/models/ggml_blocks.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/models/half_float.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: dequantize_gguf_tensor MODEL.gguf TENSOR OUT.f32\n");
    return 2;
  }
  auto file = ferrite::GgufFile::open(argv[1]);
  if (!file) {
    std::fprintf(stderr, "%s\n", file.error().to_string().c_str());
    return 1;
  }
  const ferrite::GgufTensorInfo* info = nullptr;
  for (const auto& t : file->model().tensors) {
    if (t.name == argv[2]) info = &t;
  }
  if (info == nullptr) {
    std::fprintf(stderr, "no tensor %s\n", argv[2]);
    return 1;
  }
  auto bytes = file->tensor_data(*info);
  if (!bytes) {
    std::fprintf(stderr, "%s\n", bytes.error().to_string().c_str());
    return 1;
  }
  std::vector<float> values(info->element_count);
  if (info->ggml_type == ferrite::kGgmlTypeF32) {
    std::memcpy(values.data(), bytes->data(), values.size() * 4);
  } else if (info->ggml_type == ferrite::kGgmlTypeF16) {
    ferrite::convert_f16_to_f32(*bytes, values);
  } else if (const auto* format = ferrite::ggml_block_format_of_type(info->ggml_type)) {
    for (uint64_t b = 0; b < values.size() / format->values_per_block; ++b) {
      ferrite::dequantize_ggml_block(*format, bytes->data() + b * format->bytes_per_block,
                                     values.data() + b * format->values_per_block);
    }
  } else {
    std::fprintf(stderr, "tensor %s: type %u not read by Ferrite\n", argv[2], info->ggml_type);
    return 1;
  }
  std::ofstream out(argv[3], std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
  return out ? 0 : 1;
}
