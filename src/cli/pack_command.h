// cli/pack_command.h — `ferrite pack INSTANCE.csv [-o SOLUTION.csv] [--effort N]`.
//
// Contract: reads a MiniMalloc CSV (format/minimalloc_csv.h), packs it with
// pack_intervals, verifies the packing independently and prints the peak,
// LOAD, peak/LOAD and the elapsed time to `out`. With an output path the
// solution (`id,lower,upper,size,offset`) is written atomically: the file is
// either left untouched or replaced by the complete solution. Exit codes
// (cli.h): 0 success; 2 unreadable/malformed input or an unwritable output;
// 1 if the packer's answer fails verification (a bug, never expected).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace ferrite::cli {

struct PackArgs {
  std::string instance_path;
  std::optional<std::string> output_path;
  std::optional<uint64_t> effort;  // default: kDefaultPackingEffort
};

int run_pack(const PackArgs& args, std::ostream& out, std::ostream& err);

}  // namespace ferrite::cli
