// fuzz/safetensors_fuzzer.cc — feeds the input as a whole .safetensors file to
// parse_safetensors (ferrite/models/safetensors_reader.h, in memory). Every
// tensor the parser accepts must lie inside the data section of the input
// (else abort: a finding). Errors are ignored.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ferrite/models/safetensors_reader.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto model = ferrite::parse_safetensors(ferrite_fuzz::as_bytes(data, size), "fuzz.safetensors");
  if (!model) return 0;
  for (const auto& tensor : model->tensors) {
    if (tensor.offset < model->data_offset || tensor.offset > size ||
        tensor.byte_size > size - tensor.offset) {
      std::abort();
    }
  }
  return 0;
}
