// fuzz/catalog_file_fuzzer.cc — feeds the input, as text, to both catalog
// file readers (ferrite/format/catalog_file.h): read_catalog_file_text
// (operation-only version 1, or a whole version 2 file validated) and
// read_target_catalog_file_text (version 2: device, providers, declarative
// estimators). Errors are ignored. An operation catalog that reads must read
// back equal from catalog_file_to_json; anything else aborts (a finding).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ferrite/format/catalog_file.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto text = ferrite_fuzz::as_text(data, size);
  if (auto operations = ferrite::read_catalog_file_text(text)) {
    auto again = ferrite::read_catalog_file_json(ferrite::catalog_file_to_json(*operations));
    if (!again || *again != *operations) std::abort();
  }
  (void)ferrite::read_target_catalog_file_text(text);
  return 0;
}
