// `ferrite verify`: accept a plan file only if the trusted program, catalog,
// policy and options — or the model file and this machine — rebuild it byte
// for byte.
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_plan.h"
#include "cli/plan_sources.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/materializers/ggml_block_materializer.h"
#include "ferrite/plan/execution_plan.h"
#include "ferrite/plan/plan_verify.h"

namespace ferrite::cli {

namespace {

// A model file: the plan's run settings (and the options given) rebuilt on
// this machine (cli/model_plan.h rebuild_model_plan).
Result<std::string> verify_model_plan(const VerifyArgs& args) {
  FERRITE_ASSIGN_OR_RETURN(ModelPlanSettings settings, model_settings(args.sources, args.model));
  FERRITE_ASSIGN_OR_RETURN(ModelPlan model, rebuild_model_plan_file(
                                                args.plan_path, args.sources.program_path, settings));
  return model.plan().plan_id();
}

// A program file: rebuilt from the trusted program, catalog, policy and options.
Result<std::string> verify_program_plan(const VerifyArgs& args) {
  FERRITE_RETURN_IF_ERROR(refuse_model_options(args.model));
  FERRITE_ASSIGN_OR_RETURN(std::string text, read_text_file(args.plan_path, kMaxPlanFileBytes));
  FERRITE_ASSIGN_OR_RETURN(CompileInputs inputs, load_compile_inputs(args.sources));
  FERRITE_ASSIGN_OR_RETURN(WeightMaterializerRegistry materializers,
                           default_weight_materializers());
  return verify_plan_json(text, inputs.family, inputs.target.catalog, inputs.policy,
                          inputs.target.estimators, materializers, inputs.options);
}

}  // namespace

int run_verify(const VerifyArgs& args, std::ostream& out, std::ostream& err) {
  const bool model = !args.sources.example && is_model_path(args.sources.program_path);
  auto verified = model ? verify_model_plan(args) : verify_program_plan(args);
  if (!verified) return report_error(verified.error(), args.json, out, err);
  if (args.json) {
    out << nlohmann::json{{"ok", true}, {"plan_id", *verified}}.dump(2) << "\n";
  } else {
    out << fmt::format("ok: {} equals the trusted rebuild\n", *verified);
  }
  return kExitOk;
}

}  // namespace ferrite::cli
