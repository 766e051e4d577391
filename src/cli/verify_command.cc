// `ferrite verify`: accept a plan file only if the trusted program, catalog,
// policy and options rebuild it byte for byte.
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/plan_sources.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/materializers/ggml_block_materializer.h"
#include "ferrite/plan/execution_plan.h"
#include "ferrite/plan/plan_verify.h"

namespace ferrite::cli {

int run_verify(const VerifyArgs& args, std::ostream& out, std::ostream& err) {
  auto text = read_text_file(args.plan_path, kMaxPlanFileBytes);
  if (!text) return report_error(text.error(), args.json, out, err);
  auto inputs = load_compile_inputs(args.sources);
  if (!inputs) return report_error(inputs.error(), args.json, out, err);
  auto materializers = default_weight_materializers();
  if (!materializers) return report_error(materializers.error(), args.json, out, err);
  auto verified = verify_plan_json(*text, inputs->family, inputs->target.catalog, inputs->policy,
                                   inputs->target.estimators, *materializers, inputs->options);
  if (!verified) return report_error(verified.error(), args.json, out, err);
  const std::string& plan_id = *verified;
  if (args.json) {
    out << nlohmann::json{{"ok", true}, {"plan_id", plan_id}}.dump(2) << "\n";
  } else {
    out << fmt::format("ok: {} equals the trusted rebuild\n", plan_id);
  }
  return kExitOk;
}

}  // namespace ferrite::cli
