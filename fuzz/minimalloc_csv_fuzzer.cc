// fuzz/minimalloc_csv_fuzzer.cc — feeds the input, as text, to the MiniMalloc
// CSV parser (ferrite/format/minimalloc_csv.h: parse_minimalloc_csv). Errors
// are ignored. An instance that parses is written back with
// write_minimalloc_csv (its own offsets, else all zero) and must parse again
// to the same buffers; anything else aborts (a finding).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "ferrite/format/minimalloc_csv.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto instance = ferrite::parse_minimalloc_csv(ferrite_fuzz::as_text(data, size));
  if (!instance) return 0;
  const std::vector<uint64_t> offsets =
      instance->offsets ? *instance->offsets : std::vector<uint64_t>(instance->buffers.size(), 0);
  auto text = ferrite::write_minimalloc_csv(*instance, offsets);
  if (!text) std::abort();
  auto again = ferrite::parse_minimalloc_csv(*text);
  if (!again || again->ids != instance->ids || again->buffers != instance->buffers) {
    std::abort();
  }
  return 0;
}
