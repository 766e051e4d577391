// fuzz/llama2c_checkpoint_fuzzer.cc — feeds the input as a whole llama2.c
// checkpoint to parse_llama2c_checkpoint (ferrite/models/llama2c_reader.h, in
// memory). Every tensor the parser names must lie inside the input (else
// abort: a finding). A checkpoint that parses is also written to a
// per-process temporary `model.bin` and opened with open_llama_checkpoint
// (fuzz/checkpoint_exercise.h). Errors are ignored.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "ferrite/models/llama2c_reader.h"
#include "families/llama/llama_checkpoint.h"
#include "checkpoint_exercise.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = ferrite_fuzz::as_bytes(data, size);
  auto checkpoint = ferrite::parse_llama2c_checkpoint(bytes, "fuzz.bin");
  if (!checkpoint) return 0;
  for (const auto& tensor : checkpoint->tensors) {
    if (tensor.offset > size || tensor.byte_size > size - tensor.offset) std::abort();
  }
  const auto path = ferrite_fuzz::write_fuzz_file("model.bin", bytes);
  if (path.empty()) return 0;
  if (auto opened = ferrite::open_llama_checkpoint(path, std::nullopt)) {
    ferrite_fuzz::exercise_checkpoint(*opened);
  }
  return 0;
}
