// cli/commands.h — one function per `ferrite` subcommand.
//
// Contract: each command writes its report to `out`, its diagnostics to `err`
// and returns the process exit code (cli.h). Commands never throw and never
// write partial output files.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "ferrite/core/status.h"

namespace ferrite::cli {

struct CheckArgs {
  std::string program_path;
  std::string ops_path;
  std::optional<std::string> example;
  std::vector<std::string> inputs;
  std::vector<std::string> tensors;
  bool json = false;
};

int run_check(const CheckArgs& args, std::ostream& out, std::ostream& err);

// 2 for usage / unreadable / malformed input, 1 for a rejected program.
int exit_code_for(const Status& status);
// Prints "ferrite: error: ..." (or a JSON error object when `json`).
int report_error(const Status& status, bool json, std::ostream& out, std::ostream& err);

}  // namespace ferrite::cli
