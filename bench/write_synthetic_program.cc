// write_synthetic_program: writes the compile benchmark's synthetic programs
// (synthetic_programs.h) as program files, so `ferrite compile` / `verify` can
// be timed on them:
//   ./build/bench/write_synthetic_program llama 128 /tmp/llama128.program.json
//   ./build/bench/write_synthetic_program chain 100000 /tmp/chain.program.json
// Compile the Llama programs against examples/llama-decoder.{catalog,policy}.json
// with --input value.tokens=u32[32] --input value.positions=u32[32]; the chains
// with --input value.x=f32[4,172] (see synthetic_programs.cc).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "ferrite/core/text.h"
#include "ferrite/format/program_file.h"
#include "synthetic_programs.h"

int main(int argc, char** argv) {
  using namespace ferrite;
  if (argc != 4) {
    std::fprintf(stderr, "usage: write_synthetic_program llama|chain SIZE OUT.json\n");
    return 2;
  }
  const std::string kind = argv[1];
  const auto size = parse_decimal_u64(argv[2]);
  if (!size || *size == 0 || *size > 1'000'000 || (kind != "llama" && kind != "chain")) {
    std::fprintf(stderr, "write_synthetic_program: bad kind or size (1..1000000)\n");
    return 2;
  }
  auto family = kind == "llama" ? bench::llama_program(static_cast<uint32_t>(*size))
                                : bench::chain_program(static_cast<uint32_t>(*size));
  if (!family) {
    std::fprintf(stderr, "write_synthetic_program: %s\n", family.error().to_string().c_str());
    return 1;
  }
  std::ofstream out(argv[3], std::ios::binary);
  out << program_file_to_json(*family).dump() << '\n';
  if (!out) {
    std::fprintf(stderr, "write_synthetic_program: cannot write %s\n", argv[3]);
    return 1;
  }
  return 0;
}
