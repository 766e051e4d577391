// fuzz/weight_quality_fuzzer.cc — feeds the input, as text, to the weight
// quality approval reader (ferrite/format/weight_quality_file.h), then hands
// an approval that reads to the compiler's acceptance check against the
// ggml Q8_0 materializer (check_weight_quality_approval). Errors are ignored.
// Promises checked: writing an approval and reading it back is a fixed point
// after one normalization (statistics are printed with 9 significant digits,
// so text(read(text(a))) == text(a)); anything else aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ferrite/format/weight_quality_file.h"
#include "ferrite/materializers/ggml_block_materializer.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto approval = ferrite::read_weight_quality_text(ferrite_fuzz::as_text(data, size));
  if (!approval) return 0;
  const std::string text = ferrite::weight_quality_file_text(*approval);
  auto again = ferrite::read_weight_quality_text(text);
  if (!again || ferrite::weight_quality_file_text(*again) != text) std::abort();
  static const auto materializer = ferrite::make_ggml_block_materializer(ferrite::kGgmlQ8_0);
  std::vector<ferrite::WeightId> approximated;
  for (const auto& c : approval->components) approximated.push_back(c.component_id);
  (void)ferrite::check_weight_quality_approval(*approval, materializer->descriptor(),
                                               approval->source_schema_fingerprint,
                                               approval->execution_schema_fingerprint,
                                               approximated);
  return 0;
}
