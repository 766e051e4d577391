// `ferrite explain`: what a plan does and why, from a plan file or straight
// from a program (compiled in memory with the same options as `compile`);
// for a model file, also whether it fits and the largest context that does.
#include <optional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/plan_explanation.h"
#include "cli/plan_report_html.h"
#include "cli/model_plan.h"
#include "cli/plan_sources.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/core/streamed_json.h"
#include "ferrite/format/atomic_file.h"
#include "ferrite/format/program_file.h"
#include "ferrite/plan/execution_plan.h"
#include "ferrite/plan/plan_verify.h"

namespace ferrite::cli {
namespace {

// --html FILE: the report, written whole or not at all.
Result<void> write_html_report(const ExplainArgs& args, const PlanExplanation& explanation,
                               const MemoryFit* fit) {
  if (args.html.empty()) return {};
  return write_file_atomically(args.html, render_html(explanation, fit));
}

// A plan file is {"payload":…,"plan_hash":…}: read once, its rows streamed,
// and its schema and hash checked (plan_verify.h); anything else is taken as
// a program file to compile (nullopt). HAZARD: the result refers into `text`.
Result<std::optional<StreamedJson>> read_if_plan_file(const std::string& path,
                                                      std::string& text) {
  FERRITE_ASSIGN_OR_RETURN(text, read_text_file(path, kMaxPlanFileBytes));
  std::vector<JsonArrayPattern> streamed(plan_streamed_arrays().begin(),
                                         plan_streamed_arrays().end());
  streamed.push_back(program_nodes_pattern());
  FERRITE_ASSIGN_OR_RETURN(StreamedJson document,
                           parse_strict_json_streamed(text, kMaxPlanFileBytes, streamed));
  if (!document.document().is_object() || !document.document().contains("payload")) {
    return std::optional<StreamedJson>();
  }
  FERRITE_RETURN_IF_ERROR(check_plan_wire(document));
  return std::optional<StreamedJson>(std::move(document));
}

// A model file: does it fit (before any weight is read), and — when it
// does — the plan it compiles to, as `ferrite compile` would write it minus
// the weights digest.
int explain_model(const ExplainArgs& args, std::ostream& out, std::ostream& err) {
  auto settings = model_settings(args.sources, args.model);
  if (!settings) return report_error(settings.error(), args.json, out, err);
  auto fit = model_memory_fit(args.path, *settings);
  if (!fit) return report_error(fit.error(), args.json, out, err);
  std::optional<PlanExplanation> explanation;
  if (!fit->fits && !args.html.empty()) {
    return report_error(
        make_error(ErrorCode::kInvalidArgument,
                   "--html: the model does not fit at context {} ({} needed, {} usable), so "
                   "there is no plan to draw; the largest context that fits is {}",
                   fit->context_length, human_bytes(fit->total_bytes),
                   human_bytes(fit->usable_bytes), fit->largest_fitting_context)
            .with_field("file", args.html)
            .value(),
        args.json, out, err);
  }
  if (fit->fits) {
    auto compiled = compile_model_plan(args.path, *settings, WeightsDigest::kSkip);
    if (!compiled) return report_error(compiled.error(), args.json, out, err);
    auto explained = explain_plan(compiled->plan().to_json());
    if (!explained) return report_error(explained.error(), args.json, out, err);
    explanation = std::move(*explained);
    if (auto written = write_html_report(args, *explanation, &*fit); !written) {
      return report_error(written.error(), args.json, out, err);
    }
  }
  std::optional<ServingFit> serving;
  if (args.parallel != 0) {
    // The plan `ferrite serve --parallel S` compiles: the sequence-slot form.
    ModelPlanSettings serving_settings = *settings;
    serving_settings.sequence_slots = args.parallel;
    auto served = model_memory_fit(args.path, serving_settings);
    if (!served) return report_error(served.error(), args.json, out, err);
    auto computed = serving_fit(*served, args.parallel, args.kv_tokens);
    if (!computed) return report_error(computed.error(), args.json, out, err);
    serving = *computed;
  }
  if (args.json) {
    nlohmann::json json = explanation ? to_json(*explanation) : nlohmann::json::object();
    json["memory_fit"] = to_json(*fit);
    if (serving) json["serving"] = to_json(*serving);
    out << json.dump(2) << "\n";
  } else {
    if (explanation) out << render_text(*explanation) << "\n";
    out << render_text(*fit);
    if (serving) out << render_text(*serving);
  }
  return kExitOk;
}

}  // namespace

int run_explain(const ExplainArgs& args, std::ostream& out, std::ostream& err) {
  if (args.kv_tokens && args.parallel == 0) {
    return report_error(make_error(ErrorCode::kInvalidArgument,
                                   "--kv-tokens sizes the serving pool: it needs --parallel")
                            .value(),
                        args.json, out, err);
  }
  if (!args.path.empty() && is_model_path(args.path)) return explain_model(args, out, err);
  if (args.parallel != 0 || args.kv_tokens) {
    return report_error(make_error(ErrorCode::kInvalidArgument,
                                   "--parallel and --kv-tokens are for model files (what "
                                   "`ferrite serve` holds)")
                            .value(),
                        args.json, out, err);
  }
  if (auto refused = refuse_model_options(args.model); !refused) {
    return report_error(refused.error(), args.json, out, err);
  }
  nlohmann::json compiled_wire;
  std::optional<StreamedJson> file_wire;
  PlanSourceArgs sources = args.sources;
  std::string text;
  if (!args.path.empty()) {
    auto plan_file = read_if_plan_file(args.path, text);
    if (!plan_file) return report_error(plan_file.error(), args.json, out, err);
    file_wire = std::move(*plan_file);
    if (!file_wire) sources.program_path = args.path;
  } else if (!sources.example) {
    return report_error(make_error(ErrorCode::kInvalidArgument,
                                   "explain needs a PLAN.json, a PROGRAM.json, a model file or "
                                   "--example")
                            .value(),
                        args.json, out, err);
  }
  if (!file_wire) {
    auto inputs = load_compile_inputs(sources);
    if (!inputs) return report_error(inputs.error(), args.json, out, err);
    auto compiled = compile_plan(*inputs);
    if (!compiled) return report_error(compiled.error(), args.json, out, err);
    compiled_wire = compiled->plan().to_json();
  }
  auto explanation = file_wire ? explain_plan(*file_wire) : explain_plan(compiled_wire);
  if (!explanation) return report_error(explanation.error(), args.json, out, err);
  if (auto written = write_html_report(args, *explanation, nullptr); !written) {
    return report_error(written.error(), args.json, out, err);
  }
  if (args.json) {
    out << to_json(*explanation).dump(2) << "\n";
  } else {
    out << render_text(*explanation);
  }
  return kExitOk;
}

}  // namespace ferrite::cli
