// `ferrite approve-weights`: measure what an approximate weight materializer
// does to a model's weights, and write the approval the compiler requires.
#include <algorithm>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_files.h"
#include "cli/plan_sources.h"
#include "cli/progress.h"
#include "cli/text_table.h"
#include "ferrite/format/atomic_file.h"
#include "ferrite/format/weight_quality_file.h"
#include "ferrite/materializers/ggml_block_materializer.h"

namespace ferrite::cli {

int run_approve_weights(const ApproveArgs& args, std::ostream& out, std::ostream& err) {
  auto id = block_materializer_option("--weights", args.weights);
  if (!id) return report_error(id.error(), args.json, out, err);
  auto model = open_model(args.model_path, std::nullopt, UINT64_MAX);
  if (!model) return report_error(model.error(), args.json, out, err);
  const PreparedModelFamily* family = &model->family;
  auto registry = default_weight_materializers();
  if (!registry) return report_error(registry.error(), args.json, out, err);
  const WeightMaterializer& materializer = *registry->find(*id);
  std::optional<ProgressBar> bar;
  bar.emplace(progress_stream(err), "measuring weights",
              weight_source_bytes(family->weight_schema()));
  const ProgressWeightSource weights(*model->checkpoint.weights, *bar);
  auto approval = measure_weight_quality(
      materializer, *family,
      [&](const WeightComponentSpec& c, std::span<std::byte> to) { return weights.fill(c, to); });
  bar.reset();  // erase the bar before the table
  if (!approval) return report_error(approval.error(), args.json, out, err);

  std::vector<WeightId> measured;
  for (const auto& c : approval->components) measured.push_back(c.component_id);
  const auto verdict = check_weight_quality_approval(
      *approval, materializer.descriptor(), approval->source_schema_fingerprint,
      approval->execution_schema_fingerprint, measured);
  const double bound = materializer.descriptor().quality_contract->max_relative_l2;
  if (verdict && !args.output_path.empty()) {
    if (auto written = write_file_atomically(args.output_path, weight_quality_file_text(*approval));
        !written) {
      return report_error(written.error(), args.json, out, err);
    }
  }
  if (args.json) {
    out << nlohmann::json{{"ok", verdict.has_value()},
                          {"approval", approval->to_json()},
                          {"max_relative_l2", quality_number_text(bound)},
                          {"refusal", verdict ? nlohmann::json(nullptr)
                                              : nlohmann::json(verdict.error().message())},
                          {"output", verdict && !args.output_path.empty()
                                         ? nlohmann::json(args.output_path)
                                         : nlohmann::json(nullptr)}}
               .dump(2)
        << "\n";
  } else {
    TextTable table({"WEIGHT COMPONENT", "VALUES", "MAX ABS ERROR", "RELATIVE L2", "WITHIN"});
    for (const auto& c : approval->components) {
      table.add_row({std::string(c.component_id.str()), std::to_string(c.values),
                     quality_number_text(c.max_abs_error), quality_number_text(c.relative_l2),
                     c.non_finite == 0 && c.relative_l2 <= bound ? "yes" : "NO"});
    }
    out << table.render();
    if (!approval->components.empty()) {
      const auto worst = std::max_element(
          approval->components.begin(), approval->components.end(),
          [](const auto& a, const auto& b) { return a.relative_l2 < b.relative_l2; });
      out << fmt::format("{} components approximated by {} {}: worst relative L2 {} ({}), "
                         "contract {}\n",
                         approval->components.size(), materializer.descriptor().id.str(),
                         materializer.descriptor().version.to_string(),
                         quality_number_text(worst->relative_l2), worst->component_id.str(),
                         quality_number_text(bound));
    } else {
      out << "no component of this model is approximated (nothing is an f32 matrix of whole "
             "blocks)\n";
    }
    if (verdict && !args.output_path.empty()) {
      out << fmt::format("approval written to {}\n", args.output_path);
    }
  }
  if (!verdict) {
    err << fmt::format("ferrite: error: {}; no approval written\n", verdict.error().message());
    return kExitRejected;
  }
  return kExitOk;
}

}  // namespace ferrite::cli
