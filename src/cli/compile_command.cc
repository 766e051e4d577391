// `ferrite compile`: program + target catalog + policy + options → plan file.
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/plan_sources.h"
#include "ferrite/format/atomic_file.h"
#include "ferrite/core/json_reader.h"

namespace ferrite::cli {

int run_compile(const CompileArgs& args, std::ostream& out, std::ostream& err) {
  auto inputs = load_compile_inputs(args.sources);
  if (!inputs) return report_error(inputs.error(), args.json, out, err);
  auto compiled = compile_plan(*inputs);
  if (!compiled) return report_error(compiled.error(), args.json, out, err);
  const ExecutionPlan& plan = compiled->plan;
  const std::string text = plan.canonical_text() + "\n";
  if (!args.output_path.empty()) {
    // A plan file must be readable by verify and explain, whose limits guard
    // against hostile files; refuse to write one they would reject.
    if (auto readable = parse_strict_json(text, kMaxPlanFileBytes); !readable) {
      return report_error(make_error(ErrorCode::kInvalidExecutionPlan,
                                     "the plan of {} nodes is too large for a plan file ({}); it "
                                     "can still be compiled and run in memory",
                                     plan.nodes().size(), readable.error().message())
                              .value(),
                          args.json, out, err);
    }
    if (auto written = write_file_atomically(args.output_path, text); !written) {
      return report_error(written.error(), args.json, out, err);
    }
  }
  if (args.json) {
    out << nlohmann::json{{"ok", true},
                          {"plan_id", plan.plan_id()},
                          {"plan_hash", plan.plan_hash()},
                          {"output", args.output_path.empty() ? nlohmann::json(nullptr)
                                                              : nlohmann::json(args.output_path)},
                          {"nodes", plan.nodes().size()},
                          {"bytes", text.size()}}
               .dump(2)
        << "\n";
  } else {
    out << plan.plan_id() << "\n";
    if (!args.output_path.empty()) {
      err << fmt::format("wrote {} ({} nodes, {} bytes)\n", args.output_path, plan.nodes().size(),
                         text.size());
    }
  }
  return kExitOk;
}

}  // namespace ferrite::cli
