// cli/model_sources.h — where the CLI gets programs, catalogs and inputs.
//
// Contract: a program and its operation catalog come either from files or from
// a bundled example compiled into the binary (`--example NAME` reads
// examples/NAME.program.json, NAME.catalog.json and, for default input
// capacities, NAME.inputs.json: a JSON object mapping value ids to tensor text
// such as "u32[32]"). Explicit `--input` arguments override example defaults.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto family, load_program(program_path, example));
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/catalog/operation_catalog.h"
#include "ferrite/compiler/compile_options.h"
#include "ferrite/program/prepared_model_family.h"

namespace ferrite::cli {

// Names of the bundled examples ("llama-decoder", "synthetic").
std::vector<std::string> example_names();
// The text of bundled file NAME+SUFFIX (e.g. ".policy.json"); kInvalidArgument
// naming the available examples when there is none.
Result<std::string_view> example_file(const std::string& example, std::string_view suffix);

Result<PreparedModelFamily> load_program(const std::string& path,
                                         const std::optional<std::string>& example);
Result<OperationCatalog> load_operations(const std::string& path,
                                         const std::optional<std::string>& example);

// Builds compile options from `--input` and `--tensor` arguments
// (VALUE=DTYPE[dims][@layout]); example defaults fill inputs not given.
Result<ProgramPlanCompileOptions> build_compile_options(
    const std::vector<std::string>& inputs, const std::vector<std::string>& tensors,
    const std::optional<std::string>& example);

}  // namespace ferrite::cli
