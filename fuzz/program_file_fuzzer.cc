// fuzz/program_file_fuzzer.cc — feeds the input, as text, to the program file
// reader (ferrite/format/program_file.h: read_program_file_text, which parses
// strictly and runs ModelProgram / WeightSchema / PreparedModelFamily
// validation). Errors are ignored. A program that reads must survive the
// documented round trip: read(program_file_to_json(f)) has f's fingerprint;
// anything else aborts (a finding).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ferrite/format/program_file.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto family = ferrite::read_program_file_text(ferrite_fuzz::as_text(data, size));
  if (!family) return 0;
  auto again = ferrite::read_program_file_json(ferrite::program_file_to_json(*family));
  if (!again || again->fingerprint() != family->fingerprint()) std::abort();
  return 0;
}
