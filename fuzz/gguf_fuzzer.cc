// fuzz/gguf_fuzzer.cc — feeds the input as a whole GGUF file to parse_gguf
// (ferrite/models/gguf_reader.h, in memory). Every tensor the parser accepts
// with a known size must lie inside the input (else abort: a finding). A file
// that parses is also written to a per-process temporary `model.gguf` and
// opened through every builtin family room (open_checkpoint: the room that
// claims general.architecture maps the GGUF config, checks the tensors,
// builds its program; the vocabulary and weights are read;
// fuzz/checkpoint_exercise.h). Errors are ignored.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ferrite/models/gguf_reader.h"
#include "checkpoint_exercise.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = ferrite_fuzz::as_bytes(data, size);
  auto model = ferrite::parse_gguf(bytes, "fuzz.gguf");
  if (!model) return 0;
  for (const auto& tensor : model->tensors) {
    if (tensor.byte_size && (tensor.offset > size || *tensor.byte_size > size - tensor.offset)) {
      std::abort();
    }
  }
  const auto path = ferrite_fuzz::write_fuzz_file("model.gguf", bytes);
  if (path.empty()) return 0;
  const ferrite::FamilyRegistry* registry = ferrite_fuzz::builtin_family_registry();
  if (registry == nullptr) std::abort();
  if (auto checkpoint = ferrite::open_checkpoint(*registry, path, std::nullopt)) {
    ferrite_fuzz::exercise_family_checkpoint(*checkpoint);
  }
  return 0;
}
