#include "cli/cli.h"

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/model_sources.h"

namespace ferrite::cli {

int run_cli(int argc, char** argv) {
  CLI::App app{"ferrite — compile semantic model programs into execution plans", "ferrite"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");

  CheckArgs check;
  auto* check_cmd = app.add_subcommand(
      "check", "Validate a program and print every value's inferred tensor");
  check_cmd->add_option("PROGRAM", check.program_path, "Program file (ferrite.program JSON)");
  check_cmd->add_option("--ops,--catalog", check.ops_path, "Operation catalog file");
  check_cmd->add_option("--example", check.example,
                        fmt::format("Use a bundled example ({})", fmt::join(example_names(), ", ")));
  check_cmd->add_option("--input", check.inputs,
                        "Program input capacity VALUE=DTYPE[d0,d1,...] (repeatable)");
  check_cmd->add_option("--tensor", check.tensors,
                        "Explicit tensor for any value VALUE=DTYPE[dims][@layout] (repeatable)");
  check_cmd->add_flag("--json", check.json, "Print machine-readable JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "ferrite: usage error: " << e.what() << "\nRun with --help for usage.\n";
    return kExitUsage;
  }
  if (check_cmd->parsed()) return run_check(check, std::cout, std::cerr);
  return kExitUsage;
}

}  // namespace ferrite::cli
