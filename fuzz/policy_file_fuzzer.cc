// fuzz/policy_file_fuzzer.cc — feeds the input, as text, to the runtime policy
// file reader (ferrite/format/policy_file.h: read_policy_file_text, strict
// parse plus RuntimePolicy::validate). Errors are ignored. A policy that reads
// must read back equal from policy_file_to_json; anything else aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ferrite/format/policy_file.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto policy = ferrite::read_policy_file_text(ferrite_fuzz::as_text(data, size));
  if (!policy) return 0;
  auto again = ferrite::read_policy_file_json(ferrite::policy_file_to_json(*policy));
  if (!again || *again != *policy) std::abort();
  return 0;
}
