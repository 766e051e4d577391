// `ferrite compile`: program + target catalog + policy + options → plan file,
// or a model file + run settings → the plan `ferrite run --plan` accepts.
#include <ostream>
#include <system_error>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_plan.h"
#include "cli/plan_sources.h"
#include "cli/process_exit.h"
#include "ferrite/format/atomic_file.h"
#include "ferrite/plan/plan_verify.h"
#include "ferrite/core/json_reader.h"

namespace ferrite::cli {

namespace {

// A program file with its catalog, policy and options; or a model file
// compiled as `ferrite run` compiles it (cli/model_plan.h), so that
// `run --plan` accepts the file.
Result<ProgramPlanCompilation> compile_source(const CompileArgs& args) {
  if (!args.sources.example && is_model_path(args.sources.program_path)) {
    FERRITE_ASSIGN_OR_RETURN(ModelPlanSettings settings, model_settings(args.sources, args.model));
    FERRITE_ASSIGN_OR_RETURN(ModelPlan model, compile_model_plan(args.sources.program_path,
                                                                 settings, WeightsDigest::kMeasure));
    return std::move(model.compiled);
  }
  FERRITE_RETURN_IF_ERROR(refuse_model_options(args.model));
  FERRITE_ASSIGN_OR_RETURN(CompileInputs inputs, load_compile_inputs(args.sources));
  auto compiled = compile_plan(inputs);
  leave_to_process_exit(std::move(inputs));
  return compiled;
}

}  // namespace

int run_compile(const CompileArgs& args, std::ostream& out, std::ostream& err) {
  auto compiled = compile_source(args);
  if (!compiled) return report_error(compiled.error(), args.json, out, err);
  const ExecutionPlan& plan = compiled->plan();
  // The file is the plan's canonical text and a newline (written in two
  // parts: the text may be tens of MB).
  const std::string& text = plan.canonical_text();
  const uint64_t file_bytes = text.size() + 1;
  if (!args.output_path.empty()) {
    // A plan file must be readable by verify and explain, whose limits guard
    // against hostile files; refuse to write one they would reject. The
    // newline is one of the file's bytes, so the text may have one fewer.
    // The check reads the text on a thread of its own while the file is
    // written; the file replaces the output only once the check has passed.
    Result<void> readable;
    auto check = [&] {
      readable = check_strict_json_streamed(text, kMaxPlanFileBytes - 1, plan_streamed_arrays());
    };
    std::thread checker;
    try {
      checker = std::thread(check);
    } catch (const std::system_error&) {  // no thread to be had: check here
      check();
    }
    auto too_large = [&] {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "the plan of {} nodes is too large for a plan file ({}); it can still be "
                        "compiled and run in memory",
                        plan.nodes().size(), readable.error().message())
          .value();
    };
    auto written = write_file_atomically(args.output_path, {text, "\n"}, [&]() -> Result<void> {
      if (checker.joinable()) checker.join();
      if (!readable) return make_error(too_large());
      return {};
    });
    if (checker.joinable()) checker.join();  // the write failed before its commit
    if (!readable) return report_error(too_large(), args.json, out, err);
    if (!written) return report_error(written.error(), args.json, out, err);
  }
  if (args.json) {
    out << nlohmann::json{{"ok", true},
                          {"plan_id", plan.plan_id()},
                          {"plan_hash", plan.plan_hash()},
                          {"output", args.output_path.empty() ? nlohmann::json(nullptr)
                                                              : nlohmann::json(args.output_path)},
                          {"nodes", plan.nodes().size()},
                          {"bytes", file_bytes}}
               .dump(2)
        << "\n";
  } else {
    out << plan.plan_id() << "\n";
    if (!args.output_path.empty()) {
      err << fmt::format("wrote {} ({} nodes, {} bytes)\n", args.output_path, plan.nodes().size(),
                         file_bytes);
    }
  }
  leave_to_process_exit(std::move(compiled));
  return kExitOk;
}

}  // namespace ferrite::cli
