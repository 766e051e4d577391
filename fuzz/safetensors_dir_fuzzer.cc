// fuzz/safetensors_dir_fuzzer.cc — feeds the input as a Hugging Face model
// directory to open_checkpoint over every builtin family room (config.json's
// `architectures` picks the room: Llama, Mistral, Qwen2, Qwen3, Phi3, Gemma3).
// Layout of the input: a little-endian u32 N, then N bytes of config.json
// (N is clamped to what is left), then the rest as model.safetensors. Both
// files are written into a per-process temporary directory, which is then
// opened; a checkpoint that opens is exercised (fuzz/checkpoint_exercise.h).
// Errors are ignored.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "checkpoint_exercise.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t config_size = 0;
  for (int i = 3; i >= 0; --i) config_size = (config_size << 8) | data[i];
  const auto rest = ferrite_fuzz::as_bytes(data + 4, size - 4);
  const size_t n = config_size < rest.size() ? config_size : rest.size();
  if (ferrite_fuzz::write_fuzz_file("config.json", rest.first(n)).empty()) return 0;
  if (ferrite_fuzz::write_fuzz_file("model.safetensors", rest.subspan(n)).empty()) return 0;
  const ferrite::FamilyRegistry* registry = ferrite_fuzz::builtin_family_registry();
  if (registry == nullptr) std::abort();
  if (auto checkpoint =
          ferrite::open_checkpoint(*registry, ferrite_fuzz::fuzz_scratch_dir(), std::nullopt)) {
    ferrite_fuzz::exercise_family_checkpoint(*checkpoint);
  }
  return 0;
}
