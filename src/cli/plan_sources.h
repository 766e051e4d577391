// cli/plan_sources.h — everything `compile`, `explain` and `verify` compile from.
//
// Contract: `PlanSourceArgs` are the command-line inputs of a compilation:
// the program (file or `--example`), the target catalog (catalog file
// format_version 2; an example's own catalog by default), the runtime policy
// (file; an example's own policy; else the device default below) and the
// compile options (`--input`, `--tensor`, `--prefer NODE=PROVIDER`,
// `--require NODE=CAPABILITY`, `--retain VALUE` | `--retain-all`,
// `--materializer ID`, `--quality-approval FILE` (a measured approval, which
// alone selects its materializer), `--activation-storage packed|dedicated`).
// Compilation uses default_weight_materializers() (identity, ggml_q8_0,
// ggml_q4_0). `load_compile_inputs` reads and checks all of it
// (usage errors are kInvalidArgument; files keep their reader's codes), and
// `compile_plan` runs ProgramPlanCompiler::compile on it. The same arguments
// always produce the same plan bytes.
//
// Device default policy (no --policy, no example): id `policy.device-default`
// v1.0, capacity = the device's total memory, no reserve, 1 sequence,
// 4096 scheduled tokens, the device's profiles in their canonical order.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto inputs, load_compile_inputs(args));
//   FERRITE_ASSIGN_OR_RETURN(auto compiled, compile_plan(inputs));
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include "ferrite/compiler/compile_options.h"
#include "ferrite/compiler/runtime_policy.h"
#include "ferrite/format/catalog_file.h"
#include "ferrite/plan/program_plan_compiler.h"
#include "ferrite/program/prepared_model_family.h"

namespace ferrite::cli {

struct PlanSourceArgs {
  std::string program_path;
  std::optional<std::string> example;
  std::string catalog_path;
  std::string policy_path;
  std::vector<std::string> inputs;
  std::vector<std::string> tensors;
  std::vector<std::string> prefer;   // NODE=PROVIDER
  std::vector<std::string> require;  // NODE=CAPABILITY
  std::vector<std::string> retain;   // VALUE
  bool retain_all = false;
  std::optional<std::string> materializer;
  std::optional<std::string> quality_approval;  // approval file path
  std::string activation_storage = "packed";  // or "dedicated"
};

struct CompileInputs {
  PreparedModelFamily family;
  CompilationTarget target;
  RuntimePolicy policy;
  ProgramPlanCompileOptions options;
};

inline constexpr uint64_t kDefaultPolicyScheduledTokens = 4096;
// A model file (`.gguf`, llama2.c `.bin`, a directory with config.json) is
// not a program file: `compile`, `explain`, `verify` and `run` compile it
// through its family with the model options (cli/model_plan.h), and
// `refuse_program_options_for_models` refuses the program-only options
// (--catalog, --policy, --input, --tensor, --prefer, --require, --retain,
// --materializer, --activation-storage) for it, naming the option.
bool is_model_path(const std::string& path);
Result<void> refuse_program_options_for_models(const PlanSourceArgs& args);

// An option and whether the command line gave it. `refuse_given_options`
// refuses the first one given: InvalidArgument "<name> <why>" (field
// "option").
struct GivenOption {
  bool given = false;
  std::string_view name;
};
Result<void> refuse_given_options(std::span<const GivenOption> options, std::string_view why);

RuntimePolicy device_default_policy(const DeviceDescriptor& device);

// The weight materializer a compilation uses: `id` when given, else the one
// the approval file at `approval_path` names; with that approval read from
// the file (ferrite.weight_quality). Neither: the options are unchanged
// (identity). Shared by --materializer / --weights and --quality-approval.
Result<void> select_weight_materializer(std::optional<WeightMaterializerId> id,
                                        const std::optional<std::string>& approval_path,
                                        ProgramPlanCompileOptions& options);
// `--weights q8_0|q4_0` → the ggml block materializer's id; InvalidArgument
// naming `option` for any other name.
Result<WeightMaterializerId> block_materializer_option(std::string_view option,
                                                       const std::string& name);
Result<CompileInputs> load_compile_inputs(const PlanSourceArgs& args);
Result<ProgramPlanCompilation> compile_plan(const CompileInputs& inputs);

}  // namespace ferrite::cli
